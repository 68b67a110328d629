// Reads the hand-written OTLP/JSON fixtures of this plugin's tests into the span model. Test-only
// and deliberately small: hex ids (as the OTLP JSON encoding specifies), the attribute value kinds,
// events and status; the receiver's own decoder is the one that faces real clients.

import type { AnyValue, Attribute, ResourceSpans, Span, SpanBatch } from 'tracepipe/plugin';

// The OTLP/JSON request as the fixtures write it (every field optional, as the encoding allows).
interface JsonAnyValue {
  stringValue?: unknown;
  boolValue?: unknown;
  intValue?: string | number;
  doubleValue?: unknown;
  bytesValue?: unknown;
  arrayValue?: { values?: JsonAnyValue[] };
  kvlistValue?: { values?: JsonKeyValue[] };
}
interface JsonKeyValue {
  key: unknown;
  value?: JsonAnyValue;
}
interface JsonSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  traceState?: string;
  flags?: number;
  name?: string;
  kind?: unknown;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: JsonKeyValue[];
  droppedAttributesCount?: number;
  events?: { timeUnixNano?: string | number; name?: string; attributes?: JsonKeyValue[] }[];
  status?: { code?: unknown; message?: string };
}
export interface OtlpJsonRequest {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    schemaUrl?: string;
    scopeSpans?: {
      scope?: { name?: string; version?: string };
      schemaUrl?: string;
      spans?: JsonSpan[];
    }[];
  }[];
}

export function anyValueFromJson(value: JsonAnyValue | undefined): AnyValue {
  if (!value) return { type: 'empty' };
  if ('stringValue' in value) return { type: 'string', value: String(value.stringValue) };
  if ('boolValue' in value) return { type: 'bool', value: Boolean(value.boolValue) };
  if ('intValue' in value) return { type: 'int', value: BigInt(value.intValue!) };
  if ('doubleValue' in value) return { type: 'double', value: Number(value.doubleValue) };
  if ('bytesValue' in value)
    return { type: 'bytes', value: new Uint8Array(Buffer.from(String(value.bytesValue), 'base64')) };
  if ('arrayValue' in value) return { type: 'array', value: (value.arrayValue?.values ?? []).map(anyValueFromJson) };
  if ('kvlistValue' in value) return { type: 'kvlist', value: attributesFromJson(value.kvlistValue?.values) };
  return { type: 'empty' };
}

export function attributesFromJson(attributes: JsonKeyValue[] | undefined): Attribute[] {
  return (attributes ?? []).map((attribute) => ({
    key: String(attribute.key),
    value: anyValueFromJson(attribute.value),
  }));
}

function spanFromJson(span: JsonSpan): Span {
  return {
    traceId: String(span.traceId ?? '').toLowerCase(),
    spanId: String(span.spanId ?? '').toLowerCase(),
    parentSpanId: String(span.parentSpanId ?? '').toLowerCase(),
    traceState: span.traceState ?? '',
    flags: span.flags ?? 0,
    name: span.name ?? '',
    kind: typeof span.kind === 'number' ? span.kind : 1,
    startTimeUnixNano: BigInt(span.startTimeUnixNano ?? 0),
    endTimeUnixNano: BigInt(span.endTimeUnixNano ?? 0),
    attributes: attributesFromJson(span.attributes),
    droppedAttributesCount: span.droppedAttributesCount ?? 0,
    events: (span.events ?? []).map((event) => ({
      timeUnixNano: BigInt(event.timeUnixNano ?? 0),
      name: event.name ?? '',
      attributes: attributesFromJson(event.attributes),
      droppedAttributesCount: 0,
    })),
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: { code: statusCode(span.status?.code), message: span.status?.message ?? '' },
  };
}

function statusCode(code: unknown): number {
  if (code === 'STATUS_CODE_ERROR' || code === 2) return 2;
  if (code === 'STATUS_CODE_OK' || code === 1) return 1;
  return 0;
}

export function spanBatchFromJson(request: OtlpJsonRequest): SpanBatch {
  return {
    resourceSpans: (request.resourceSpans ?? []).map((resourceSpans): ResourceSpans => ({
      resource: { attributes: attributesFromJson(resourceSpans.resource?.attributes), droppedAttributesCount: 0 },
      schemaUrl: resourceSpans.schemaUrl ?? '',
      scopeSpans: (resourceSpans.scopeSpans ?? []).map((scopeSpans) => ({
        scope: {
          name: scopeSpans.scope?.name ?? '',
          version: scopeSpans.scope?.version ?? '',
          attributes: [],
          droppedAttributesCount: 0,
        },
        schemaUrl: scopeSpans.schemaUrl ?? '',
        spans: (scopeSpans.spans ?? []).map(spanFromJson),
      })),
    })),
  };
}
