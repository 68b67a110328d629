// Tests of the `batch` processor: the conformance kit, the three flush triggers, children that
// arrive before their parents across separate consume() calls, missing parents, a 10 000-run trace,
// interleaved tenants, back-pressure, downstream failures and the shutdown flush. Every batch that
// leaves is checked against the dotted_order invariants (see `checkInvariants`).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { defaultsOf, eventually, Sink, nopSettings, runComponentConformance } from 'tracepipe/testing';
import type { Run, RunBatch, RunTreeHints, RequestContext } from 'tracepipe/plugin';
import {
  Delivery,
  DeliveryGroup,
  encodedRunJson,
  holdDelivery,
  PermanentError,
  runJson,
  ThrottleError,
} from 'tracepipe/plugin';
import { BatchProcessor } from './batcher.ts';
import type { BatchProcessorConfig } from './config.ts';
import { configSchema } from './config.ts';
import { batchProcessorFactory } from './index.ts';
import { assertBatchInvariants } from './testing/invariants.ts';

const TRACE = '01020304-0506-0708-090a-0b0c0d0e0f10';
const TENANT_A: RequestContext = { project: 'default', apiKey: 'key-a' };
const TENANT_B: RequestContext = { project: 'other', apiKey: 'key-b' };

/** A run id from a number: `00000000-0000-0000-0000-00000000002a`. */
function rid(n: number): string {
  return `00000000-0000-0000-0000-${n.toString(16).padStart(12, '0')}`;
}

function run(id: string, parent?: string, options: { trace?: string; startMs?: number; bytes?: number } = {}): Run {
  const start = new Date(Date.UTC(2023, 10, 14, 22, 13, 20) + (options.startMs ?? 0)).toISOString();
  const value: Run = {
    id,
    trace_id: options.trace ?? TRACE,
    name: `run-${id.slice(-4)}`,
    run_type: 'chain',
    start_time: start,
    end_time: start,
    status: 'success',
    session_name: 'default',
  };
  if (parent !== undefined) value.parent_run_id = parent;
  if (options.bytes !== undefined) value.inputs = { text: 'x'.repeat(options.bytes) };
  return value;
}

function batch(runs: Run[], hints?: RunTreeHints): RunBatch {
  return hints ? { runs, hints } : { runs };
}

function config(overrides: Partial<BatchProcessorConfig> = {}): BatchProcessorConfig {
  return { ...(defaultsOf(configSchema) as unknown as BatchProcessorConfig), ...overrides };
}

function create(overrides: Partial<BatchProcessorConfig> = {}) {
  const sink = new Sink<'runs'>();
  const settings = nopSettings('processor', 'batch');
  const processor = new BatchProcessor(settings, config(overrides), sink);
  const metric = async (name: string, labels: Record<string, string> = {}): Promise<number> => {
    const found = await settings.host.metrics.getSingleMetric(name)?.get();
    return (found?.values ?? [])
      .filter((value) => Object.entries(labels).every(([key, label]) => value.labels[key] === label))
      .reduce((sum, value) => sum + value.value, 0);
  };
  return { processor, sink, settings, metric };
}

function delivered(sink: Sink<'runs'>): Run[] {
  return sink.batches.flatMap((item) => item.data.runs);
}

/** The processor's output invariants (testing/invariants.ts), each run under its tenant's key. */
function checkInvariants(
  sink: Sink<'runs'>,
  limits: { batchSize: number; maxBytes: number },
  phantomRoots = false,
): void {
  assertBatchInvariants(sink, { limits, keyOf: tenantOf, phantomRoots });
}

// Runs of tenant B, registered by the test that sends them (all others are tenant A's), so that
// the key each run leaves with can be checked.
const tenants = new Map<string, string | undefined>();
function tenantOf(item: Run): string | undefined {
  return tenants.has(item.id) ? tenants.get(item.id) : 'key-a';
}

const DEFAULT_LIMITS = { batchSize: 100, maxBytes: 10485760 };

runComponentConformance(batchProcessorFactory, {
  testdataDir: join(import.meta.dirname, 'testdata'),
  config: { flush_interval_ms: 50 },
  sample: () => batch([run(TRACE), run(rid(1), TRACE)]),
});

describe('batch: flush triggers', () => {
  it('flushes when batch_size runs are buffered', async () => {
    const { processor, sink, metric } = create({ batch_size: 3, flush_interval_ms: 60_000 });
    await processor.start(new AbortController().signal);
    const roots = Array.from({ length: 7 }, (_, n) => run(rid(n + 1), undefined, { trace: rid(n + 1) }));
    await processor.consume(batch(roots), TENANT_A);
    await sink.waitFor(() => sink.batches.length === 2);
    assert.deepEqual(
      sink.batches.map((item) => item.data.runs.length),
      [3, 3],
    );
    assert.equal(await metric('tracepipe_batch_flushes_total', { trigger: 'size' }), 2);
    await processor.shutdown(Date.now() + 1000);
    assert.deepEqual(
      sink.batches.map((item) => item.data.runs.length),
      [3, 3, 1],
    );
    assert.equal(await metric('tracepipe_batch_flushes_total', { trigger: 'shutdown' }), 1);
    checkInvariants(sink, { batchSize: 3, maxBytes: DEFAULT_LIMITS.maxBytes });
  });

  it('flushes before a batch would pass max_buffer_bytes', async () => {
    const { processor, sink, metric } = create({ max_buffer_bytes: 2048, flush_interval_ms: 60_000 });
    await processor.start(new AbortController().signal);
    const roots = Array.from({ length: 9 }, (_, n) => run(rid(n + 1), undefined, { trace: rid(n + 1), bytes: 600 }));
    for (const root of roots) await processor.consume(batch([root]), TENANT_A);
    await sink.waitFor(() => delivered(sink).length >= 6);
    assert.ok((await metric('tracepipe_batch_flushes_total', { trigger: 'bytes' })) >= 3);
    await processor.shutdown(Date.now() + 1000);
    assert.equal(delivered(sink).length, 9);
    checkInvariants(sink, { batchSize: 100, maxBytes: 2048 });
  });

  it('flushes what is buffered every flush_interval_ms', async () => {
    const { processor, sink, metric } = create({ flush_interval_ms: 20 });
    await processor.start(new AbortController().signal);
    await processor.consume(batch([run(TRACE)]), TENANT_A);
    await sink.waitFor(() => sink.batches.length === 1);
    assert.equal(await metric('tracepipe_batch_flushes_total', { trigger: 'interval' }), 1);
    assert.equal(sink.batches[0]!.data.runs[0]!.dotted_order, `20231114T221320000000Z${TRACE}`);
    await processor.shutdown(Date.now() + 1000);
    checkInvariants(sink, DEFAULT_LIMITS);
  });
});

describe('batch: run JSON for the exporter', () => {
  /** A processor whose downstream says whether it writes to the runs it is given. */
  function withDownstream(mutatesData: boolean) {
    const batches: RunBatch[] = [];
    const processor = new BatchProcessor(nopSettings('processor', 'batch'), config({ flush_interval_ms: 60_000 }), {
      mutatesData,
      consume: async (data) => void batches.push(data),
    });
    return { processor, batches };
  }

  it("leaves each released run's JSON text on it, as the run reads once its dotted order is set", async () => {
    const { processor, batches } = withDownstream(false);
    const child = run(rid(1), TRACE, { bytes: 10 });
    child.extra = { metadata: { kind: 'tool' } };
    await processor.consume(batch([child]), TENANT_A); // waits for its parent
    await processor.consume(batch([run(TRACE)]), TENANT_A);
    await processor.shutdown(Date.now() + 1000);
    const runs = batches.flatMap((item) => item.runs);
    assert.equal(runs.length, 2);
    for (const item of runs) {
      const json = encodedRunJson(item);
      assert.ok(json, 'text attached');
      assert.ok(item.dotted_order);
      assert.deepEqual(json, runJson(item));
    }
  });

  it('leaves no text when something downstream writes to runs, nor on a run that cannot be encoded', async () => {
    const mutating = withDownstream(true);
    await mutating.processor.consume(batch([run(TRACE)]), TENANT_A);
    await mutating.processor.shutdown(Date.now() + 1000);
    assert.equal(encodedRunJson(mutating.batches[0]!.runs[0]!), undefined);

    const readOnly = withDownstream(false);
    const bigint = run(rid(2), undefined, { trace: rid(2) });
    bigint.outputs = { n: 1n as unknown };
    await readOnly.processor.consume(batch([bigint]), TENANT_A);
    await readOnly.processor.shutdown(Date.now() + 1000);
    // Passed on as it is: the exporter refuses it whole.
    assert.equal(readOnly.batches[0]!.runs[0], bigint);
    assert.equal(encodedRunJson(bigint), undefined);
  });
});

describe('batch: trace order', () => {
  it('holds children that arrive first, across separate consume() calls, until their parents come', async () => {
    const { processor, sink, metric } = create({ flush_interval_ms: 60_000 });
    const rootSpanAlias = '00000000-0000-0000-1111-111111111111';
    const child = rid(0x22);
    const grandchild = rid(0x33);
    await processor.consume(batch([run(grandchild, child, { startMs: 300 })]), TENANT_A);
    await processor.consume(batch([run(child, rootSpanAlias, { startMs: 200 })]), TENANT_A);
    assert.equal(await metric('tracepipe_batch_runs_held', { state: 'waiting' }), 2);
    await processor.consume(
      batch([run(TRACE, undefined, { startMs: 0 })], { rootAliases: { [rootSpanAlias]: TRACE } }),
      TENANT_A,
    );
    // A late child still addressed to the alias (its translator had forgotten the root).
    await processor.consume(batch([run(rid(0x44), rootSpanAlias, { startMs: 400 })]), TENANT_A);
    await processor.shutdown(Date.now() + 1000);

    const byId = new Map(delivered(sink).map((item) => [item.id, item]));
    assert.deepEqual(
      delivered(sink).map((item) => item.id),
      [TRACE, child, grandchild, rid(0x44)],
    );
    const rootSegment = `20231114T221320000000Z${TRACE}`;
    assert.equal(byId.get(TRACE)!.dotted_order, rootSegment);
    assert.equal(byId.get(child)!.parent_run_id, TRACE);
    assert.equal(byId.get(child)!.dotted_order, `${rootSegment}.20231114T221320200000Z${child}`);
    assert.equal(
      byId.get(grandchild)!.dotted_order,
      `${rootSegment}.20231114T221320200000Z${child}.20231114T221320300000Z${grandchild}`,
    );
    assert.equal(byId.get(rid(0x44))!.parent_run_id, TRACE);
    assert.equal(await metric('tracepipe_batch_orphans_total'), 0);
    checkInvariants(sink, DEFAULT_LIMITS);
  });

  it('gives late children of an already-sent parent their place', async () => {
    const { processor, sink } = create({ batch_size: 1 });
    await processor.consume(batch([run(TRACE), run(rid(1), TRACE)]), TENANT_A);
    await sink.waitFor(() => sink.batches.length === 2);
    await processor.consume(batch([run(rid(2), rid(1), { startMs: 5 })]), TENANT_A);
    await sink.waitFor(() => sink.batches.length === 3);
    assert.equal(
      sink.batches[2]!.data.runs[0]!.dotted_order,
      `20231114T221320000000Z${TRACE}.20231114T221320000000Z${rid(1)}.20231114T221320005000Z${rid(2)}`,
    );
    await processor.shutdown(Date.now() + 1000);
    checkInvariants(sink, { batchSize: 1, maxBytes: DEFAULT_LIMITS.maxBytes });
  });

  it('forgets the oldest sent orders past max_remembered_bytes: a late child of a forgotten parent falls back as an orphan', async () => {
    const budget = 1024 * 1024;
    const { processor, sink, metric } = create({
      max_remembered_bytes: budget,
      flush_interval_ms: 10,
      orphan_timeout_ms: 30,
    });
    await processor.start(new AbortController().signal);
    // 40,000 one-run traces: 32 bytes of packed order each, more than the budget holds.
    const roots = 40_000;
    for (let first = 1; first <= roots; first += 1000) {
      const runs = Array.from({ length: 1000 }, (_, i) => run(rid(first + i), undefined, { trace: rid(first + i) }));
      await processor.consume(batch(runs), TENANT_A);
    }
    await sink.waitFor(() => delivered(sink).length === roots);
    const remembered = await metric('tracepipe_batch_remembered_bytes');
    assert.ok(remembered > budget / 2 && remembered <= budget, `${remembered} bytes remembered`);

    // The newest root is still remembered: its late child is placed at once, under it.
    const newest = rid(roots);
    await processor.consume(batch([run(rid(0x100000), newest, { trace: newest, startMs: 5 })]), TENANT_A);
    // The oldest was forgotten: its late child waits, then falls back under a stand-in of its root.
    const oldest = rid(1);
    await processor.consume(batch([run(rid(0x100001), oldest, { trace: oldest, startMs: 5 })]), TENANT_A);
    await sink.waitFor(() => delivered(sink).length === roots + 2);
    const byId = new Map(delivered(sink).map((item) => [item.id, item]));
    assert.equal(
      byId.get(rid(0x100000))!.dotted_order,
      `20231114T221320000000Z${newest}.20231114T221320005000Z${rid(0x100000)}`,
    );
    assert.equal(byId.get(rid(0x100001))!.parent_run_id, oldest);
    assert.equal(await metric('tracepipe_batch_orphans_total', { policy: 'attach_to_root' }), 1);
    await processor.shutdown(Date.now() + 1000);
  });

  it('re-parents children waiting for a run the translator filtered out', async () => {
    const { processor, sink } = create();
    const dropped = rid(0x10);
    await processor.consume(batch([run(rid(1), dropped, { startMs: 10 })]), TENANT_A);
    await processor.consume(batch([run(TRACE)], { droppedRuns: { [dropped]: TRACE } }), TENANT_A);
    // A second trace whose filtered root leaves its child without any kept ancestor.
    const otherTrace = rid(0x900);
    await processor.consume(batch([run(rid(2), rid(0x901), { trace: otherTrace })]), TENANT_A);
    await processor.consume(batch([], { droppedRuns: { [rid(0x901)]: null } }), TENANT_A);
    await processor.shutdown(Date.now() + 1000);
    const byId = new Map(delivered(sink).map((item) => [item.id, item]));
    assert.equal(byId.get(rid(1))!.parent_run_id, TRACE);
    assert.equal(byId.get(rid(2))!.parent_run_id, undefined);
    assert.equal(byId.get(rid(2))!.trace_id, rid(2));
    checkInvariants(sink, DEFAULT_LIMITS);
  });

  it('attaches a child whose parent never comes under its trace root after orphan_timeout_ms, and counts it', async () => {
    const { processor, sink, metric } = create({ flush_interval_ms: 10, orphan_timeout_ms: 30 });
    await processor.start(new AbortController().signal);
    // The root is known; the middle run never arrives.
    await processor.consume(batch([run(TRACE)]), TENANT_A);
    await processor.consume(
      batch([run(rid(2), rid(1), { startMs: 50 }), run(rid(3), rid(2), { startMs: 60 })]),
      TENANT_A,
    );
    await sink.waitFor(() => delivered(sink).length === 3);
    const byId = new Map(delivered(sink).map((item) => [item.id, item]));
    assert.equal(byId.get(rid(2))!.parent_run_id, TRACE);
    assert.equal(byId.get(rid(2))!.dotted_order, `20231114T221320000000Z${TRACE}.20231114T221320050000Z${rid(2)}`);
    // Its own child keeps its real parent.
    assert.equal(byId.get(rid(3))!.parent_run_id, rid(2));
    assert.equal(await metric('tracepipe_batch_orphans_total', { policy: 'attach_to_root' }), 1);
    await processor.shutdown(Date.now() + 1000);
    checkInvariants(sink, DEFAULT_LIMITS);
  });

  it('attaches orphans of a trace whose root never comes under one phantom root segment', async () => {
    const { processor, sink, metric } = create({ flush_interval_ms: 10, orphan_timeout_ms: 20 });
    await processor.start(new AbortController().signal);
    await processor.consume(
      batch([run(rid(2), rid(1), { startMs: 70 }), run(rid(3), rid(9), { startMs: 40 })]),
      TENANT_A,
    );
    await sink.waitFor(() => delivered(sink).length === 2);
    const phantom = `20231114T221320040000Z${TRACE}`;
    for (const item of delivered(sink)) {
      assert.equal(item.parent_run_id, TRACE);
      assert.ok(item.dotted_order!.startsWith(`${phantom}.`));
    }
    assert.equal(await metric('tracepipe_batch_orphans_total'), 2);
    await processor.shutdown(Date.now() + 1000);
    checkInvariants(sink, DEFAULT_LIMITS, true);
  });

  it('promotes an orphan (and its subtree) to a trace of its own with orphan_policy promote_to_root', async () => {
    const { processor, sink, metric } = create({
      flush_interval_ms: 10,
      orphan_timeout_ms: 20,
      orphan_policy: 'promote_to_root',
    });
    await processor.start(new AbortController().signal);
    await processor.consume(batch([run(rid(3), rid(2)), run(rid(2), rid(1))]), TENANT_A);
    await sink.waitFor(() => delivered(sink).length === 2);
    const byId = new Map(delivered(sink).map((item) => [item.id, item]));
    assert.equal(byId.get(rid(2))!.parent_run_id, undefined);
    assert.equal(byId.get(rid(2))!.trace_id, rid(2));
    assert.equal(byId.get(rid(3))!.trace_id, rid(2));
    assert.equal(await metric('tracepipe_batch_orphans_total', { policy: 'promote_to_root' }), 1);
    await processor.shutdown(Date.now() + 1000);
    checkInvariants(sink, DEFAULT_LIMITS);
  });

  it('orders a 10 000-run trace that arrives children first in 100 requests', async () => {
    const { processor, sink } = create({ flush_interval_ms: 60_000 });
    // A tree of depth up to ~14: run n's parent is a random earlier run.
    const random = seeded(42);
    const runs: Run[] = [run(TRACE)];
    for (let n = 1; n < 10_000; n++) {
      const parent = n === 1 ? TRACE : runs[Math.floor(random() * n)]!.id;
      runs.push(run(rid(n), parent, { startMs: n }));
    }
    const arrival = [...runs].reverse();
    for (let offset = 0; offset < arrival.length; offset += 100) {
      await processor.consume(batch(arrival.slice(offset, offset + 100)), TENANT_A);
    }
    await processor.shutdown(Date.now() + 5000);
    assert.equal(delivered(sink).length, 10_000);
    assert.ok(sink.batches.every((item) => item.data.runs.length === 100));
    checkInvariants(sink, DEFAULT_LIMITS);
  });

  it('keeps the invariants for any arrival order and request split (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 15 }),
        async (parentPicks, seed, batchSize, requestSize) => {
          const { processor, sink, metric } = create({ batch_size: batchSize, flush_interval_ms: 60_000 });
          const runs: Run[] = [run(TRACE)];
          parentPicks.forEach((pick, index) =>
            runs.push(run(rid(index + 1), runs[pick % runs.length]!.id, { startMs: index + 1 })),
          );
          const arrival = shuffle(runs, seeded(seed));
          for (let offset = 0; offset < arrival.length; offset += requestSize) {
            await processor.consume(batch(arrival.slice(offset, offset + requestSize)), TENANT_A);
          }
          await processor.shutdown(Date.now() + 5000);
          assert.equal(delivered(sink).length, runs.length);
          assert.equal(await metric('tracepipe_batch_orphans_total'), 0);
          checkInvariants(sink, { batchSize, maxBytes: DEFAULT_LIMITS.maxBytes });
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('batch: bad input', () => {
  it('releases runs waiting in a parent cycle (a run naming itself or its child as parent)', async () => {
    const { processor, sink } = create({ flush_interval_ms: 60_000 });
    await processor.consume(batch([run(rid(1), rid(1)), run(rid(2), rid(3)), run(rid(3), rid(2))]), TENANT_A);
    await processor.shutdown(Date.now() + 1000);
    assert.deepEqual(new Set(delivered(sink).map((item) => item.id)), new Set([rid(1), rid(2), rid(3)]));
    checkInvariants(sink, DEFAULT_LIMITS, true);
  });

  it('orders a run whose start time is not RFC 3339 at the epoch instead of failing', async () => {
    const { processor, sink } = create();
    const odd = run(TRACE);
    odd.start_time = 'not a time';
    const offset = run(rid(1), TRACE);
    offset.start_time = '2023-11-14T23:13:20.5+01:00';
    await processor.consume(batch([odd, offset]), TENANT_A);
    await processor.shutdown(Date.now() + 1000);
    assert.deepEqual(
      delivered(sink).map((item) => item.dotted_order),
      [`19700101T000000000000Z${TRACE}`, `19700101T000000000000Z${TRACE}.20231114T221320500000Z${rid(1)}`],
    );
  });
});

describe('batch: tenants and back-pressure', () => {
  it('never mixes API keys in one batch, and uploads each tenant with its own key', async () => {
    const { processor, sink } = create({ batch_size: 4, flush_interval_ms: 60_000 });
    const traceB = rid(0xb00);
    for (let n = 1; n <= 10; n++) {
      const a = run(rid(n), n === 1 ? undefined : rid(n - 1), { trace: rid(1) });
      const b = run(rid(0xb00 + n), n === 1 ? undefined : rid(0xb00 + n - 1), { trace: traceB });
      if (n === 1) a.trace_id = a.id;
      if (n === 1) b.trace_id = b.id;
      tenants.set(b.id, 'key-b');
      await processor.consume(batch([a]), TENANT_A);
      await processor.consume(batch([b]), TENANT_B);
    }
    await processor.shutdown(Date.now() + 1000);
    assert.equal(delivered(sink).length, 20);
    for (const { data, context } of sink.batches) {
      assert.ok(data.runs.every((item) => tenantOf(item) === context.apiKey));
    }
    checkInvariants(sink, { batchSize: 4, maxBytes: DEFAULT_LIMITS.maxBytes });
    tenants.clear();
  });

  it('refuses with a ThrottleError past max_held_runs, taking nothing of the refused batch, yet lets in the parent held runs wait for', async () => {
    const { processor, sink, metric } = create({ batch_size: 5, max_held_runs: 5, flush_interval_ms: 60_000 });
    await processor.consume(batch([1, 2, 3, 4].map((n) => run(rid(n), rid(0x99)))), TENANT_A);
    const refused = await processor
      .consume(batch([run(rid(5), rid(0x99)), run(rid(6), rid(0x99))]), TENANT_A)
      .catch((error) => error);
    assert.ok(refused instanceof ThrottleError);
    assert.equal(refused.retryAfterMs, 60_000);
    assert.equal(await metric('tracepipe_batch_throttled_runs_total'), 2);
    assert.equal(await metric('tracepipe_batch_runs_held', { state: 'waiting' }), 4);
    await processor.consume(batch([run(rid(5), rid(0x99))]), TENANT_A);
    // Full, but the parent they all wait for is let in: it frees them.
    await assert.rejects(processor.consume(batch([run(rid(6), rid(0x99))]), TENANT_A), ThrottleError);
    await processor.consume(batch([run(rid(0x99), TRACE), run(TRACE)]), TENANT_A);
    await processor.shutdown(Date.now() + 1000);
    assert.equal(delivered(sink).length, 7);
    assert.equal(await metric('tracepipe_batch_orphans_total'), 0);
  });

  it('counts no burst that downstream takes at once against max_backlog_runs', async () => {
    // 40 requests of 1,000 runs with flush ticks between them: each batch is taken as it is sealed.
    const { processor, sink, metric } = create({ max_backlog_runs: 1000, flush_interval_ms: 5 });
    await processor.start(new AbortController().signal);
    for (let first = 1; first <= 40_000; first += 1000) {
      const runs = Array.from({ length: 1000 }, (_, i) => run(rid(first + i), undefined, { trace: rid(first + i) }));
      await processor.consume(batch(runs), TENANT_A);
      await new Promise((resolve) => setTimeout(resolve, 1)); // a turn for the flush timer
    }
    await sink.waitFor(() => delivered(sink).length === 40_000);
    assert.equal(await metric('tracepipe_batch_throttled_runs_total'), 0);
    await processor.shutdown(Date.now() + 1000);
  });

  it('refuses past max_backlog_runs once downstream refuses, and takes runs again once it catches up', async () => {
    let refusing = true;
    const taken: Run[] = [];
    const processor = new BatchProcessor(
      nopSettings('processor', 'batch'),
      config({ batch_size: 100, max_backlog_runs: 250, flush_interval_ms: 10 }),
      {
        mutatesData: false,
        consume: async (data) => {
          if (refusing) throw new ThrottleError('full', 10);
          taken.push(...data.runs);
        },
      },
    );
    await processor.start(new AbortController().signal);
    const roots = (first: number) =>
      batch(Array.from({ length: 100 }, (_, i) => run(rid(first + i), undefined, { trace: rid(first + i) })));
    await processor.consume(roots(1), TENANT_A); // sealed and refused downstream: behind at once
    await processor.consume(roots(101), TENANT_A);
    await assert.rejects(processor.consume(roots(201), TENANT_A), /downstream is behind by 200 runs/);
    refusing = false;
    await eventually(() => assert.equal(taken.length, 200));
    await processor.consume(roots(201), TENANT_A);
    await processor.shutdown(Date.now() + 1000);
    assert.equal(taken.length, 300);
  });

  it('refuses past max_held_bytes', async () => {
    const { processor } = create({ max_buffer_bytes: 1024, max_held_bytes: 4096, flush_interval_ms: 60_000 });
    await processor.consume(batch([run(rid(1), rid(0x99), { bytes: 3000 })]), TENANT_A);
    await assert.rejects(processor.consume(batch([run(rid(2), rid(0x99), { bytes: 3000 })]), TENANT_A), ThrottleError);
    await processor.shutdown(Date.now() + 1000);
  });

  it('keeps a batch that downstream fails to take and retries it, in order', async () => {
    const { processor, sink } = create({ batch_size: 2, flush_interval_ms: 10 });
    await processor.start(new AbortController().signal);
    let failures = 3;
    sink.fail = () => (failures-- > 0 ? new Error('exporter unavailable') : undefined);
    await processor.consume(
      batch([run(TRACE), run(rid(1), TRACE), run(rid(2), rid(1)), run(rid(3), rid(2))]),
      TENANT_A,
    );
    await sink.waitFor(() => delivered(sink).length === 4);
    assert.deepEqual(
      delivered(sink).map((item) => item.id),
      [TRACE, rid(1), rid(2), rid(3)],
    );
    await processor.shutdown(Date.now() + 1000);
    checkInvariants(sink, { batchSize: 2, maxBytes: DEFAULT_LIMITS.maxBytes });
  });

  it('drops (and counts) a batch that downstream rejects as permanently invalid', async () => {
    const { processor, sink, metric } = create({ flush_interval_ms: 60_000 });
    sink.fail = (data) => (data.runs.some((item) => item.name === 'run-0001') ? new PermanentError('422') : undefined);
    await processor.consume(batch([run(rid(1), undefined, { trace: rid(1) })]), TENANT_A);
    await processor.shutdown(Date.now() + 1000);
    assert.equal(await metric('tracepipe_component_items_dropped_total', { reason: 'rejected_downstream' }), 1);
  });

  it('sends a run larger than max_buffer_bytes in a batch of its own, between the runs before and after it', async () => {
    const { processor, sink, metric } = create({ max_buffer_bytes: 1024, flush_interval_ms: 60_000 });
    await processor.consume(
      batch([run(rid(2), undefined, { trace: rid(2) }), run(TRACE, undefined, { bytes: 5000 }), run(rid(1), TRACE)]),
      TENANT_A,
    );
    await processor.shutdown(Date.now() + 1000);
    assert.deepEqual(
      sink.batches.map((item) => item.data.runs.map((r) => r.id)),
      [[rid(2)], [TRACE], [rid(1)]],
    );
    assert.equal(delivered(sink)[2]!.dotted_order, `20231114T221320000000Z${TRACE}.20231114T221320000000Z${rid(1)}`);
    assert.equal(await metric('tracepipe_component_items_dropped_total', { reason: 'too_large' }), 0);
    checkInvariants(sink, { batchSize: 100, maxBytes: 1024 });
  });
});

describe('batch: shutdown', () => {
  it('flushes everything held on shutdown; waiting orphans fall back at once', async () => {
    const { processor, sink, metric } = create({ orphan_timeout_ms: 600_000, flush_interval_ms: 60_000 });
    await processor.start(new AbortController().signal);
    await processor.consume(batch([run(rid(1), rid(0x99)), run(TRACE), run(rid(2), TRACE)]), TENANT_A);
    await processor.shutdown(Date.now() + 1000);
    assert.deepEqual(new Set(delivered(sink).map((item) => item.id)), new Set([TRACE, rid(1), rid(2)]));
    assert.equal(await metric('tracepipe_batch_orphans_total'), 1);
    assert.equal(await metric('tracepipe_batch_runs_held'), 0);
    await assert.rejects(processor.consume(batch([run(rid(3), TRACE)]), TENANT_A));
    checkInvariants(sink, DEFAULT_LIMITS);
  });

  it('gives up at the deadline when downstream keeps failing, and counts what was lost', async () => {
    const { processor, sink, metric } = create({ flush_interval_ms: 60_000 });
    sink.fail = () => new Error('down');
    await processor.consume(batch([run(TRACE), run(rid(1), TRACE)]), TENANT_A);
    await processor.shutdown(Date.now() + 150);
    assert.equal(await metric('tracepipe_component_items_dropped_total', { reason: 'shutdown_deadline' }), 2);
    await processor.shutdown(Date.now() + 150);
  });

  it('returns by the deadline even when downstream never answers', async () => {
    let calls = 0;
    const processor = new BatchProcessor(nopSettings('processor', 'batch'), config({ flush_interval_ms: 60_000 }), {
      mutatesData: false,
      consume: () => (calls++, new Promise<void>(() => {})),
    });
    await processor.consume(batch([run(TRACE)]), TENANT_A);
    await processor.shutdown(Date.now() + 100);
    assert.equal(calls, 1);
  });
});

describe('batch: delivery of acknowledged requests', () => {
  /** A request's delivery as a receiver makes it: the receiver's reference is released after consume. */
  async function consumeTracked(processor: BatchProcessor, runs: Run[], durable = true) {
    const state = { settled: false };
    const delivery = new Delivery(durable, () => (state.settled = true));
    try {
      await processor.consume(batch(runs), { ...TENANT_A, delivery });
    } finally {
      delivery.release();
    }
    return state;
  }

  it('holds a request until every run of it has been delivered downstream, across batches', async () => {
    const { processor, sink } = create({ batch_size: 2, flush_interval_ms: 60_000, orphan_timeout_ms: 600_000 });
    const parent = rid(0x50);
    // The child waits for its parent, which arrives with another request.
    const first = await consumeTracked(processor, [run(TRACE), run(rid(1), parent)]);
    assert.equal(first.settled, false);
    const second = await consumeTracked(processor, [run(parent, TRACE)]);
    await sink.waitFor(() => delivered(sink).length === 2);
    // The first request's child is still in the open batch.
    assert.equal(first.settled, false);
    await processor.shutdown(Date.now() + 1000);
    assert.equal(delivered(sink).length, 3);
    assert.equal(first.settled, true);
    assert.equal(second.settled, true);
    // The context downstream carries one delivery standing for the batch's requests.
    assert.ok(sink.deliveries.every((delivery) => delivery instanceof DeliveryGroup));
  });

  it('settles only once downstream lets go of what it kept', async () => {
    const held: (() => void)[] = [];
    const processor = new BatchProcessor(nopSettings('processor', 'batch'), config({ flush_interval_ms: 60_000 }), {
      mutatesData: false,
      consume: async (_data, context) => void held.push(holdDelivery(context.delivery)),
    });
    const request = await consumeTracked(processor, [run(TRACE)]);
    await processor.shutdown(Date.now() + 1000);
    assert.equal(held.length, 1);
    assert.equal(request.settled, false);
    held[0]!();
    assert.equal(request.settled, true);
  });

  it('at a deadline it cannot meet, leaves journaled runs to the journal instead of counting them lost', async () => {
    for (const durable of [true, false]) {
      const { processor, sink, metric } = create({ flush_interval_ms: 60_000 });
      sink.fail = () => new Error('down');
      const request = await consumeTracked(processor, [run(TRACE), run(rid(1), TRACE)], durable);
      await processor.shutdown(Date.now() + 100);
      assert.equal(request.settled, false, 'nothing was delivered');
      assert.equal(
        await metric('tracepipe_component_items_dropped_total', { reason: 'shutdown_deadline' }),
        durable ? 0 : 2,
      );
    }
  });

  it('settles a run larger than max_buffer_bytes once it is delivered, in a batch of its own', async () => {
    const { processor, sink, metric } = create({ max_buffer_bytes: 1000, flush_interval_ms: 60_000 });
    const request = await consumeTracked(processor, [run(TRACE, undefined, { bytes: 5000 })]);
    await processor.shutdown(Date.now() + 1000);
    assert.equal(request.settled, true);
    assert.deepEqual(
      delivered(sink).map((item) => item.id),
      [TRACE],
    );
    assert.equal(await metric('tracepipe_component_items_dropped_total', { reason: 'too_large' }), 0);
  });

  it('counts items sent once (the framework counts them on the output)', async () => {
    const { processor, metric } = create({ flush_interval_ms: 60_000 });
    await processor.consume(batch([run(TRACE)]), TENANT_A);
    await processor.shutdown(Date.now() + 1000);
    assert.equal(await metric('tracepipe_component_items_sent_total'), 0);
  });
});

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

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
