// The genai and batch processors together: spans that arrive children first, across requests,
// come out of genai as runs and out of batch as one trace in order, each run's dotted order naming
// its ancestors (the invariants the batch processor's own tests check on every output, in
// plugins/processors/batch/batch.test.ts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Sink, configFor, makeBatch, nopSettings, plainSpan } from 'tracepipe/testing';
import type { RequestContext, Run, SpanBatch } from 'tracepipe/plugin';
import { batchProcessorFactory } from '../../plugins/processors/batch/index.ts';
import type { BatchProcessorConfig } from '../../plugins/processors/batch/index.ts';
import { assertBatchInvariants } from '../../plugins/processors/batch/testing/invariants.ts';
import { genAiProcessorFactory } from '../../plugins/processors/genai/index.ts';

const TRACE = '01020304-0506-0708-090a-0b0c0d0e0f10';
const TENANT_A: RequestContext = { project: 'default', apiKey: 'key-a' };
const LIMITS = { batchSize: 100, maxBytes: 10485760 };

/** A batch processor (default settings but `flush_interval_ms`) in front of `sink`. */
function batchProcessor(sink: Sink<'runs'>) {
  const config = configFor<BatchProcessorConfig>(batchProcessorFactory, { flush_interval_ms: 60_000 });
  return batchProcessorFactory.create(nopSettings('processor', 'batch'), config, sink);
}

function delivered(sink: Sink<'runs'>): Run[] {
  return sink.batches.flatMap((item) => item.data.runs);
}

/** The batch processor's output invariants, every run under tenant A's key. */
function checkInvariants(sink: Sink<'runs'>): void {
  assertBatchInvariants(sink, { limits: LIMITS, keyOf: () => TENANT_A.apiKey });
}

function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    // xorshift32: deterministic, so a failing order can be replayed.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

describe('batch: behind the genai translator', () => {
  function spans(...list: { spanId: string; parentSpanId?: string; name: string; startMs: number }[]): SpanBatch {
    return makeBatch(
      list.map((item) =>
        plainSpan({
          spanId: item.spanId,
          parentSpanId: item.parentSpanId ?? '',
          name: item.name,
          startTimeUnixNano: 1_700_000_000_000_000_000n + BigInt(item.startMs) * 1_000_000n,
        }),
      ),
    );
  }

  it('assembles a trace whose spans arrive children first in four requests', async () => {
    const sink = new Sink<'runs'>();
    const batcher = batchProcessor(sink);
    const genai = genAiProcessorFactory.create(
      nopSettings('processor', 'genai'),
      { filter_non_genai: false, generic_otel: false, root_cache_ttl_ms: 300_000, root_cache_max_entries: 1000 },
      batcher,
    );
    await genai.consume(
      spans({ spanId: '3333333333333333', parentSpanId: '2222222222222222', name: 'grandchild', startMs: 300 }),
      TENANT_A,
    );
    await genai.consume(
      spans({ spanId: '2222222222222222', parentSpanId: '1111111111111111', name: 'child', startMs: 200 }),
      TENANT_A,
    );
    await genai.consume(spans({ spanId: '1111111111111111', name: 'root', startMs: 0 }), TENANT_A);
    await genai.consume(
      spans({ spanId: '4444444444444444', parentSpanId: '1111111111111111', name: 'late-child', startMs: 400 }),
      TENANT_A,
    );
    await genai.shutdown(Date.now() + 1000);
    await batcher.shutdown(Date.now() + 1000);
    const rootSegment = `20231114T221320000000Z${TRACE}`;
    const child = `${rootSegment}.20231114T221320200000Z00000000-0000-0000-2222-222222222222`;
    assert.deepEqual(
      delivered(sink).map((item) => [item.name, item.parent_run_id, item.dotted_order]),
      [
        ['root', undefined, rootSegment],
        ['child', TRACE, child],
        [
          'grandchild',
          '00000000-0000-0000-2222-222222222222',
          `${child}.20231114T221320300000Z00000000-0000-0000-3333-333333333333`,
        ],
        ['late-child', TRACE, `${rootSegment}.20231114T221320400000Z00000000-0000-0000-4444-444444444444`],
      ],
    );
    checkInvariants(sink);
  });

  it('assembles a 10 000-span trace sent children first in 100 requests', async () => {
    const sink = new Sink<'runs'>();
    const batcher = batchProcessor(sink);
    const genai = genAiProcessorFactory.create(
      nopSettings('processor', 'genai'),
      { filter_non_genai: false, generic_otel: false, root_cache_ttl_ms: 300_000, root_cache_max_entries: 100_000 },
      batcher,
    );
    const random = seeded(7);
    const hex = (n: number) => (n + 1).toString(16).padStart(16, '0');
    const list = [
      { spanId: hex(0), name: 'root', startMs: 0 } as {
        spanId: string;
        parentSpanId?: string;
        name: string;
        startMs: number;
      },
    ];
    for (let n = 1; n < 10_000; n++)
      list.push({ spanId: hex(n), parentSpanId: hex(Math.floor(random() * n)), name: `span-${n}`, startMs: n });
    const arrival = list.reverse();
    for (let offset = 0; offset < arrival.length; offset += 100)
      await genai.consume(spans(...arrival.slice(offset, offset + 100)), TENANT_A);
    await batcher.shutdown(Date.now() + 5000);
    assert.equal(delivered(sink).length, 10_000);
    assert.equal(delivered(sink)[0]!.id, TRACE);
    assert.ok(delivered(sink).every((item) => item.trace_id === TRACE));
    checkInvariants(sink);
  });
});
