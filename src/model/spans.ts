// The in-memory shape of OpenTelemetry trace data as it flows through a `spans` pipeline.
//
// It mirrors OTLP's ExportTraceServiceRequest closely enough that it can be re-encoded losslessly
// (the `otlp` exporter does), but it is decoded once into plain JS values that processors can read
// cheaply: ids are lowercase hex strings (usable as map keys), timestamps are exact `bigint`
// nanoseconds (they exceed 2^53), and 64-bit integer attributes are `bigint` for the same reason.

/** One OTLP AnyValue, tagged by kind so that int vs. double vs. string stays distinguishable. */
export type AnyValue =
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'int'; readonly value: bigint }
  | { readonly type: 'double'; readonly value: number }
  | { readonly type: 'bytes'; readonly value: Uint8Array }
  | { readonly type: 'array'; readonly value: readonly AnyValue[] }
  | { readonly type: 'kvlist'; readonly value: readonly Attribute[] }
  | { readonly type: 'empty' };

export interface Attribute {
  readonly key: string;
  readonly value: AnyValue;
}

/** OTLP span kinds, numbered as in the protocol (`SPAN_KIND_INTERNAL` = 1, ...). */
export const SpanKind = {
  UNSPECIFIED: 0,
  INTERNAL: 1,
  SERVER: 2,
  CLIENT: 3,
  PRODUCER: 4,
  CONSUMER: 5,
} as const;

/** OTLP status codes (`STATUS_CODE_UNSET` = 0, `OK` = 1, `ERROR` = 2). */
export const StatusCode = { UNSET: 0, OK: 1, ERROR: 2 } as const;

export interface SpanEvent {
  readonly timeUnixNano: bigint;
  readonly name: string;
  readonly attributes: readonly Attribute[];
  readonly droppedAttributesCount: number;
}

export interface SpanLink {
  /** Lowercase hex. */
  readonly traceId: string;
  /** Lowercase hex. */
  readonly spanId: string;
  readonly traceState: string;
  readonly attributes: readonly Attribute[];
  readonly droppedAttributesCount: number;
  readonly flags: number;
}

export interface SpanStatus {
  readonly code: number;
  readonly message: string;
}

export interface Span {
  /** Lowercase hex; 32 characters for a valid OTLP trace id. */
  readonly traceId: string;
  /** Lowercase hex; 16 characters for a valid OTLP span id. */
  readonly spanId: string;
  /** Lowercase hex, or "" for a root span. */
  readonly parentSpanId: string;
  readonly traceState: string;
  readonly flags: number;
  readonly name: string;
  readonly kind: number;
  readonly startTimeUnixNano: bigint;
  readonly endTimeUnixNano: bigint;
  readonly attributes: readonly Attribute[];
  readonly droppedAttributesCount: number;
  readonly events: readonly SpanEvent[];
  readonly droppedEventsCount: number;
  readonly links: readonly SpanLink[];
  readonly droppedLinksCount: number;
  readonly status: SpanStatus;
}

export interface InstrumentationScope {
  readonly name: string;
  readonly version: string;
  readonly attributes: readonly Attribute[];
  readonly droppedAttributesCount: number;
}

export interface ScopeSpans {
  readonly scope: InstrumentationScope;
  readonly schemaUrl: string;
  readonly spans: readonly Span[];
}

export interface Resource {
  readonly attributes: readonly Attribute[];
  readonly droppedAttributesCount: number;
}

export interface ResourceSpans {
  readonly resource: Resource;
  readonly schemaUrl: string;
  readonly scopeSpans: readonly ScopeSpans[];
}

/** The payload of a `spans` pipeline: one decoded export request (or a part of one). */
export interface SpanBatch {
  readonly resourceSpans: readonly ResourceSpans[];
}

/** Number of spans in a batch: the unit that `spans` component metrics count. */
export function countSpans(batch: SpanBatch): number {
  let count = 0;
  for (const resourceSpans of batch.resourceSpans) {
    for (const scopeSpans of resourceSpans.scopeSpans) count += scopeSpans.spans.length;
  }
  return count;
}

/** Finds an attribute by key (the last one wins, as OTLP decoders do for duplicate keys). */
export function findAttribute(attributes: readonly Attribute[], key: string): AnyValue | undefined {
  for (let i = attributes.length - 1; i >= 0; i--) {
    const attribute = attributes[i]!;
    if (attribute.key === key) return attribute.value;
  }
  return undefined;
}
