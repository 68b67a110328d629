// The hand-written protobuf decoder (src/otlp/decode-protobuf.ts) and encoder (src/otlp/encode.ts):
// round trips against the OpenTelemetry reference serializer, and fuzzing with random, truncated
// and mutated bytes, which must fail with OtlpDecodeError and nothing else.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  decodeTraceRequestJson,
  decodeTraceRequestProtobuf,
  encodeTraceRequestJson,
  encodeTraceRequestProtobuf,
  OtlpDecodeError,
} from 'tracepipe/otlp';
import { makeBatch, plainSpan, stringAttr } from 'tracepipe/testing';
import { expectedBatch, sdkSpans, spanBatch } from './testing/arbitraries.ts';
import { ProtoWriter } from './testing/wire.ts';

const asReadable = (spans: unknown) => spans as ReadableSpan[];

/** Decodes, and fails the property on any error other than OtlpDecodeError. */
function decodesOrRefuses(bytes: Uint8Array): void {
  try {
    decodeTraceRequestProtobuf(bytes);
  } catch (error) {
    if (!(error instanceof OtlpDecodeError)) throw error;
    assert.ok(error.message.length > 0);
  }
}

describe('protobuf decoding', () => {
  it('decodes what the OpenTelemetry reference serializer writes, exactly', () => {
    fc.assert(
      fc.property(sdkSpans, (spans) => {
        const bytes = ProtobufTraceSerializer.serializeRequest(asReadable(spans))!;
        assert.deepEqual(decodeTraceRequestProtobuf(bytes), { batch: expectedBatch(spans), rejected: 0 });
      }),
      { numRuns: 300 },
    );
  });

  it('decodes the reference JSON serializer output to the same batch', () => {
    fc.assert(
      fc.property(sdkSpans, (spans) => {
        const text = JsonTraceSerializer.serializeRequest(asReadable(spans))!;
        assert.deepEqual(decodeTraceRequestJson(text), { batch: expectedBatch(spans), rejected: 0 });
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips any batch through encodeTraceRequestProtobuf', () => {
    fc.assert(
      fc.property(spanBatch, (batch) => {
        assert.deepEqual(decodeTraceRequestProtobuf(encodeTraceRequestProtobuf(batch)), { batch, rejected: 0 });
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips any batch through encodeTraceRequestJson', () => {
    fc.assert(
      fc.property(spanBatch, (batch) => {
        const text = JSON.stringify(encodeTraceRequestJson(batch));
        assert.deepEqual(decodeTraceRequestJson(text), { batch, rejected: 0 });
      }),
      { numRuns: 300 },
    );
  });

  it('refuses random bytes with OtlpDecodeError only', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), decodesOrRefuses), { numRuns: 2000 });
  });

  it('refuses truncated requests with OtlpDecodeError only', () => {
    fc.assert(
      fc.property(spanBatch, fc.double({ min: 0, max: 1, noNaN: true }), (batch, cut) => {
        const bytes = encodeTraceRequestProtobuf(batch);
        decodesOrRefuses(bytes.subarray(0, Math.floor(bytes.length * cut)));
      }),
      { numRuns: 500 },
    );
  });

  it('reports a truncated span as malformed, naming its path', () => {
    const bytes = ProtobufTraceSerializer.serializeRequest(
      asReadable(fc.sample(sdkSpans, { numRuns: 1, seed: 7 })[0]),
    )!;
    // Cutting inside the last byte always leaves a length prefix that overruns the buffer.
    assert.throws(
      () => decodeTraceRequestProtobuf(bytes.subarray(0, bytes.length - 1)),
      (error: unknown) => {
        assert.ok(error instanceof OtlpDecodeError);
        assert.match(error.message, /^resourceSpans\[\d+\]: length \d+ overruns the message/);
        return true;
      },
    );
  });

  it('refuses mutated requests with OtlpDecodeError only', () => {
    fc.assert(
      fc.property(
        spanBatch.filter((b) => b.resourceSpans.length > 0),
        fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 })), { minLength: 1, maxLength: 8 }),
        (batch, flips) => {
          const bytes = encodeTraceRequestProtobuf(batch);
          for (const [at, value] of flips) bytes[at % bytes.length] = value;
          decodesOrRefuses(bytes);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses values nested without end instead of overflowing the stack', () => {
    // AnyValue{array_value: ArrayValue{values: AnyValue{array_value: ...}}}, 10 000 levels deep.
    let inner: Uint8Array = new Uint8Array(0);
    for (let i = 0; i < 10_000; i++) {
      const arrayValue = new ProtoWriter().tag(1, 2).bytes(inner).finish();
      inner = new ProtoWriter().tag(5, 2).bytes(arrayValue).finish();
    }
    const keyValue = new ProtoWriter().tag(1, 2).string('deep').tag(2, 2).bytes(inner).finish();
    const span = new ProtoWriter()
      .tag(1, 2)
      .bytes(new Uint8Array(16).fill(1))
      .tag(2, 2)
      .bytes(new Uint8Array(8).fill(2))
      .tag(9, 2)
      .bytes(keyValue)
      .finish();
    const scope = new ProtoWriter().tag(2, 2).bytes(span).finish();
    const resource = new ProtoWriter().tag(2, 2).bytes(scope).finish();
    const request = new ProtoWriter().tag(1, 2).bytes(resource).finish();
    assert.throws(() => decodeTraceRequestProtobuf(request), /nested deeper than 64 levels/);
  });

  it('skips unknown fields of every wire type', () => {
    const batch = fc.sample(
      spanBatch.filter((b) => b.resourceSpans.length > 0),
      { numRuns: 1, seed: 3 },
    )[0]!;
    const known = encodeTraceRequestProtobuf(batch);
    const unknown = new ProtoWriter()
      .tag(100, 0)
      .varint32(300)
      .tag(101, 1)
      .fixed64(7n)
      .tag(102, 2)
      .string('ignored')
      .tag(103, 5)
      .fixed32(9)
      .tag(104, 3)
      .tag(1, 0)
      .varint32(1)
      .tag(104, 4)
      .finish();
    const bytes = Buffer.concat([unknown, known, unknown]);
    assert.deepEqual(decodeTraceRequestProtobuf(bytes), { batch, rejected: 0 });
  });

  it('refuses a known field sent with the wrong wire type', () => {
    const resource = new ProtoWriter().tag(3, 0).varint32(1).finish(); // schema_url as a varint
    const request = new ProtoWriter().tag(1, 2).bytes(resource).finish();
    assert.throws(
      () => decodeTraceRequestProtobuf(request),
      /resourceSpans\[0\]: schemaUrl: wire type varint, expected length-delimited/,
    );
  });

  it('names the path of a malformed value inside an array of a later event', () => {
    // spans[1].events[1].attributes[0].value.arrayValue.values[1]: a string sent as a varint.
    const badValue = new ProtoWriter().tag(1, 0).varint32(7).finish();
    const goodValue = new ProtoWriter().tag(1, 2).string('fine').finish();
    const array = new ProtoWriter().tag(1, 2).bytes(goodValue).tag(1, 2).bytes(badValue).finish();
    const value = new ProtoWriter().tag(5, 2).bytes(array).finish();
    const attribute = new ProtoWriter().tag(1, 2).string('k').tag(2, 2).bytes(value).finish();
    const event = new ProtoWriter().tag(2, 2).string('e').tag(3, 2).bytes(attribute).finish();
    const emptyEvent = new ProtoWriter().tag(2, 2).string('first').finish();
    const span = new ProtoWriter().tag(5, 2).string('s').tag(11, 2).bytes(emptyEvent).tag(11, 2).bytes(event).finish();
    const plain = new ProtoWriter().tag(5, 2).string('p').finish();
    const scope = new ProtoWriter().tag(2, 2).bytes(plain).tag(2, 2).bytes(span).finish();
    const resource = new ProtoWriter().tag(2, 2).bytes(scope).finish();
    const request = new ProtoWriter().tag(1, 2).bytes(resource).finish();
    assert.throws(
      () => decodeTraceRequestProtobuf(request),
      (error: unknown) =>
        error instanceof OtlpDecodeError &&
        error.message ===
          'resourceSpans[0].scopeSpans[0].spans[1].events[1].attributes[0].values[1]: stringValue: wire type varint, expected length-delimited',
    );
  });

  it('decodes attribute keys exactly when the key table collides or meets non-ASCII keys', () => {
    // 20,000 distinct ASCII keys of one length overflow the decoder's table of known keys many times
    // over; the non-ASCII pairs have the same byte values read as Latin-1 ("é" is C3 A9, "Ã©" is
    // C3 83 C2 A9), which a table comparing char codes with bytes must never confuse.
    const keys = [
      ...Array.from({ length: 20_000 }, (_, i) => `key.${String(i).padStart(6, '0')}`),
      'é',
      'Ã©',
      'gen_ai.€',
      '',
      'x'.repeat(200),
    ];
    const batch = makeBatch([plainSpan({ attributes: keys.map((key, i) => stringAttr(key, String(i))) })]);
    const bytes = encodeTraceRequestProtobuf(batch);
    for (let pass = 0; pass < 2; pass++) assert.deepEqual(decodeTraceRequestProtobuf(bytes), { batch, rejected: 0 });
  });

  it('decodes attribute keys exactly when their order changes from span to span', () => {
    // The key that followed the previous one is tried first: keys of one length that differ in one
    // byte, in an order that changes, must never be taken for one another.
    const orders = [
      ['gen_ai.prompt.0.role', 'gen_ai.prompt.1.role', 'gen_ai.prompt.2.role'],
      ['gen_ai.prompt.1.role', 'gen_ai.prompt.0.role', 'gen_ai.prompt.2.role'],
      ['gen_ai.prompt.2.role', 'gen_ai.prompt.1.role', 'gen_ai.prompt.0.role', 'gen_ai.prompt.0.rolé'],
    ];
    const spans = [...orders, ...orders.reverse()].map((keys, i) =>
      plainSpan({ name: `s${i}`, attributes: keys.map((key) => stringAttr(key, key)) }),
    );
    const batch = makeBatch(spans);
    const bytes = encodeTraceRequestProtobuf(batch);
    for (let pass = 0; pass < 2; pass++) assert.deepEqual(decodeTraceRequestProtobuf(bytes), { batch, rejected: 0 });
  });

  it('decodes keys that share a slot of the key table, and event names, exactly', () => {
    // These two keys share their first slot in the table; each span has both, in turns, and event
    // names (which go through the same table) that are also keys, or differ from one by a byte.
    const pair = ['gen_ai.request.max_tokens', 'traceloop.span.kind'];
    const spans = Array.from({ length: 6 }, (_, i) => {
      const keys = i % 2 === 0 ? pair : [...pair].reverse();
      return plainSpan({
        name: `s${i}`,
        attributes: keys.map((key) => stringAttr(key, `${key}${i}`)),
        events: [
          { timeUnixNano: 1n, name: keys[0]!, attributes: [stringAttr(keys[1]!, 'v')], droppedAttributesCount: 0 },
          { timeUnixNano: 2n, name: 'gen_ai.request.max_tokenS', attributes: [], droppedAttributesCount: 0 },
        ],
      });
    });
    const batch = makeBatch(spans);
    const bytes = encodeTraceRequestProtobuf(batch);
    for (let pass = 0; pass < 2; pass++) assert.deepEqual(decodeTraceRequestProtobuf(bytes), { batch, rejected: 0 });
  });

  it('decodes long values in any script exactly, and invalid UTF-8 in them as U+FFFD', () => {
    // Long values are decoded by ICU when they are not ASCII (src/http/utf8-text.ts), short ones
    // and ASCII ones by V8: every kind, at lengths on both sides of where that changes.
    const values = [1000, 2047, 2048, 2049, 20_000].flatMap((length) => [
      '€'.padEnd(length, 'x'),
      'x'.padEnd(length - 1, 'y') + 'é',
      '中文文档检索增强生成'.repeat(length / 10),
      'Grüße 😀 '.repeat(length / 9),
      'a'.repeat(length),
    ]);
    const batch = makeBatch([plainSpan({ attributes: values.map((value, i) => stringAttr(`v${i}`, value)) })]);
    assert.deepEqual(decodeTraceRequestProtobuf(encodeTraceRequestProtobuf(batch)), { batch, rejected: 0 });

    const text = 'Grüße '.repeat(1000);
    const bytes = Buffer.from(
      encodeTraceRequestProtobuf(makeBatch([plainSpan({ attributes: [stringAttr('t', text)] })])),
    );
    const start = bytes.indexOf(Buffer.from(text));
    const at = bytes.indexOf(Buffer.from('ü'), start + 3000);
    bytes[at + 1] = 0x41; // 'ü' (C3 BC) becomes C3 41: an invalid sequence, then 'A'
    const decoded = decodeTraceRequestProtobuf(bytes).batch.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    const value = decoded.attributes[0]!.value as { value: string };
    assert.equal(value.value, bytes.toString('utf8', start, start + Buffer.byteLength(text)));
    assert.ok(value.value.includes('Gr\ufffdAße'));
  });

  it('decodes an empty body as an empty request', () => {
    assert.deepEqual(decodeTraceRequestProtobuf(new Uint8Array(0)), { batch: { resourceSpans: [] }, rejected: 0 });
  });
});

describe('protobuf span ids', () => {
  const spanWith = (traceId: Uint8Array, spanId: Uint8Array, parent?: Uint8Array) => {
    const w = new ProtoWriter().tag(1, 2).bytes(traceId).tag(2, 2).bytes(spanId);
    if (parent) w.tag(4, 2).bytes(parent);
    return w.tag(5, 2).string('s').finish();
  };
  const requestOf = (...spans: Uint8Array[]) => {
    const scope = new ProtoWriter();
    for (const span of spans) scope.tag(2, 2).bytes(span);
    const resource = new ProtoWriter().tag(2, 2).bytes(scope.finish()).finish();
    return new ProtoWriter().tag(1, 2).bytes(resource).finish();
  };
  const good = spanWith(new Uint8Array(16).fill(0xab), new Uint8Array(8).fill(0xcd));

  it('rejects spans with ids of the wrong length one by one and keeps the rest', () => {
    const decoded = decodeTraceRequestProtobuf(
      requestOf(
        good,
        spanWith(new Uint8Array(15), new Uint8Array(8)),
        spanWith(new Uint8Array(16), new Uint8Array(9)),
        spanWith(new Uint8Array(16), new Uint8Array(8), new Uint8Array(4)),
        spanWith(new Uint8Array(0), new Uint8Array(8)),
      ),
    );
    assert.equal(decoded.rejected, 4);
    assert.equal(decoded.batch.resourceSpans[0]!.scopeSpans[0]!.spans.length, 1);
    assert.equal(decoded.batch.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.traceId, 'ab'.repeat(16));
    assert.equal(
      decoded.errorMessage,
      '4 spans rejected; first: resourceSpans[0].scopeSpans[0].spans[1]: traceId must be 16 bytes, got 15',
    );
  });

  it('accepts an empty parent id as a root span', () => {
    const decoded = decodeTraceRequestProtobuf(
      requestOf(spanWith(new Uint8Array(16).fill(1), new Uint8Array(8).fill(2), new Uint8Array(0))),
    );
    assert.equal(decoded.rejected, 0);
    assert.equal(decoded.batch.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.parentSpanId, '');
  });

  it('leaves out scopes and resources whose spans were all rejected', () => {
    const decoded = decodeTraceRequestProtobuf(requestOf(spanWith(new Uint8Array(3), new Uint8Array(8))));
    assert.deepEqual(decoded.batch, { resourceSpans: [] });
    assert.equal(decoded.rejected, 1);
  });
});
