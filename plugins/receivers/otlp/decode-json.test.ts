// The OTLP JSON decoder (src/otlp/decode-json.ts): both id forms, both field-name forms, enum
// names and integers, every AnyValue kind, and malformed input naming its path.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeTraceRequestJson, encodeTraceRequestJson, OtlpDecodeError } from 'tracepipe/otlp';
import type { Span } from 'tracepipe/plugin';
import { spanBatch } from './testing/arbitraries.ts';

const TRACE_HEX = '5b8efff798038103d269b633813fc60c';
const SPAN_HEX = 'eee19b7ec3c1b174';
const PARENT_HEX = 'eee19b7ec3c1b173';
const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

function requestWith(spans: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
        scopeSpans: [{ scope: { name: 'scope', version: '1.0' }, spans }],
        ...extra,
      },
    ],
  });
}

function onlySpan(text: string): Span {
  const decoded = decodeTraceRequestJson(text);
  assert.equal(decoded.rejected, 0, decoded.errorMessage);
  return decoded.batch.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
}

function decodeError(text: string): string {
  try {
    decodeTraceRequestJson(text);
  } catch (error) {
    assert.ok(error instanceof OtlpDecodeError, `expected OtlpDecodeError, got ${String(error)}`);
    return error.message;
  }
  assert.fail('expected an OtlpDecodeError');
}

describe('JSON decoding', () => {
  it("reads protobuf's JSON mapping: base64 ids, enum names, intValue as a decimal string", () => {
    const span = onlySpan(
      requestWith([
        {
          traceId: b64(TRACE_HEX),
          spanId: b64(SPAN_HEX),
          parentSpanId: b64(PARENT_HEX),
          name: 'llm',
          kind: 'SPAN_KIND_CLIENT',
          startTimeUnixNano: '1700000000000000001',
          endTimeUnixNano: '1700000000500000002',
          attributes: [
            { key: 'gen_ai.prompt', value: { stringValue: '[{"role":"user"}]' } },
            { key: 'gen_ai.usage.input_tokens', value: { intValue: '9007199254740993' } },
          ],
          droppedAttributesCount: 0,
          events: [],
          links: [],
          status: { code: 'STATUS_CODE_ERROR', message: 'boom' },
        },
      ]),
    );
    assert.equal(span.traceId, TRACE_HEX);
    assert.equal(span.spanId, SPAN_HEX);
    assert.equal(span.parentSpanId, PARENT_HEX);
    assert.equal(span.kind, 3);
    assert.equal(span.startTimeUnixNano, 1700000000000000001n);
    assert.equal(span.endTimeUnixNano, 1700000000500000002n);
    assert.deepEqual(span.attributes[1], {
      key: 'gen_ai.usage.input_tokens',
      value: { type: 'int', value: 9007199254740993n },
    });
    assert.deepEqual(span.status, { code: 2, message: 'boom' });
  });

  it("reads the SDK exporters' form: hex ids (either case), enum integers, numbers", () => {
    const span = onlySpan(
      requestWith([
        {
          traceId: TRACE_HEX.toUpperCase(),
          spanId: SPAN_HEX,
          kind: 2,
          startTimeUnixNano: 1700000000000000000,
          attributes: [{ key: 'n', value: { intValue: 42 } }],
          status: { code: 1 },
        },
      ]),
    );
    assert.equal(span.traceId, TRACE_HEX);
    assert.equal(span.kind, 2);
    assert.equal(span.startTimeUnixNano, 1700000000000000000n);
    assert.deepEqual(span.attributes[0]!.value, { type: 'int', value: 42n });
    assert.deepEqual(span.status, { code: 1, message: '' });
  });

  it('reads 64-bit bare numbers exactly, as some senders write timestamps', () => {
    // JSON.parse alone would round these to the nearest double (…185224000, 9007199254740992).
    const text =
      '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"T6nh/mMkIONaoHewS9UWIw==","spanId":"0tEqJwCpvU0=",' +
      '"name":"parent-span","startTimeUnixNano": 1747675155185223936 ,"end_time_unix_nano":\n1747675156185223936,' +
      '"events":[{"name":"e","timeUnixNano":-0}],' +
      '"attributes":[{"key":"big","value":{"intValue":-9007199254740993}},{"key":"small","value":{"intValue":42}},' +
      '{"key":"text","value":{"stringValue":"{\\"intValue\\": 12345678901234567890}"}}]}]}]}]}';
    const span = onlySpan(text);
    assert.equal(span.startTimeUnixNano, 1747675155185223936n);
    assert.equal(span.endTimeUnixNano, 1747675156185223936n);
    assert.equal(span.events[0]!.timeUnixNano, 0n);
    assert.deepEqual(
      span.attributes.map((attribute) => attribute.value),
      [
        { type: 'int', value: -9007199254740993n },
        { type: 'int', value: 42n },
        { type: 'string', value: '{"intValue": 12345678901234567890}' },
      ],
    );
  });

  it('reads a bare 64-bit number exactly wherever it is, after spans read before it', () => {
    // The text is parsed as it came first; the one bare number in the last span's event makes it
    // parsed again with such numbers quoted, and every span comes out as from quoted text.
    const spans = Array.from({ length: 20 }, (_, i) => ({
      traceId: TRACE_HEX,
      spanId: `${SPAN_HEX.slice(0, -2)}${(16 + i).toString(16)}`,
      name: `span ${i} €`,
      startTimeUnixNano: '1747675155185223936',
      attributes: [{ key: 'n', value: { intValue: i } }],
      events: [{ name: 'e', timeUnixNano: i === 19 ? 'BARE' : '5' }],
    }));
    const text = requestWith(spans).replace('"BARE"', '1747675157185223937');
    const decoded = decodeTraceRequestJson(Buffer.from(text)).batch.resourceSpans[0]!.scopeSpans[0]!.spans;
    assert.equal(decoded.length, 20);
    assert.equal(decoded[19]!.events[0]!.timeUnixNano, 1747675157185223937n);
    assert.deepEqual(
      decoded.map((span) => [span.name, span.startTimeUnixNano, span.attributes[0]!.value]),
      spans.map((span, i) => [span.name, 1747675155185223936n, { type: 'int', value: BigInt(i) }]),
    );
  });

  it('treats 64-bit numbers written with an exponent or a fraction as numbers, as before', () => {
    const exponent = requestWith([
      { traceId: TRACE_HEX, spanId: SPAN_HEX, attributes: [{ key: 'n', value: { intValue: 'X' } }] },
    ]);
    assert.deepEqual(onlySpan(exponent.replace('"X"', '1e3')).attributes[0]!.value, { type: 'int', value: 1000n });
    assert.deepEqual(onlySpan(exponent.replace('"X"', '12345678901234567.0')).attributes[0]!.value, {
      type: 'int',
      value: 12345678901234568n,
    });
    assert.throws(
      () => decodeTraceRequestJson(exponent.replace('"X"', '1e20')),
      (error: unknown) =>
        error instanceof OtlpDecodeError && /intValue: 100000000000000000000 is out of range/.test(error.message),
    );
  });

  it('reads UTF-8 bytes as the text they encode, other characters and invalid sequences included', () => {
    const spans = Array.from({ length: 50 }, (_, i) => ({
      traceId: TRACE_HEX,
      spanId: SPAN_HEX,
      name: `Preis ${i} € — naïve 😀`,
      attributes: [{ key: 'gen_ai.prompt', value: { stringValue: `Was kostet es? ${'ü'.repeat(i)}` } }],
    }));
    const text = requestWith(spans);
    assert.deepEqual(decodeTraceRequestJson(Buffer.from(text)), decodeTraceRequestJson(text));
    // A byte that is not UTF-8 inside a string reads as U+FFFD, as Buffer#toString makes it.
    const bytes = Buffer.from(text.replace('Preis 7 ', 'Preis 7 \u0001'));
    bytes[bytes.indexOf(0x01)] = 0xff;
    const decoded = decodeTraceRequestJson(bytes).batch.resourceSpans[0]!.scopeSpans[0]!.spans;
    assert.equal(decoded[7]!.name, 'Preis 7 \ufffd€ — naïve 😀');
  });

  it('reads proto field names as well as lowerCamelCase ones', () => {
    const decoded = decodeTraceRequestJson(
      JSON.stringify({
        resource_spans: [
          {
            schema_url: 'https://schema',
            scope_spans: [
              {
                spans: [
                  {
                    trace_id: TRACE_HEX,
                    span_id: SPAN_HEX,
                    parent_span_id: PARENT_HEX,
                    start_time_unix_nano: '5',
                    end_time_unix_nano: '6',
                    dropped_attributes_count: 3,
                    attributes: [{ key: 'k', value: { string_value: 'v' } }],
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    const span = decoded.batch.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    assert.equal(decoded.batch.resourceSpans[0]!.schemaUrl, 'https://schema');
    assert.equal(span.parentSpanId, PARENT_HEX);
    assert.equal(span.startTimeUnixNano, 5n);
    assert.equal(span.droppedAttributesCount, 3);
    assert.deepEqual(span.attributes[0]!.value, { type: 'string', value: 'v' });
  });

  it('reads every AnyValue kind', () => {
    const span = onlySpan(
      requestWith([
        {
          traceId: TRACE_HEX,
          spanId: SPAN_HEX,
          attributes: [
            { key: 's', value: { stringValue: 'x' } },
            { key: 'b', value: { boolValue: true } },
            { key: 'i', value: { intValue: '-9223372036854775808' } },
            { key: 'd', value: { doubleValue: 1.5 } },
            { key: 'nan', value: { doubleValue: 'NaN' } },
            { key: 'inf', value: { doubleValue: '-Infinity' } },
            { key: 'bytes', value: { bytesValue: 'AQID' } },
            { key: 'arr', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 1 }] } } },
            { key: 'kv', value: { kvlistValue: { values: [{ key: 'nested', value: { boolValue: false } }] } } },
            { key: 'empty', value: {} },
            { key: 'missing' },
          ],
        },
      ]),
    );
    assert.deepEqual(
      span.attributes.map((a) => a.value),
      [
        { type: 'string', value: 'x' },
        { type: 'bool', value: true },
        { type: 'int', value: -(2n ** 63n) },
        { type: 'double', value: 1.5 },
        { type: 'double', value: Number.NaN },
        { type: 'double', value: Number.NEGATIVE_INFINITY },
        { type: 'bytes', value: Uint8Array.from([1, 2, 3]) },
        {
          type: 'array',
          value: [
            { type: 'string', value: 'a' },
            { type: 'int', value: 1n },
          ],
        },
        { type: 'kvlist', value: [{ key: 'nested', value: { type: 'bool', value: false } }] },
        { type: 'empty' },
        { type: 'empty' },
      ],
    );
  });

  it('ignores unknown fields at every level', () => {
    const span = onlySpan(
      JSON.stringify({
        futureField: 1,
        resourceSpans: [
          {
            unknown: { deep: [1, 2] },
            resource: { attributes: [], extra: true },
            scopeSpans: [
              {
                scope: { name: 'n', what: 1 },
                spans: [{ traceId: TRACE_HEX, spanId: SPAN_HEX, novel: 'x', status: { code: 0, more: 1 } }],
              },
            ],
          },
        ],
      }),
    );
    assert.equal(span.spanId, SPAN_HEX);
  });

  it('treats null as the default value', () => {
    const span = onlySpan(
      requestWith([
        {
          traceId: TRACE_HEX,
          spanId: SPAN_HEX,
          parentSpanId: null,
          name: null,
          kind: null,
          attributes: null,
          status: null,
        },
      ]),
    );
    assert.equal(span.parentSpanId, '');
    assert.equal(span.name, '');
    assert.equal(span.kind, 0);
  });

  it('round-trips a batch written by encodeTraceRequestJson', () => {
    fc.assert(
      fc.property(spanBatch, (batch) => {
        assert.deepEqual(decodeTraceRequestJson(Buffer.from(JSON.stringify(encodeTraceRequestJson(batch)))), {
          batch,
          rejected: 0,
        });
      }),
      { numRuns: 200 },
    );
  });
});

describe('JSON span ids', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      'a short hex trace id',
      { traceId: 'abcd', spanId: SPAN_HEX },
      /traceId must be 32 hex or 24 base64 characters \(16 bytes\), got 4 characters/,
    ],
    ['a missing trace id', { spanId: SPAN_HEX }, /traceId must be 32 hex/],
    ['a 32-character trace id that is not hex', { traceId: 'z'.repeat(32), spanId: SPAN_HEX }, /traceId/],
    ['base64 of the wrong length', { traceId: b64(TRACE_HEX + '00'), spanId: SPAN_HEX }, /traceId/],
    [
      'a long span id',
      { traceId: TRACE_HEX, spanId: SPAN_HEX + 'ab' },
      /spanId must be 16 hex or 12 base64 characters/,
    ],
    ['a bad parent id', { traceId: TRACE_HEX, spanId: SPAN_HEX, parentSpanId: 'abc' }, /parentSpanId/],
    [
      'a bad link id',
      { traceId: TRACE_HEX, spanId: SPAN_HEX, links: [{ traceId: 'x', spanId: SPAN_HEX }] },
      /links\[0\]\.traceId/,
    ],
  ];
  for (const [name, span, message] of cases) {
    it(`rejects only the span with ${name}`, () => {
      const decoded = decodeTraceRequestJson(
        requestWith([span, { traceId: TRACE_HEX, spanId: SPAN_HEX, name: 'good' }]),
      );
      assert.equal(decoded.rejected, 1);
      assert.match(decoded.errorMessage!, /^1 span rejected; first: resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]: /);
      assert.match(decoded.errorMessage!, message);
      assert.deepEqual(
        decoded.batch.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.name),
        ['good'],
      );
    });
  }

  it('prefers hex when a 16-character span id is valid both ways', () => {
    // "abcdefABCDEF0123" is valid hex and valid base64 text: the hex reading wins.
    const span = onlySpan(requestWith([{ traceId: TRACE_HEX, spanId: 'abcdefABCDEF0123' }]));
    assert.equal(span.spanId, 'abcdefabcdef0123');
  });
});

describe('malformed JSON', () => {
  const cases: [string, string, RegExp][] = [
    ['invalid JSON', '{"resourceSpans": [', /^invalid JSON: /],
    ['an empty body', '', /^invalid JSON: /],
    ['a non-object root', '[1,2]', /request body/],
    ['resourceSpans not an array', '{"resourceSpans": {}}', /^resourceSpans: must be an array, got an object/],
    [
      'a resourceSpans entry not an object',
      '{"resourceSpans": [3]}',
      /^resourceSpans\[0\]: must be an object, got number 3/,
    ],
    [
      'a span name that is a number',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, name: 5 }]),
      /^resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.name: must be a string/,
    ],
    [
      'an id that is a number',
      requestWith([{ traceId: 5, spanId: SPAN_HEX }]),
      /spans\[0\]\.traceId: must be a string/,
    ],
    [
      'a fractional intValue',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, attributes: [{ key: 'k', value: { intValue: 1.5 } }] }]),
      /attributes\[0\]\.value\.intValue: must be an integer/,
    ],
    [
      'an intValue beyond int64',
      requestWith([
        {
          traceId: TRACE_HEX,
          spanId: SPAN_HEX,
          attributes: [{ key: 'k', value: { intValue: '9223372036854775808' } }],
        },
      ]),
      /intValue: 9223372036854775808 is out of range/,
    ],
    [
      'a non-decimal timestamp',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, startTimeUnixNano: '12ab' }]),
      /startTimeUnixNano: must be an integer/,
    ],
    [
      'a negative timestamp',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, endTimeUnixNano: '-1' }]),
      /endTimeUnixNano: -1 is out of range/,
    ],
    [
      'an unknown kind name',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, kind: 'SPAN_KIND_WEIRD' }]),
      /kind: must be one of SPAN_KIND_UNSPECIFIED/,
    ],
    [
      'an enum name inherited from Object',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, kind: 'constructor' }]),
      /kind: must be one of/,
    ],
    [
      'a boolValue string',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, attributes: [{ key: 'k', value: { boolValue: 'yes' } }] }]),
      /boolValue: must be a boolean/,
    ],
    [
      'bytesValue not base64',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, attributes: [{ key: 'k', value: { bytesValue: '***' } }] }]),
      /bytesValue: must be base64/,
    ],
    [
      'arrayValue.values not an array',
      requestWith([
        { traceId: TRACE_HEX, spanId: SPAN_HEX, attributes: [{ key: 'k', value: { arrayValue: { values: 1 } } }] },
      ]),
      /arrayValue\.values: must be an array/,
    ],
    [
      'a status that is a string',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, status: 'ok' }]),
      /status: must be an object/,
    ],
    [
      'a dropped count below zero',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, droppedEventsCount: -1 }]),
      /droppedEventsCount: -1 is out of range/,
    ],
    [
      'events not an array',
      requestWith([{ traceId: TRACE_HEX, spanId: SPAN_HEX, events: 'none' }]),
      /spans\[0\]\.events: must be an array/,
    ],
  ];
  for (const [name, text, message] of cases) {
    it(`refuses ${name}`, () => assert.match(decodeError(text), message));
  }

  it('refuses values nested without end', () => {
    let value = '{"stringValue":"x"}';
    for (let i = 0; i < 200; i++) value = `{"arrayValue":{"values":[${value}]}}`;
    const text = requestWith([]).replace(
      '"spans":[]',
      `"spans":[{"traceId":"${TRACE_HEX}","spanId":"${SPAN_HEX}","attributes":[{"key":"k","value":${value}}]}]`,
    );
    assert.match(decodeError(text), /nested deeper than 64 levels/);
  });

  it('refuses any JSON value that is not a request with OtlpDecodeError only', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          decodeTraceRequestJson(JSON.stringify(value) ?? 'null');
        } catch (error) {
          if (!(error instanceof OtlpDecodeError)) throw error;
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses requests with a subtree replaced by random JSON with OtlpDecodeError only', () => {
    fc.assert(
      fc.property(spanBatch, fc.array(fc.nat()), fc.jsonValue(), (batch, choices, replacement) => {
        const request = JSON.parse(JSON.stringify(encodeTraceRequestJson(batch))) as unknown;
        replaceSomewhere(request, choices, replacement);
        try {
          decodeTraceRequestJson(JSON.stringify(request));
        } catch (error) {
          if (!(error instanceof OtlpDecodeError)) throw error;
        }
      }),
      { numRuns: 1000 },
    );
  });
});

/** Walks down `value` following `choices` and replaces the node reached. */
function replaceSomewhere(value: unknown, choices: number[], replacement: unknown): void {
  let node = value as Record<string, unknown>;
  for (const choice of choices) {
    const keys = Object.keys(node);
    if (keys.length === 0) return;
    const key = keys[choice % keys.length]!;
    const child = node[key];
    if (child === null || typeof child !== 'object' || choice % 3 === 0) {
      node[key] = replacement;
      return;
    }
    node = child as Record<string, unknown>;
  }
}
