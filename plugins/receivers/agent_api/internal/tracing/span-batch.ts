// Finished SDK spans (`ReadableSpan`) as the pipeline's `spans` data (src/model/spans.ts): one
// resource per run, one scope per instrumentation scope (the run tracer's first), OTLP numbering
// for span kinds and status codes, and integers as OTLP ints.

import type { AttributeValue, Attributes, HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { AnyValue, Attribute, ScopeSpans, Span, SpanBatch } from 'tracepipe/plugin';

export interface BatchResource {
  readonly serviceName: string;
}

/** `spans` as one batch; spans of `firstScope` come first, the others by scope in end order. */
export function toSpanBatch(spans: readonly ReadableSpan[], resource: BatchResource, firstScope: string): SpanBatch {
  const scopes = new Map<string, { name: string; version: string; spans: Span[] }>();
  scopes.set(scopeKey(firstScope, ''), { name: firstScope, version: '', spans: [] });
  for (const span of spans) {
    const { name, version = '' } = span.instrumentationScope;
    const key = scopeKey(name, version);
    let scope = scopes.get(key);
    if (!scope) scopes.set(key, (scope = { name, version, spans: [] }));
    scope.spans.push(toModelSpan(span));
  }
  const scopeSpans: ScopeSpans[] = [...scopes.values()]
    .filter((scope) => scope.spans.length > 0)
    .map((scope) => ({
      scope: { name: scope.name, version: scope.version, attributes: [], droppedAttributesCount: 0 },
      schemaUrl: '',
      spans: scope.spans,
    }));
  return {
    resourceSpans: [
      {
        resource: {
          attributes: toAttributes({ 'service.name': resource.serviceName, 'telemetry.sdk.name': 'tracepipe' }),
          droppedAttributesCount: 0,
        },
        schemaUrl: '',
        scopeSpans,
      },
    ],
  };
}

function scopeKey(name: string, version: string): string {
  return `${name}\u0000${version}`;
}

function toModelSpan(span: ReadableSpan): Span {
  const context = span.spanContext();
  const start = toUnixNano(span.startTime);
  const end = toUnixNano(span.endTime);
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? '',
    traceState: context.traceState?.serialize() ?? '',
    flags: context.traceFlags,
    name: span.name,
    // The API numbers kinds from INTERNAL = 0; OTLP from UNSPECIFIED = 0, INTERNAL = 1.
    kind: span.kind + 1,
    startTimeUnixNano: start,
    endTimeUnixNano: end < start ? start : end,
    attributes: toAttributes(span.attributes),
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events.map((event) => ({
      timeUnixNano: toUnixNano(event.time),
      name: event.name,
      attributes: toAttributes(event.attributes ?? {}),
      droppedAttributesCount: event.droppedAttributesCount ?? 0,
    })),
    droppedEventsCount: span.droppedEventsCount,
    links: span.links.map((link) => ({
      traceId: link.context.traceId,
      spanId: link.context.spanId,
      traceState: link.context.traceState?.serialize() ?? '',
      attributes: toAttributes(link.attributes ?? {}),
      droppedAttributesCount: link.droppedAttributesCount ?? 0,
      flags: link.context.traceFlags,
    })),
    droppedLinksCount: span.droppedLinksCount,
    // The API's status codes (UNSET 0, OK 1, ERROR 2) are OTLP's.
    status: { code: span.status.code, message: span.status.message ?? '' },
  };
}

function toUnixNano([seconds, nanos]: HrTime): bigint {
  return BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
}

function toAttributes(attributes: Attributes): Attribute[] {
  const out: Attribute[] = [];
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== undefined) out.push({ key, value: toAnyValue(value) });
  }
  return out;
}

function toAnyValue(value: AttributeValue | null | undefined): AnyValue {
  if (value === null || value === undefined) return { type: 'empty' };
  if (Array.isArray(value)) return { type: 'array', value: value.map((item) => toAnyValue(item)) };
  switch (typeof value) {
    case 'string':
      return { type: 'string', value };
    case 'boolean':
      return { type: 'bool', value };
    case 'number':
      // JavaScript has one number type; an integral value is an OTLP int, as the OTLP exporters
      // of the JS SDK encode it.
      return Number.isInteger(value) ? { type: 'int', value: BigInt(value) } : { type: 'double', value };
    default:
      return { type: 'string', value: String(value) };
  }
}
