// The wire format: one span per line, a flat JSON object, turned into the pipeline's span batch.
//
//   {"trace_id":"<32 hex>","span_id":"<16 hex>","parent_span_id":"<16 hex>","name":"chat",
//    "start_time_unix_nano":"1700000000000000000","end_time_unix_nano":"1700000000500000000",
//    "attributes":{"gen_ai.system":"openai","gen_ai.usage.input_tokens":12},"status":"error"}
//
// Decoding depends on nothing but the body and the service name the journal keeps with it: a
// replayed request must become the same batch it was when it was acknowledged.

import type { AnyValue, Attribute, Span, SpanBatch } from 'tracepipe/plugin';
import { SpanKind, StatusCode } from 'tracepipe/plugin';
import { InvalidSpansError } from './errors.ts';

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
/** Nanoseconds since the epoch, as a decimal string (exact) or a safe integer. */
const NANOS = /^\d{1,20}$/;

/** Decodes an NDJSON body into one batch under the resource `service.name`; blank lines are skipped. */
export function decodeSpans(body: Buffer, serviceName: string): SpanBatch {
  const spans: Span[] = [];
  body
    .toString('utf8')
    .split('\n')
    .forEach((text, index) => {
      if (text.trim() !== '') spans.push(decodeLine(text, index + 1));
    });
  return {
    resourceSpans: [
      {
        resource: { attributes: [stringAttribute('service.name', serviceName)], droppedAttributesCount: 0 },
        schemaUrl: '',
        scopeSpans: [
          {
            scope: { name: 'tracepipe-receiver-ndjson', version: '', attributes: [], droppedAttributesCount: 0 },
            schemaUrl: '',
            spans,
          },
        ],
      },
    ],
  };
}

function decodeLine(text: string, line: number): Span {
  const invalid = (problem: string) => new InvalidSpansError([`line ${line}: ${problem}`]);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid(`not JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('expected a JSON object');
  const fields = value as Record<string, unknown>;
  const hex = (key: string, pattern: RegExp, what: string): string => {
    const field = fields[key];
    if (typeof field !== 'string' || !pattern.test(field)) throw invalid(`${key} must be ${what}`);
    return field;
  };
  const nanos = (key: string): bigint => {
    const field = fields[key];
    if ((typeof field === 'string' && NANOS.test(field)) || (Number.isSafeInteger(field) && (field as number) >= 0))
      return BigInt(field as string | number);
    throw invalid(`${key} must be nanoseconds since the epoch (a decimal string or a non-negative integer)`);
  };
  const traceId = hex('trace_id', TRACE_ID, '32 lowercase hex digits');
  const spanId = hex('span_id', SPAN_ID, '16 lowercase hex digits');
  const parentSpanId =
    fields.parent_span_id === undefined ? '' : hex('parent_span_id', SPAN_ID, '16 lowercase hex digits');
  if (typeof fields.name !== 'string' || fields.name === '') throw invalid('name must be a non-empty string');
  const startTimeUnixNano = nanos('start_time_unix_nano');
  const endTimeUnixNano = nanos('end_time_unix_nano');
  if (endTimeUnixNano < startTimeUnixNano) throw invalid('end_time_unix_nano is before start_time_unix_nano');
  if (fields.status !== undefined && fields.status !== 'ok' && fields.status !== 'error')
    throw invalid('status must be "ok" or "error"');
  return {
    traceId,
    spanId,
    parentSpanId,
    traceState: '',
    flags: 0,
    name: fields.name,
    kind: SpanKind.INTERNAL,
    startTimeUnixNano,
    endTimeUnixNano,
    attributes: decodeAttributes(fields.attributes, invalid),
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: {
      code: fields.status === 'ok' ? StatusCode.OK : fields.status === 'error' ? StatusCode.ERROR : StatusCode.UNSET,
      message: '',
    },
  };
}

/** `{"key": value}` with string, boolean or number values; integers stay integers. */
function decodeAttributes(value: unknown, invalid: (problem: string) => Error): Attribute[] {
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid('attributes must be an object of strings, numbers and booleans');
  return Object.entries(value).map(([key, item]) => {
    let attribute: AnyValue;
    if (typeof item === 'string') attribute = { type: 'string', value: item };
    else if (typeof item === 'boolean') attribute = { type: 'bool', value: item };
    else if (typeof item === 'number' && Number.isSafeInteger(item)) attribute = { type: 'int', value: BigInt(item) };
    else if (typeof item === 'number' && Number.isFinite(item)) attribute = { type: 'double', value: item };
    else throw invalid(`attributes.${key} must be a string, a finite number or a boolean`);
    return { key, value: attribute };
  });
}

function stringAttribute(key: string, value: string): Attribute {
  return { key, value: { type: 'string', value } };
}
