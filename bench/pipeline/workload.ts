// The proxy benchmarks' workloads (proxy.ts, stages.ts, bench/gateway): OTLP requests (protobuf, or JSON) of
// traces in one of the span shapes of shapes.ts — one per convention that instrumented agents send,
// and a held-out mix — each request with fresh ids. `realistic` (the default) is about 1.4 KB per
// span on the wire; `small` (about 390 bytes per span, the root first) is the workload of the figures
// before 2026-11-24. Children come before their parent, as an SDK's batch span processor exports them.

import { randomBytes } from 'node:crypto';
import type { Span, SpanBatch } from '../../src/model/spans.ts';
import { encodeTraceRequestJson, encodeTraceRequestProtobuf } from '../../src/otlp/encode.ts';
import { makeBatch as batchOf, plainSpan } from '../../src/testkit/spans.ts';
import { SHAPES } from './shapes.ts';
import type { SpanMaker } from './shapes.ts';

export type Payload = keyof typeof SHAPES;
export const PAYLOADS = Object.keys(SHAPES) as Payload[];

/** What `--payload` names: one payload, or `all` of them in turn. */
export function payloadsOf(option: string): Payload[] {
  if (option === 'all') return PAYLOADS;
  const chosen = option.split(',');
  for (const name of chosen)
    if (!(PAYLOADS as string[]).includes(name))
      throw new Error(`--payload must be all or one of ${PAYLOADS.join(', ')} (comma-separated), not ${name}`);
  return chosen as Payload[];
}

export function describePayload(payload: Payload): string {
  return SHAPES[payload].description;
}

/** One request of `spans` spans, in traces of `payload`'s shape. */
export function makeBatch(spans: number, sequence: number, payload: Payload = 'realistic'): SpanBatch {
  const shape = SHAPES[payload];
  const list: Span[] = [];
  const base = BigInt(Date.now()) * 1_000_000n;
  const token = () => randomBytes(12).toString('base64url');
  while (list.length < spans) {
    const traceId = randomBytes(16).toString('hex');
    const rootId = randomBytes(8).toString('hex');
    const span: SpanMaker = (name, parent, kind, attributes, offset, events = []) =>
      plainSpan({
        traceId,
        spanId: parent === '' ? rootId : randomBytes(8).toString('hex'),
        parentSpanId: parent === '' ? '' : rootId,
        flags: 1,
        name,
        kind,
        startTimeUnixNano: base + offset,
        endTimeUnixNano: base + offset + 900_000_000n,
        attributes,
        events: events.map((event) => ({ ...event, timeUnixNano: base + event.timeUnixNano })),
      });
    list.push(...shape.trace(span, { sequence, index: list.length, token }));
  }
  // When the traces do not fill the request exactly, the first trace loses its first spans rather
  // than the last its last ones: a request then starts with the end of a trace whose children came
  // in an earlier request, as a batch span processor cuts a stream of spans, instead of ending with
  // children whose root never comes (which the batcher would hold as orphans).
  return batchOf(list.slice(list.length - spans), {
    resource: shape.resource(sequence),
    scope: { name: 'bench', version: '1.0.0' },
  });
}

/** How requests are encoded: OTLP/protobuf, or OTLP/JSON (hex ids, 64-bit integers as strings). */
export type Encoding = 'protobuf' | 'json';

/** What `--encoding` names. */
export function encodingOf(option: string): Encoding {
  if (option !== 'protobuf' && option !== 'json') throw new Error(`--encoding is protobuf or json, not ${option}`);
  return option;
}

/** A request body of `batch` in `encoding`. */
export function encodeRequest(batch: SpanBatch, encoding: Encoding): Buffer {
  return encoding === 'json'
    ? Buffer.from(JSON.stringify(encodeTraceRequestJson(batch)))
    : Buffer.from(encodeTraceRequestProtobuf(batch));
}

/** The same request, encoded (OTLP/protobuf by default). */
export function makeRequest(
  spans: number,
  sequence: number,
  payload: Payload = 'realistic',
  encoding: Encoding = 'protobuf',
): Buffer {
  return encodeRequest(makeBatch(spans, sequence, payload), encoding);
}
