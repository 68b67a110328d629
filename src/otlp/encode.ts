// Encodes the model's SpanBatch as an OTLP ExportTraceServiceRequest, in protobuf or in the
// OTLP/HTTP JSON form (hex ids, 64-bit integers as decimal strings, enums as integers), for the
// `otlp` exporter and for tests. Fields holding their proto3 default are left out, as protobuf does.

import type { AnyValue, Attribute, Span, SpanBatch, SpanEvent, SpanLink } from '../model/spans.ts';
import { hexToBytes } from './ids.ts';
import { ProtoWriter } from './protobuf-writer.ts';

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_FIXED32 = 5;

export function encodeTraceRequestProtobuf(batch: SpanBatch): Uint8Array {
  const w = new ProtoWriter();
  for (const resourceSpans of batch.resourceSpans) {
    w.fork(1);
    const { resource } = resourceSpans;
    w.fork(1);
    writeAttributes(w, 1, resource.attributes);
    writeUint32(w, 2, resource.droppedAttributesCount);
    w.ldelim();
    for (const scopeSpans of resourceSpans.scopeSpans) {
      w.fork(2);
      const { scope } = scopeSpans;
      w.fork(1);
      writeString(w, 1, scope.name);
      writeString(w, 2, scope.version);
      writeAttributes(w, 3, scope.attributes);
      writeUint32(w, 4, scope.droppedAttributesCount);
      w.ldelim();
      for (const span of scopeSpans.spans) writeSpan(w, span);
      writeString(w, 3, scopeSpans.schemaUrl);
      w.ldelim();
    }
    writeString(w, 3, resourceSpans.schemaUrl);
    w.ldelim();
  }
  return w.finish();
}

function writeSpan(w: ProtoWriter, span: Span): void {
  w.fork(2);
  writeId(w, 1, span.traceId);
  writeId(w, 2, span.spanId);
  writeString(w, 3, span.traceState);
  writeId(w, 4, span.parentSpanId);
  writeString(w, 5, span.name);
  if (span.kind !== 0) w.tag(6, WIRE_VARINT).int32(span.kind);
  if (span.startTimeUnixNano !== 0n) w.tag(7, WIRE_FIXED64).fixed64(span.startTimeUnixNano);
  if (span.endTimeUnixNano !== 0n) w.tag(8, WIRE_FIXED64).fixed64(span.endTimeUnixNano);
  writeAttributes(w, 9, span.attributes);
  writeUint32(w, 10, span.droppedAttributesCount);
  for (const event of span.events) writeEvent(w, event);
  writeUint32(w, 12, span.droppedEventsCount);
  for (const link of span.links) writeLink(w, link);
  writeUint32(w, 14, span.droppedLinksCount);
  if (span.status.code !== 0 || span.status.message !== '') {
    w.fork(15);
    writeString(w, 2, span.status.message);
    if (span.status.code !== 0) w.tag(3, WIRE_VARINT).int32(span.status.code);
    w.ldelim();
  }
  if (span.flags !== 0) w.tag(16, WIRE_FIXED32).fixed32(span.flags);
  w.ldelim();
}

function writeEvent(w: ProtoWriter, event: SpanEvent): void {
  w.fork(11);
  if (event.timeUnixNano !== 0n) w.tag(1, WIRE_FIXED64).fixed64(event.timeUnixNano);
  writeString(w, 2, event.name);
  writeAttributes(w, 3, event.attributes);
  writeUint32(w, 4, event.droppedAttributesCount);
  w.ldelim();
}

function writeLink(w: ProtoWriter, link: SpanLink): void {
  w.fork(13);
  writeId(w, 1, link.traceId);
  writeId(w, 2, link.spanId);
  writeString(w, 3, link.traceState);
  writeAttributes(w, 4, link.attributes);
  writeUint32(w, 5, link.droppedAttributesCount);
  if (link.flags !== 0) w.tag(6, WIRE_FIXED32).fixed32(link.flags);
  w.ldelim();
}

function writeAttributes(w: ProtoWriter, field: number, attributes: readonly Attribute[]): void {
  for (const attribute of attributes) writeKeyValue(w, field, attribute);
}

function writeKeyValue(w: ProtoWriter, field: number, attribute: Attribute): void {
  w.fork(field);
  writeString(w, 1, attribute.key);
  w.fork(2);
  writeAnyValueBody(w, attribute.value);
  w.ldelim();
  w.ldelim();
}

/** The fields of an AnyValue message (its oneof member), without the enclosing length. */
function writeAnyValueBody(w: ProtoWriter, value: AnyValue): void {
  switch (value.type) {
    case 'string':
      w.tag(1, 2).string(value.value);
      return;
    case 'bool':
      w.tag(2, WIRE_VARINT).varint32(value.value ? 1 : 0);
      return;
    case 'int':
      w.tag(3, WIRE_VARINT).varint64(value.value);
      return;
    case 'double':
      w.tag(4, WIRE_FIXED64).double(value.value);
      return;
    case 'array':
      w.fork(5);
      for (const item of value.value) {
        w.fork(1);
        writeAnyValueBody(w, item);
        w.ldelim();
      }
      w.ldelim();
      return;
    case 'kvlist':
      w.fork(6);
      writeAttributes(w, 1, value.value);
      w.ldelim();
      return;
    case 'bytes':
      w.tag(7, 2).bytes(value.value);
      return;
    case 'empty':
      return;
  }
}

function writeString(w: ProtoWriter, field: number, value: string): void {
  if (value !== '') w.tag(field, 2).string(value);
}

function writeUint32(w: ProtoWriter, field: number, value: number): void {
  if (value !== 0) w.tag(field, WIRE_VARINT).varint32(value);
}

function writeId(w: ProtoWriter, field: number, hex: string): void {
  if (hex !== '') w.tag(field, 2).bytes(hexToBytes(hex));
}

// --- JSON ---

/** The OTLP/HTTP JSON form of a batch, ready for JSON.stringify. */
export function encodeTraceRequestJson(batch: SpanBatch): object {
  return {
    resourceSpans: batch.resourceSpans.map((resourceSpans) => ({
      resource: {
        attributes: resourceSpans.resource.attributes.map(attributeJson),
        droppedAttributesCount: resourceSpans.resource.droppedAttributesCount,
      },
      scopeSpans: resourceSpans.scopeSpans.map((scopeSpans) => ({
        scope: {
          name: scopeSpans.scope.name,
          version: scopeSpans.scope.version,
          attributes: scopeSpans.scope.attributes.map(attributeJson),
          droppedAttributesCount: scopeSpans.scope.droppedAttributesCount,
        },
        spans: scopeSpans.spans.map(spanJson),
        schemaUrl: scopeSpans.schemaUrl,
      })),
      schemaUrl: resourceSpans.schemaUrl,
    })),
  };
}

function spanJson(span: Span): object {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId !== '' ? { parentSpanId: span.parentSpanId } : {}),
    traceState: span.traceState,
    flags: span.flags,
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: span.startTimeUnixNano.toString(),
    endTimeUnixNano: span.endTimeUnixNano.toString(),
    attributes: span.attributes.map(attributeJson),
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events.map((event) => ({
      timeUnixNano: event.timeUnixNano.toString(),
      name: event.name,
      attributes: event.attributes.map(attributeJson),
      droppedAttributesCount: event.droppedAttributesCount,
    })),
    droppedEventsCount: span.droppedEventsCount,
    links: span.links.map((link) => ({
      traceId: link.traceId,
      spanId: link.spanId,
      traceState: link.traceState,
      attributes: link.attributes.map(attributeJson),
      droppedAttributesCount: link.droppedAttributesCount,
      flags: link.flags,
    })),
    droppedLinksCount: span.droppedLinksCount,
    status: { code: span.status.code, message: span.status.message },
  };
}

function attributeJson(attribute: Attribute): object {
  return { key: attribute.key, value: anyValueJson(attribute.value) };
}

function anyValueJson(value: AnyValue): object {
  switch (value.type) {
    case 'string':
      return { stringValue: value.value };
    case 'bool':
      return { boolValue: value.value };
    case 'int':
      return { intValue: value.value.toString() };
    case 'double':
      // JSON has no NaN, Infinity or -0; protobuf's JSON mapping writes them as strings.
      if (Object.is(value.value, -0)) return { doubleValue: '-0' };
      return { doubleValue: Number.isFinite(value.value) ? value.value : String(value.value) };
    case 'bytes':
      return {
        bytesValue: Buffer.from(value.value.buffer, value.value.byteOffset, value.value.byteLength).toString('base64'),
      };
    case 'array':
      return { arrayValue: { values: value.value.map(anyValueJson) } };
    case 'kvlist':
      return { kvlistValue: { values: value.value.map(attributeJson) } };
    case 'empty':
      return {};
  }
}
