// The store's query API (filters, sorting, cursor pages) and its retention (age and size, whole
// traces only, under an injected clock) on real SQLite files.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Run } from '../model/runs.ts';
import { makeRun } from '../testkit/runs.ts';
import { InvalidCursorError, LocalTraceStore } from './store.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tp-store-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const at = (minute: number, second = 0) =>
  `2026-01-01T12:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}Z`;

/** A root with one LLM child; options shape the root. */
function trace(
  minute: number,
  options: {
    name?: string;
    error?: boolean;
    tags?: string[];
    metadata?: Record<string, unknown>;
    seconds?: number;
    project?: string;
    tokens?: number;
  } = {},
): Run[] {
  const root = makeRun({
    name: options.name ?? `agent ${minute}`,
    run_type: 'chain',
    start_time: at(minute),
    end_time: at(minute, options.seconds ?? 5),
    session_name: options.project ?? 'p',
    tags: options.tags ?? [],
    extra: { metadata: options.metadata ?? {} },
    inputs: { messages: [{ role: 'user', content: `question ${minute}` }] },
    outputs: { messages: [{ role: 'assistant', content: `answer ${minute}` }] },
  });
  const child = makeRun({
    trace_id: root.id,
    parent_run_id: root.id,
    start_time: at(minute, 1),
    end_time: at(minute, 2),
    dotted_order: `${root.dotted_order}.20260101T120001000000Z${root.id}`,
    session_name: options.project ?? 'p',
    ...(options.error ? { status: 'error', error: 'rate limited' } : {}),
    outputs: {
      text: 'Paris',
      usage_metadata: {
        input_tokens: options.tokens ?? 10,
        output_tokens: 5,
        total_tokens: (options.tokens ?? 10) + 5,
      },
    },
  });
  return [root, child];
}

describe('local store queries', () => {
  const store = () => {
    const s = new LocalTraceStore(':memory:');
    s.insertRuns(trace(1, { name: 'Planner', tags: ['prod'], metadata: { user_id: 'u1' }, tokens: 100 }), 'p');
    s.insertRuns(trace(2, { name: 'Retriever', error: true, seconds: 30, tokens: 5 }), 'p');
    s.insertRuns(trace(3, { name: 'planner v2', metadata: { user_id: 'u2' }, tokens: 50 }), 'p');
    s.insertRuns(trace(4, { name: 'Other', project: 'q' }), 'p');
    return s;
  };
  const names = (list: { name?: string }[]) => list.map((t) => t.name);

  it('filters by project, name, status, error, time, tag, metadata and text', () => {
    const s = store();
    assert.deepEqual(names(s.listTraces({ project: 'p' })), ['planner v2', 'Retriever', 'Planner']);
    assert.deepEqual(names(s.listTraces({ name: 'PLAN' })), ['planner v2', 'Planner']);
    assert.deepEqual(names(s.listTraces({ error: true })), ['Retriever']);
    assert.deepEqual(names(s.listTraces({ error: false, project: 'p' })), ['planner v2', 'Planner']);
    assert.deepEqual(names(s.listTraces({ status: 'success', project: 'q' })), ['Other']);
    assert.deepEqual(names(s.listTraces({ status: 'pending' })), []);
    assert.deepEqual(names(s.listTraces({ startAfter: at(2), startBefore: at(4) })), ['planner v2', 'Retriever']);
    assert.deepEqual(names(s.listTraces({ tag: 'prod' })), ['Planner']);
    assert.deepEqual(names(s.listTraces({ metadata: { user_id: 'u2' } })), ['planner v2']);
    assert.deepEqual(names(s.listTraces({ text: 'rate LIMITED' })), ['Retriever']);
    assert.deepEqual(names(s.listTraces({ text: 'answer 3' })), ['planner v2']);
    // A `%` is no wildcard. (Letters that are not hex: a child's metadata holds random UUIDs, whose
    // segments a digits-only term would match as a prefix now and then.)
    assert.deepEqual(names(s.listTraces({ text: 'quest%ion' })), []);
    const retriever = s.listTraces({ error: true })[0]!;
    assert.equal(retriever.errorCount, 1);
    assert.equal(retriever.durationMs, 30_000);
    assert.equal(retriever.totalTokens, 10);
    assert.equal(retriever.inputPreview, 'question 2');
    assert.equal(retriever.outputPreview, 'answer 2');
    s.close();
  });

  it('sorts and pages with a cursor through every trace exactly once', () => {
    const s = store();
    for (let minute = 10; minute < 40; minute++) s.insertRuns(trace(minute, { tokens: minute % 7 }), 'p');
    for (const [sort, order] of [
      ['start_time', 'desc'],
      ['start_time', 'asc'],
      ['total_tokens', 'desc'],
      ['duration', 'asc'],
      ['name', 'asc'],
    ] as const) {
      const seen: string[] = [];
      const values: (number | string)[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 20; pages++) {
        const page = s.queryTraces({ sort, order, limit: 7, ...(cursor ? { cursor } : {}) });
        seen.push(...page.traces.map((t) => t.traceId));
        values.push(
          ...page.traces.map((t) =>
            sort === 'total_tokens'
              ? t.totalTokens
              : sort === 'duration'
                ? t.durationMs!
                : sort === 'name'
                  ? t.name!
                  : t.startTime,
          ),
        );
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      assert.equal(seen.length, 34, `${sort} ${order}`);
      assert.equal(new Set(seen).size, 34, `${sort} ${order}: no duplicates`);
      const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      assert.deepEqual(values, order === 'asc' ? sorted : sorted.reverse(), `${sort} ${order}: in order`);
    }
    const first = s.queryTraces({ limit: 2 });
    assert.throws(() => s.queryTraces({ cursor: first.nextCursor!, sort: 'name' }), InvalidCursorError);
    assert.throws(() => s.queryTraces({ cursor: 'garbage' }), InvalidCursorError);
    s.close();
  });
});

describe('local store retention', () => {
  it('deletes whole traces older than max_age and drops late runs of them', () => {
    let now = Date.parse(at(10));
    const s = new LocalTraceStore(join(dir, 'age.db'), { now: () => now });
    const old = trace(1);
    s.insertRuns(old, 'p');
    s.insertRuns(trace(8), 'p');
    // At 12:10 with a 4-minute limit: the trace of 12:01 goes, the one of 12:08 stays.
    const result = s.enforceRetention({ maxAgeMs: 4 * 60_000 });
    assert.deepEqual(result.maxAge, { traces: 1, runs: 2 });
    assert.deepEqual(
      s.listTraces().map((t) => t.name),
      ['agent 8'],
    );
    assert.equal(s.getTrace(old[0]!.trace_id), undefined);
    // A run of the deleted trace arriving late is dropped, not stored as a partial trace.
    assert.equal(s.insertRuns([{ ...old[1]!, id: crypto.randomUUID() }], 'p'), 1);
    assert.equal(s.getTrace(old[0]!.trace_id), undefined);
    now += 10 * 60_000;
    assert.deepEqual(s.enforceRetention({ maxAgeMs: 4 * 60_000 }).maxAge, { traces: 1, runs: 2 });
    assert.equal(s.traceCount(), 0);
    s.close();
  });

  it('keeps the used bytes under max_bytes by deleting the oldest whole traces', () => {
    const s = new LocalTraceStore(join(dir, 'size.db'));
    const big = 'x'.repeat(20_000);
    for (let minute = 0; minute < 40; minute++) {
      const runs = trace(minute);
      runs[0]!.inputs = { messages: [{ role: 'user', content: big }] };
      s.insertRuns(runs, 'p');
    }
    const before = s.usedBytes();
    assert.ok(before > 800_000, `the store holds ${before} bytes`);
    const result = s.enforceRetention({ maxBytes: 300_000 });
    assert.ok(s.usedBytes() <= 300_000, `${s.usedBytes()} bytes remain`);
    assert.ok(result.maxBytes.traces > 0);
    assert.equal(result.maxBytes.runs, result.maxBytes.traces * 2, 'whole traces only');
    const left = s.listTraces({ limit: 1000 });
    assert.equal(left.length, 40 - result.maxBytes.traces);
    // The newest survive, and each survivor still has both its runs.
    assert.equal(left[0]!.name, 'agent 39');
    for (const summary of left) assert.equal(s.getTrace(summary.traceId)!.runs.length, 2);
    s.close();
  });
});
