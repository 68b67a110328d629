// The example `redact` processor: replaces attribute values that match configured patterns (API
// keys, e-mail addresses, ...) before spans leave the process. It rewrites the batch it is given,
// so it declares `mutatesData` and a fan-out hands it its own copy.

import type { ComponentSettings, Consumer, Processor } from '../../src/pipeline/component.ts';
import type { RequestContext } from '../../src/pipeline/data.ts';
import type { AnyValue, Attribute, SpanBatch } from '../../src/model/spans.ts';
import type { RedactConfig } from './config.ts';

export class RedactProcessor implements Processor<'spans'> {
  readonly mutatesData = true;
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
