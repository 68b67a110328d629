// The example `redact` processor: replaces attribute values that match configured patterns (API
// keys, e-mail addresses, ...) before spans leave the process.
//
// It never writes to the batch it is given: it builds a new batch, copying the path down to every
// attribute list it rewrites and sharing everything else (resources, scopes, links, values that
// need no change). So it declares `mutatesData = false`, and a fan-out hands it the batch the other
// consumers read instead of deep-copying it first. (A processor that edits the batch in place
// instead must declare `true`, and then pays for that copy whenever its pipeline shares the batch.)

import type {
  AnyValue,
  Attribute,
  ComponentSettings,
  Consumer,
  Processor,
  RequestContext,
  SpanBatch,
} from 'tracepipe/plugin';
import type { RedactConfig } from './config.ts';

export class RedactProcessor implements Processor<'spans'> {
  readonly mutatesData = false;
  private readonly patterns: RegExp[];
  private readonly keys: Set<string>;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: RedactConfig,
    private readonly next: Consumer<'spans'>,
  ) {
    this.patterns = config.patterns.map((pattern) => new RegExp(pattern, 'g'));
    this.keys = new Set(config.keys);
  }

  async start(): Promise<void> {}

  async shutdown(): Promise<void> {}

  async consume(batch: SpanBatch, context: RequestContext): Promise<void> {
    const redacted: SpanBatch = {
      resourceSpans: batch.resourceSpans.map((resourceSpans) => ({
        ...resourceSpans,
        scopeSpans: resourceSpans.scopeSpans.map((scopeSpans) => ({
          ...scopeSpans,
          spans: scopeSpans.spans.map((span) => ({
            ...span,
            attributes: this.redactAttributes(span.attributes),
            events: this.config.include_events
              ? span.events.map((event) => ({ ...event, attributes: this.redactAttributes(event.attributes) }))
              : span.events,
          })),
        })),
      })),
    };
    await this.next.consume(redacted, context);
  }

  private redactAttributes(attributes: readonly Attribute[]): Attribute[] {
    return attributes.map((attribute) => ({
      key: attribute.key,
      value: this.keys.has(attribute.key)
        ? { type: 'string', value: this.config.replacement }
        : this.redactValue(attribute.value),
    }));
  }

  private redactValue(value: AnyValue): AnyValue {
    switch (value.type) {
      case 'string': {
        let text = value.value;
        for (const pattern of this.patterns) text = text.replace(pattern, this.config.replacement);
        return text === value.value ? value : { type: 'string', value: text };
      }
      case 'array':
        return { type: 'array', value: value.value.map((item) => this.redactValue(item)) };
      case 'kvlist':
        return { type: 'kvlist', value: this.redactAttributes(value.value) };
      default:
        return value;
    }
  }
}
