// Decodes an OTLP/HTTP JSON ExportTraceServiceRequest into the model's SpanBatch.
//
// Accepts both what OpenTelemetry SDK exporters send (the OTLP/HTTP JSON rules: lowerCamelCase
// names, hex ids, enums as integers, 64-bit integers as decimal strings) and what hand-written
// JSON often holds (base64 ids, enum names), plus the rest of protobuf's JSON mapping: proto field names
// (`resource_spans`), enum names or integers, 64-bit integers as strings or numbers, `null` for a
// default value. Unknown fields are ignored. Wrong types are malformed input and name their path.

import type {
  AnyValue,
  Attribute,
  InstrumentationScope,
  Resource,
  ResourceSpans,
  ScopeSpans,
  Span,
  SpanEvent,
  SpanLink,
  SpanStatus,
} from '../model/spans.ts';
import type { DecodedTraceRequest } from './decoded.ts';
import { MAX_VALUE_DEPTH, SpanRejections } from './decoded.ts';
import { OtlpDecodeError, rethrowWithin } from './errors.ts';
import { SPAN_ID_BYTES, TRACE_ID_BYTES, describeBadJsonId, jsonIdToHex } from './ids.ts';
import { utf8Text } from '../http/utf8-text.ts';

type JsonObject = Record<string, unknown>;

const SPAN_KINDS: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
const STATUS_CODES: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const DECIMAL = /^-?\d+$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Names of the 64-bit fields, with the closing quote: what precedes their value. */
const INT64_FIELD_SUFFIXES = ['UnixNano"', 'unix_nano"', 'intValue"', 'int_value"'];

/**
 * Quotes 64-bit fields (timestamps, `intValue`) written as bare JSON numbers of 16 or more
 * digits. JSON.parse would round them to doubles — `1747675155185223936` becomes `…224000`, a
 * 64 ns error — whereas a quoted number is read exactly.
 * Written with indexOf rather than one regex over the body: the regex halved JSON decoding
 * throughput (2 863 → 1 661 req/s in bench/ingest/decode.ts); this costs a few percent.
 * Inside a JSON string a field name's closing quote is escaped, so string contents never match.
 */
export function quoteBareInt64(text: string): string {
  let insertAt: number[] | undefined;
  for (const suffix of INT64_FIELD_SUFFIXES) {
    for (let at = text.indexOf(suffix); at >= 0; at = text.indexOf(suffix, at + suffix.length)) {
      let i = at + suffix.length;
      while (
        text.charCodeAt(i) === 0x20 ||
        text.charCodeAt(i) === 0x0a ||
        text.charCodeAt(i) === 0x0d ||
        text.charCodeAt(i) === 0x09
      )
        i++;
      if (text.charCodeAt(i) !== 0x3a /* : */) continue;
      i++;
      while (
        text.charCodeAt(i) === 0x20 ||
        text.charCodeAt(i) === 0x0a ||
        text.charCodeAt(i) === 0x0d ||
        text.charCodeAt(i) === 0x09
      )
        i++;
      const start = i;
      if (text.charCodeAt(i) === 0x2d /* - */) i++;
      const digitsFrom = i;
      while (text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
      // Only long integers lose precision; one followed by a fraction or exponent is left as it is.
      const next = text.charCodeAt(i);
      if (i - digitsFrom >= 16 && next !== 0x2e && next !== 0x65 && next !== 0x45) (insertAt ??= []).push(start, i);
    }
  }
  if (!insertAt) return text;
  insertAt.sort((a, b) => a - b);
  let result = '';
  let from = 0;
  for (const position of insertAt) {
    result += text.slice(from, position) + '"';
    from = position;
  }
  return result + text.slice(from);
}

/**
 * Thrown while decoding text parsed as it came when a 64-bit field holds a number beyond 2^53, which
 * JSON.parse may have rounded: the text is then decoded again with such numbers quoted.
 */
const ROUNDED = Symbol('a 64-bit integer JSON.parse may have rounded');

/**
 * Whether the text being decoded had its long 64-bit numbers quoted (`quoteBareInt64`). Exporters
 * write 64-bit integers as strings (the OTLP/HTTP JSON rule; OpenTelemetry's SDKs do): quoting
 * every request on the chance that one does not cost four scans of its text, ~4 µs per span of a
 * conversational request (bench/pipeline/stages.ts --encoding json), so the text is first parsed
 * as it came and quoted only when a number that may have been rounded turns up. Decoding is
 * synchronous: no other decode runs while this is set.
 */
let longNumbersQuoted = false;

/** Decodes OTLP JSON (text or UTF-8 bytes); throws OtlpDecodeError when it is malformed. */
export function decodeTraceRequestJson(input: string | Uint8Array): DecodedTraceRequest {
  const text = typeof input === 'string' ? input : utf8Text(input);
  try {
    return decodeText(text);
  } catch (error) {
    if (error !== ROUNDED) throw error;
  }
  longNumbersQuoted = true;
  try {
    return decodeText(quoteBareInt64(text));
  } finally {
    longNumbersQuoted = false;
  }
}

function decodeText(text: string): DecodedTraceRequest {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (error) {
    throw new OtlpDecodeError(`invalid JSON: ${(error as Error).message}`);
  }
  const request = asObject(root, 'request body');
  const rejections = new SpanRejections();
  const resourceSpans: ResourceSpans[] = [];
  const entries = asArray(field(request, 'resourceSpans', 'resource_spans'), 'resourceSpans');
  for (let i = 0; i < entries.length; i++) {
    const segment = `resourceSpans[${i}]`;
    try {
      const decoded = decodeResourceSpans(asObject(entries[i], 'an object'), segment, rejections);
      if (decoded.scopeSpans.length > 0) resourceSpans.push(decoded);
    } catch (error) {
      rethrowWithin(error, segment);
    }
  }
  return rejections.result({ resourceSpans });
}

function decodeResourceSpans(json: JsonObject, path: string, rejections: SpanRejections): ResourceSpans {
  const resourceJson = field(json, 'resource', 'resource');
  const resource =
    resourceJson == null
      ? { attributes: [], droppedAttributesCount: 0 }
      : within('resource', () => decodeResource(asObject(resourceJson, 'an object')));
  const scopeSpans: ScopeSpans[] = [];
  const entries = asArray(field(json, 'scopeSpans', 'scope_spans'), 'scopeSpans');
  for (let i = 0; i < entries.length; i++) {
    const segment = `scopeSpans[${i}]`;
    try {
      const decoded = decodeScopeSpans(asObject(entries[i], 'an object'), `${path}.${segment}`, rejections);
      if (decoded.spans.length > 0) scopeSpans.push(decoded);
    } catch (error) {
      rethrowWithin(error, segment);
    }
  }
  return { resource, schemaUrl: asString(field(json, 'schemaUrl', 'schema_url'), 'schemaUrl'), scopeSpans };
}

function decodeResource(json: JsonObject): Resource {
  return {
    attributes: decodeAttributes(field(json, 'attributes', 'attributes'), 0),
    droppedAttributesCount: asUint32(
      field(json, 'droppedAttributesCount', 'dropped_attributes_count'),
      'droppedAttributesCount',
    ),
  };
}

function decodeScopeSpans(json: JsonObject, path: string, rejections: SpanRejections): ScopeSpans {
  const scopeJson = field(json, 'scope', 'scope');
  const scope =
    scopeJson == null
      ? { name: '', version: '', attributes: [], droppedAttributesCount: 0 }
      : within('scope', () => decodeScope(asObject(scopeJson, 'an object')));
  const spans: Span[] = [];
  const entries = asArray(field(json, 'spans', 'spans'), 'spans');
  for (let i = 0; i < entries.length; i++) {
    const segment = `spans[${i}]`;
    try {
      const span = decodeSpan(asObject(entries[i], 'an object'), `${path}.${segment}`, rejections);
      if (span) spans.push(span);
    } catch (error) {
      rethrowWithin(error, segment);
    }
  }
  return { scope, schemaUrl: asString(field(json, 'schemaUrl', 'schema_url'), 'schemaUrl'), spans };
}

function decodeScope(json: JsonObject): InstrumentationScope {
  return {
    name: asString(json.name, 'name'),
    version: asString(json.version, 'version'),
    attributes: decodeAttributes(json.attributes, 0),
    droppedAttributesCount: asUint32(
      field(json, 'droppedAttributesCount', 'dropped_attributes_count'),
      'droppedAttributesCount',
    ),
  };
}

function decodeSpan(json: JsonObject, path: string, rejections: SpanRejections): Span | undefined {
  const traceIdText = asString(field(json, 'traceId', 'trace_id'), 'traceId');
  const spanIdText = asString(field(json, 'spanId', 'span_id'), 'spanId');
  const parentText = asString(field(json, 'parentSpanId', 'parent_span_id'), 'parentSpanId');
  // Decode everything first: a malformed field fails the request even when the ids are also bad.
  const span = {
    traceId: '',
    spanId: '',
    parentSpanId: '',
    traceState: asString(field(json, 'traceState', 'trace_state'), 'traceState'),
    flags: asUint32(json.flags, 'flags'),
    name: asString(json.name, 'name'),
    kind: asEnum(json.kind, SPAN_KINDS, 'kind'),
    startTimeUnixNano: asUint64(field(json, 'startTimeUnixNano', 'start_time_unix_nano'), 'startTimeUnixNano'),
    endTimeUnixNano: asUint64(field(json, 'endTimeUnixNano', 'end_time_unix_nano'), 'endTimeUnixNano'),
    attributes: decodeAttributes(json.attributes, 0),
    droppedAttributesCount: asUint32(
      field(json, 'droppedAttributesCount', 'dropped_attributes_count'),
      'droppedAttributesCount',
    ),
    events: asArray(json.events, 'events').map((event, i) =>
      within(`events[${i}]`, () => decodeEvent(asObject(event, 'an object'))),
    ),
    droppedEventsCount: asUint32(field(json, 'droppedEventsCount', 'dropped_events_count'), 'droppedEventsCount'),
    links: [] as SpanLink[],
    droppedLinksCount: asUint32(field(json, 'droppedLinksCount', 'dropped_links_count'), 'droppedLinksCount'),
    status:
      json.status == null
        ? { code: 0, message: '' }
        : within('status', () => decodeStatus(asObject(json.status, 'an object'))),
  };
  let problem: string | undefined;
  const links = asArray(json.links, 'links');
  for (let i = 0; i < links.length; i++) {
    const link = within(`links[${i}]`, () => decodeLink(asObject(links[i], 'an object')));
    if (typeof link === 'string') problem ??= `links[${i}].${link}`;
    else span.links.push(link);
  }
  const traceId = jsonIdToHex(traceIdText, TRACE_ID_BYTES);
  const spanId = jsonIdToHex(spanIdText, SPAN_ID_BYTES);
  const parentSpanId = parentText === '' ? '' : jsonIdToHex(parentText, SPAN_ID_BYTES);
  if (traceId === undefined) problem = `traceId ${describeBadJsonId(traceIdText, TRACE_ID_BYTES)}`;
  else if (spanId === undefined) problem = `spanId ${describeBadJsonId(spanIdText, SPAN_ID_BYTES)}`;
  else if (parentSpanId === undefined) problem = `parentSpanId ${describeBadJsonId(parentText, SPAN_ID_BYTES)}`;
  if (problem !== undefined) {
    rejections.reject(path, problem);
    return undefined;
  }
  span.traceId = traceId!;
  span.spanId = spanId!;
  span.parentSpanId = parentSpanId!;
  return span;
}

function decodeEvent(json: JsonObject): SpanEvent {
  return {
    timeUnixNano: asUint64(field(json, 'timeUnixNano', 'time_unix_nano'), 'timeUnixNano'),
    name: asString(json.name, 'name'),
    attributes: decodeAttributes(json.attributes, 0),
    droppedAttributesCount: asUint32(
      field(json, 'droppedAttributesCount', 'dropped_attributes_count'),
      'droppedAttributesCount',
    ),
  };
}

function decodeLink(json: JsonObject): SpanLink | string {
  const traceIdText = asString(field(json, 'traceId', 'trace_id'), 'traceId');
  const spanIdText = asString(field(json, 'spanId', 'span_id'), 'spanId');
  const link = {
    traceState: asString(field(json, 'traceState', 'trace_state'), 'traceState'),
    attributes: decodeAttributes(json.attributes, 0),
    droppedAttributesCount: asUint32(
      field(json, 'droppedAttributesCount', 'dropped_attributes_count'),
      'droppedAttributesCount',
    ),
    flags: asUint32(json.flags, 'flags'),
  };
  const traceId = jsonIdToHex(traceIdText, TRACE_ID_BYTES);
  if (traceId === undefined) return `traceId ${describeBadJsonId(traceIdText, TRACE_ID_BYTES)}`;
  const spanId = jsonIdToHex(spanIdText, SPAN_ID_BYTES);
  if (spanId === undefined) return `spanId ${describeBadJsonId(spanIdText, SPAN_ID_BYTES)}`;
  return { traceId, spanId, ...link };
}

function decodeStatus(json: JsonObject): SpanStatus {
  return { code: asEnum(json.code, STATUS_CODES, 'code'), message: asString(json.message, 'message') };
}

function decodeAttributes(value: unknown, depth: number): Attribute[] {
  const entries = asArray(value, 'attributes');
  const attributes: Attribute[] = new Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    try {
      attributes[i] = decodeKeyValue(asObject(entries[i], 'an object'), depth);
    } catch (error) {
      rethrowWithin(error, `attributes[${i}]`);
    }
  }
  return attributes;
}

function decodeKeyValue(json: JsonObject, depth: number): Attribute {
  const key = asString(json.key, 'key');
  const value =
    json.value == null ? EMPTY_VALUE : within('value', () => decodeAnyValue(asObject(json.value, 'an object'), depth));
  return { key, value };
}

const EMPTY_VALUE: AnyValue = Object.freeze({ type: 'empty' });

function decodeAnyValue(json: JsonObject, depth: number): AnyValue {
  if (depth >= MAX_VALUE_DEPTH) throw new OtlpDecodeError(`values nested deeper than ${MAX_VALUE_DEPTH} levels`);
  let v: unknown;
  if ((v = field(json, 'stringValue', 'string_value')) != null)
    return { type: 'string', value: asString(v, 'stringValue') };
  if ((v = field(json, 'intValue', 'int_value')) != null) return { type: 'int', value: asInt64(v, 'intValue') };
  if ((v = field(json, 'boolValue', 'bool_value')) != null) {
    if (typeof v !== 'boolean') throw new OtlpDecodeError(`must be a boolean, got ${describe(v)}`, ['boolValue']);
    return { type: 'bool', value: v };
  }
  if ((v = field(json, 'doubleValue', 'double_value')) != null)
    return { type: 'double', value: asDouble(v, 'doubleValue') };
  if ((v = field(json, 'bytesValue', 'bytes_value')) != null) return { type: 'bytes', value: asBytes(v, 'bytesValue') };
  if ((v = field(json, 'arrayValue', 'array_value')) != null) {
    const values = asArray(asObject(v, 'an object', 'arrayValue').values, 'arrayValue.values');
    return {
      type: 'array',
      value: values.map((item, i) =>
        within(`arrayValue.values[${i}]`, () =>
          item == null ? EMPTY_VALUE : decodeAnyValue(asObject(item, 'an object'), depth + 1),
        ),
      ),
    };
  }
  if ((v = field(json, 'kvlistValue', 'kvlist_value')) != null) {
    const values = asObject(v, 'an object', 'kvlistValue').values;
    return { type: 'kvlist', value: within('kvlistValue.values', () => decodeAttributes(values, depth + 1)) };
  }
  return EMPTY_VALUE;
}

// --- typed accessors: each names the field it read when the type is wrong ---

function field(json: JsonObject, camel: string, snake: string): unknown {
  const value = json[camel];
  return value === undefined ? json[snake] : value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function asObject(value: unknown, what: string, name?: string): JsonObject {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as JsonObject;
  throw new OtlpDecodeError(
    `must be ${what === 'an object' ? 'an object' : `a JSON object (${what})`}, got ${describe(value)}`,
    name ? [name] : [],
  );
}

function asArray(value: unknown, name: string): readonly unknown[] {
  if (value == null) return [];
  if (Array.isArray(value)) return value;
  throw new OtlpDecodeError(`must be an array, got ${describe(value)}`, [name]);
}

function asString(value: unknown, name: string): string {
  if (value == null) return '';
  if (typeof value === 'string') return value;
  throw new OtlpDecodeError(`must be a string, got ${describe(value)}`, [name]);
}

function asBigInt(value: unknown, name: string, min: bigint, max: bigint): bigint {
  let result: bigint | undefined;
  if (typeof value === 'string' && DECIMAL.test(value)) result = BigInt(value);
  else if (typeof value === 'number' && Number.isInteger(value)) {
    if (!longNumbersQuoted && !Number.isSafeInteger(value)) throw ROUNDED;
    result = BigInt(value);
  }
  if (result === undefined)
    throw new OtlpDecodeError(`must be an integer (a number or a decimal string), got ${describe(value)}`, [name]);
  if (result < min || result > max) throw new OtlpDecodeError(`${result} is out of range [${min}, ${max}]`, [name]);
  return result;
}

function asInt64(value: unknown, name: string): bigint {
  return asBigInt(value, name, INT64_MIN, INT64_MAX);
}

function asUint64(value: unknown, name: string): bigint {
  return value == null ? 0n : asBigInt(value, name, 0n, UINT64_MAX);
}

function asUint32(value: unknown, name: string): number {
  if (value == null) return 0;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffffffff) return value;
  return Number(asBigInt(value, name, 0n, 0xffffffffn));
}

function asDouble(value: unknown, name: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    // Protobuf's JSON mapping writes the non-finite doubles, and allows any double, as strings.
    if (value === 'NaN') return Number.NaN;
    if (value === 'Infinity') return Number.POSITIVE_INFINITY;
    if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
    const parsed = Number(value);
    if (value.trim() !== '' && Number.isFinite(parsed)) return parsed;
  }
  throw new OtlpDecodeError(`must be a number, got ${describe(value)}`, [name]);
}

function asBytes(value: unknown, name: string): Uint8Array {
  if (typeof value === 'string' && value.length % 4 === 0 && BASE64.test(value))
    return Uint8Array.from(Buffer.from(value, 'base64'));
  throw new OtlpDecodeError(`must be base64 text, got ${describe(value)}`, [name]);
}

function asEnum(value: unknown, names: Record<string, number>, name: string): number {
  if (value == null) return 0;
  if (typeof value === 'number' && Number.isInteger(value) && value >= -0x80000000 && value <= 0x7fffffff) return value;
  if (typeof value === 'string') {
    if (Object.hasOwn(names, value)) return names[value]!;
    if (DECIMAL.test(value)) return asEnum(Number(value), names, name);
  }
  throw new OtlpDecodeError(`must be one of ${Object.keys(names).join(', ')} or an integer, got ${describe(value)}`, [
    name,
  ]);
}

function within<T>(segment: string, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    rethrowWithin(error, segment);
  }
}
