// The alternative protobuf decoder measured against src/otlp/decode-protobuf.ts: protobufjs (the
// well-kept general decoder) with the OTLP trace messages, followed by the conversion to the
// model's SpanBatch that the receiver needs. Only the benchmark uses it.

import protobuf from 'protobufjs';
import type { AnyValue, Attribute, SpanBatch } from '../../src/model/spans.ts';
import { bytesToHex } from '../../src/otlp/ids.ts';

const anyValueFields = {
  oneofs: {
    value: {
      oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'],
    },
  },
  fields: {
    stringValue: { type: 'string', id: 1 },
    boolValue: { type: 'bool', id: 2 },
    intValue: { type: 'int64', id: 3 },
    doubleValue: { type: 'double', id: 4 },
    arrayValue: { type: 'ArrayValue', id: 5 },
    kvlistValue: { type: 'KeyValueList', id: 6 },
    bytesValue: { type: 'bytes', id: 7 },
  },
};

// opentelemetry/proto/{common,resource,trace,collector/trace}/v1, flattened into one namespace.
const root = protobuf.Root.fromJSON({
  nested: {
    otlp: {
      nested: {
        AnyValue: anyValueFields,
        ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
        KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
        InstrumentationScope: {
          fields: {
            name: { type: 'string', id: 1 },
            version: { type: 'string', id: 2 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 3 },
            droppedAttributesCount: { type: 'uint32', id: 4 },
          },
        },
        Resource: {
          fields: {
            attributes: { rule: 'repeated', type: 'KeyValue', id: 1 },
            droppedAttributesCount: { type: 'uint32', id: 2 },
          },
        },
        ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
        ResourceSpans: {
          fields: {
            resource: { type: 'Resource', id: 1 },
            scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        ScopeSpans: {
          fields: {
            scope: { type: 'InstrumentationScope', id: 1 },
            spans: { rule: 'repeated', type: 'Span', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        Span: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            traceState: { type: 'string', id: 3 },
            parentSpanId: { type: 'bytes', id: 4 },
            flags: { type: 'fixed32', id: 16 },
            name: { type: 'string', id: 5 },
            kind: { type: 'int32', id: 6 },
            startTimeUnixNano: { type: 'fixed64', id: 7 },
            endTimeUnixNano: { type: 'fixed64', id: 8 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
            droppedAttributesCount: { type: 'uint32', id: 10 },
            events: { rule: 'repeated', type: 'Event', id: 11 },
            droppedEventsCount: { type: 'uint32', id: 12 },
            links: { rule: 'repeated', type: 'Link', id: 13 },
            droppedLinksCount: { type: 'uint32', id: 14 },
            status: { type: 'Status', id: 15 },
          },
        },
        Event: {
          fields: {
            timeUnixNano: { type: 'fixed64', id: 1 },
            name: { type: 'string', id: 2 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 3 },
            droppedAttributesCount: { type: 'uint32', id: 4 },
          },
        },
        Link: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            traceState: { type: 'string', id: 3 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 4 },
            droppedAttributesCount: { type: 'uint32', id: 5 },
            flags: { type: 'fixed32', id: 6 },
          },
        },
        Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
      },
    },
  },
});

const RequestType = root.lookupType('otlp.ExportTraceServiceRequest');

type Long = { low: number; high: number; unsigned: boolean };
// The request as protobufjs decodes it (the generated-code-free reflection API leaves it untyped).
interface PbAnyValue {
  value?: string;
  stringValue: string;
  boolValue: boolean;
  intValue: Long | number;
  doubleValue: number;
  bytesValue: Uint8Array;
  arrayValue: { values?: PbAnyValue[] };
  kvlistValue: { values?: PbKeyValue[] };
}
interface PbKeyValue {
  key: string;
  value?: PbAnyValue;
}
interface PbScopeFields {
  attributes?: PbKeyValue[];
  droppedAttributesCount?: number;
}
interface PbSpan extends PbScopeFields {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  traceState?: string;
  flags?: number;
  name?: string;
  kind?: number;
  startTimeUnixNano?: Long | number;
  endTimeUnixNano?: Long | number;
  events?: (PbScopeFields & { timeUnixNano?: Long | number; name?: string })[];
  droppedEventsCount?: number;
  links?: (PbScopeFields & { traceId: Uint8Array; spanId: Uint8Array; traceState?: string; flags?: number })[];
  droppedLinksCount?: number;
  status?: { code?: number; message?: string };
}
interface PbRequest {
  resourceSpans?: {
    resource?: PbScopeFields;
    schemaUrl?: string;
    scopeSpans?: {
      scope?: PbScopeFields & { name?: string; version?: string };
      schemaUrl?: string;
      spans?: PbSpan[];
    }[];
  }[];
}

const toBigInt = (value: Long | number | undefined, signed: boolean): bigint => {
  if (value === undefined) return 0n;
  if (typeof value === 'number') return BigInt(value);
  const unsigned = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
  return signed ? BigInt.asIntN(64, unsigned) : unsigned;
};

function anyValue(value: PbAnyValue | undefined): AnyValue {
  if (!value || value.value === undefined) return { type: 'empty' };
  switch (value.value) {
    case 'stringValue':
      return { type: 'string', value: value.stringValue };
    case 'boolValue':
      return { type: 'bool', value: value.boolValue };
    case 'intValue':
      return { type: 'int', value: toBigInt(value.intValue, true) };
    case 'doubleValue':
      return { type: 'double', value: value.doubleValue };
    case 'bytesValue':
      return { type: 'bytes', value: new Uint8Array(value.bytesValue) };
    case 'arrayValue':
      return { type: 'array', value: (value.arrayValue.values ?? []).map(anyValue) };
    default:
      return { type: 'kvlist', value: attributes(value.kvlistValue.values) };
  }
}

function attributes(list: PbKeyValue[] | undefined): Attribute[] {
  return (list ?? []).map((kv) => ({ key: kv.key, value: anyValue(kv.value) }));
}

/** protobufjs decode + conversion to the model (id validation left out: it only favours this side). */
export function decodeWithProtobufjs(bytes: Uint8Array): SpanBatch {
  const request = RequestType.decode(bytes) as unknown as PbRequest;
  return {
    resourceSpans: (request.resourceSpans ?? []).map((rs) => ({
      resource: {
        attributes: attributes(rs.resource?.attributes),
        droppedAttributesCount: rs.resource?.droppedAttributesCount ?? 0,
      },
      schemaUrl: rs.schemaUrl ?? '',
      scopeSpans: (rs.scopeSpans ?? []).map((ss) => ({
        scope: {
          name: ss.scope?.name ?? '',
          version: ss.scope?.version ?? '',
          attributes: attributes(ss.scope?.attributes),
          droppedAttributesCount: ss.scope?.droppedAttributesCount ?? 0,
        },
        schemaUrl: ss.schemaUrl ?? '',
        spans: (ss.spans ?? []).map((s) => ({
          traceId: bytesToHex(s.traceId),
          spanId: bytesToHex(s.spanId),
          // An absent bytes field decodes to protobufjs's default, an empty array (not a Buffer).
          parentSpanId: s.parentSpanId?.length ? bytesToHex(s.parentSpanId) : '',
          traceState: s.traceState ?? '',
          flags: s.flags ?? 0,
          name: s.name ?? '',
          kind: s.kind ?? 0,
          startTimeUnixNano: toBigInt(s.startTimeUnixNano, false),
          endTimeUnixNano: toBigInt(s.endTimeUnixNano, false),
          attributes: attributes(s.attributes),
          droppedAttributesCount: s.droppedAttributesCount ?? 0,
          events: (s.events ?? []).map((e) => ({
            timeUnixNano: toBigInt(e.timeUnixNano, false),
            name: e.name ?? '',
            attributes: attributes(e.attributes),
            droppedAttributesCount: e.droppedAttributesCount ?? 0,
          })),
          droppedEventsCount: s.droppedEventsCount ?? 0,
          links: (s.links ?? []).map((l) => ({
            traceId: bytesToHex(l.traceId),
            spanId: bytesToHex(l.spanId),
            traceState: l.traceState ?? '',
            attributes: attributes(l.attributes),
            droppedAttributesCount: l.droppedAttributesCount ?? 0,
            flags: l.flags ?? 0,
          })),
          droppedLinksCount: s.droppedLinksCount ?? 0,
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
        })),
      })),
    })),
  };
}
