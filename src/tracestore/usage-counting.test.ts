// Which runs' token usage a trace counts: the model calls' (run type `llm`), as LangSmith counts
// it, so that a run repeating its model call's usage (a `traceable` returning the model's result,
// an OTel GenAI `invoke_agent` span with the turn's usage) does not double the trace's tokens,
// cost and stats; the other runs only when no model call reports usage, the outermost of them.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Run } from '../model/runs.ts';
import { tempDir } from '../testkit/files.ts';
import { makeRun } from '../testkit/runs.ts';
import { LocalTraceStore } from './store.ts';
import { bulkLoad } from './testing/bulk-load.ts';

const dir = tempDir('tp-usage-');
const usage = (input: number, output: number) => ({
  generations: [{ text: 'Paris.' }],
  usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output },
});

/** A chain root and its descendants, each `[run_type, usage or undefined, parent index]`. */
function trace(minute: number, shape: [Run['run_type'], [number, number] | undefined, number?][]): Run[] {
  const start = `2026-01-01T12:${String(minute).padStart(2, '0')}:00Z`;
  const runs: Run[] = [];
  shape.forEach(([runType, tokens, parent], i) => {
    const base = makeRun({ run_type: runType, name: `${runType} ${i}`, start_time: start, end_time: start });
    const parentRun = parent === undefined ? undefined : runs[parent]!;
    runs.push({
      ...base,
      trace_id: runs[0]?.id ?? base.id,
      ...(parentRun
        ? { parent_run_id: parentRun.id, dotted_order: `${parentRun.dotted_order}.${base.dotted_order}` }
        : {}),
      outputs: tokens ? usage(...tokens) : { output: 'no usage' },
    });
  });
  return runs;
}

const totals = (store: LocalTraceStore, runs: Run[]) => {
  const summary = store.getTrace(runs[0]!.id)!.summary;
  return [summary.promptTokens, summary.completionTokens, summary.totalTokens];
};

const statsTotal = (store: LocalTraceStore) =>
  store
    .usageStats({ startUs: Date.UTC(2026, 0, 1) * 1000, endUs: Date.UTC(2026, 0, 2) * 1000, bucketUs: 86_400e6 })
    .reduce((sum, row) => sum + row.totalTokens, 0);

// A traceable parent returning its model call's result unchanged: the same usage on both.
const passThrough = (minute: number) =>
  trace(minute, [
    ['chain', [12, 3]],
    ['llm', [12, 3], 0],
  ]);
// An OTel GenAI agent turn: `invoke_agent` (a chain) with the turn's usage over two chat calls.
const agentTurn = (minute: number) =>
  trace(minute, [
    ['chain', undefined],
    ['chain', [30, 10], 0],
    ['llm', [10, 4], 1],
    ['llm', [20, 6], 1],
  ]);
// An app that emits no model spans: usage on a chain root and on a nested chain repeating it.
const noModelSpans = (minute: number) =>
  trace(minute, [
    ['chain', [40, 2]],
    ['chain', [40, 2], 0],
  ]);
// No model spans, usage on two sibling steps and none on the root.
const siblingSteps = (minute: number) =>
  trace(minute, [
    ['chain', undefined],
    ['tool', [5, 1], 0],
    ['chain', [7, 2], 0],
  ]);

describe('usage counting', () => {
  it("counts the model calls' usage once, and other runs' only without a model call reporting any", () => {
    const store = new LocalTraceStore(join(dir, 'count.db'));
    const traces = [passThrough(1), agentTurn(2), noModelSpans(3), siblingSteps(4)];
    for (const runs of traces) store.insertRuns(runs, 'p');
    assert.deepEqual(totals(store, traces[0]!), [12, 3, 15]);
    assert.deepEqual(totals(store, traces[1]!), [30, 10, 40]);
    assert.deepEqual(totals(store, traces[2]!), [40, 2, 42]);
    assert.deepEqual(totals(store, traces[3]!), [12, 3, 15]);
    assert.equal(statsTotal(store), 15 + 40 + 42 + 15);
    // Pricing reads the same runs: one model call's tokens for the pass-through trace.
    assert.deepEqual(
      store.modelUsage([traces[0]![0]!.id]).map((row) => [row.promptTokens, row.completionTokens]),
      [[12, 3]],
    );
    store.close();
  });

  it('stops counting a parent once a model call under it reports usage', () => {
    const store = new LocalTraceStore(join(dir, 'late.db'));
    const [root, llm] = passThrough(5);
    // The parent's end (with the model's result) first, the model call's in a later batch.
    store.insertRuns([root!, { ...llm!, outputs: { output: 'pending' } }], 'p');
    assert.deepEqual(totals(store, [root!]), [12, 3, 15]);
    store.insertRuns([llm!], 'p');
    assert.deepEqual(totals(store, [root!]), [12, 3, 15]);
    assert.equal(statsTotal(store), 15);
    store.close();
  });

  it('recounts the traces of a version 4 store, which summed every run', () => {
    const path = join(dir, 'v4.db');
    const traces = [passThrough(6), agentTurn(7), siblingSteps(8)];
    const store = new LocalTraceStore(path);
    for (const runs of traces) store.insertRuns(runs, 'p');
    store.close();
    // As version 4 left it: no run types, every run's usage summed, the index over all of them.
    const raw = new Database(path);
    raw.exec(`
      UPDATE runs SET run_type = NULL, counts_usage = 0;
      UPDATE traces SET total_tokens = (SELECT SUM(total_tokens) FROM runs WHERE runs.trace_id = traces.trace_id);
      DROP INDEX runs_usage_by_start;
      CREATE INDEX runs_usage_by_start ON runs (start_us, project, model, provider, root_name, prompt_tokens,
        completion_tokens, cache_read_tokens, cache_write_tokens, total_tokens, cost) WHERE total_tokens > 0 OR cost IS NOT NULL;
      PRAGMA user_version = 4;
    `);
    raw.close();
    const upgraded = new LocalTraceStore(path);
    assert.deepEqual(
      traces.map((runs) => totals(upgraded, runs)[2]),
      [15, 40, 15],
    );
    assert.equal(statsTotal(upgraded), 70);
    upgraded.close();
    const file = new Database(path, { readonly: true });
    assert.equal(file.pragma('user_version', { simple: true }), 7);
    file.close();
  });

  it('bulk loads the counts that insertRuns writes', () => {
    const traces = [passThrough(9), agentTurn(10), noModelSpans(11), siblingSteps(12)];
    const bulkPath = join(dir, 'bulk.db');
    bulkLoad(bulkPath, traces, 'p');
    const store = new LocalTraceStore(join(dir, 'inserted.db'));
    for (const runs of traces) store.insertRuns(runs, 'p');
    store.close();
    const rows = (path: string) => {
      const db = new Database(path, { readonly: true });
      const result = {
        runs: db.prepare('SELECT id, run_type, counts_usage FROM runs ORDER BY id').all(),
        traces: db.prepare('SELECT * FROM traces ORDER BY trace_id').all(),
      };
      db.close();
      return result;
    };
    assert.deepEqual(rows(bulkPath), rows(join(dir, 'inserted.db')));
  });
});
