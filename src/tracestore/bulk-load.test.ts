// The bulk loader of large test stores (testing/bulk-load.ts) writes what the exporter's own path
// writes: the same traces loaded both ways give the same runs, summaries, stats rollups, indexes
// and search results, so a benchmark on a bulk-loaded store measures a store as the exporter leaves it.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { tempDir } from '../testkit/files.ts';
import { LocalTraceStore } from './store.ts';
import { bulkLoad } from './testing/bulk-load.ts';
import { RARE_WORD, syntheticTraces } from './testing/synthetic-traces.ts';

const dir = tempDir('tp-bulk-');
const sortedKeys = (object: Record<string, number>) =>
  Object.fromEntries(Object.entries(object).sort(([a], [b]) => Number(a) - Number(b)));

describe('bulk loading a store', () => {
  it('writes the rows, indexes and search text that insertRuns writes', () => {
    const traces = () => syntheticTraces({ runs: 3000, endMs: Date.UTC(2026, 0, 2), spanMs: 86_400_000, seed: 3 });
    const bulkPath = join(dir, 'bulk.db');
    const result = bulkLoad(bulkPath, traces());
    const exporterPath = join(dir, 'exporter.db');
    const exporter = new LocalTraceStore(exporterPath);
    // As a batch processor sends them: runs of several traces together, children before roots.
    let batch = [];
    for (const runs of traces()) {
      batch.push(...runs.slice(1), runs[0]!);
      if (batch.length > 200) {
        exporter.insertRuns(batch, 'default');
        batch = [];
      }
    }
    exporter.insertRuns(batch, 'default');
    exporter.close();

    const dump = (path: string) => {
      const db = new Database(path, { readonly: true });
      const tables = {
        version: db.pragma('user_version', { simple: true }),
        journal: db.pragma('journal_mode', { simple: true }),
        schema: db
          .prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'runs_fts%' ORDER BY name")
          .all(),
        runs: db.prepare('SELECT * FROM runs ORDER BY id').all(),
        traces: db.prepare('SELECT * FROM traces ORDER BY trace_id').all(),
        // Kept row by row by the exporter's writes, computed at once by the loader: the same sums.
        traceRollup: (
          db.prepare('SELECT * FROM trace_rollup ORDER BY width_us, slot_us, project, name, model').all() as {
            latencies: string;
          }[]
        ).map((row) => ({ ...row, latencies: sortedKeys(JSON.parse(row.latencies) as Record<string, number>) })),
        usageRollup: (
          db
            .prepare('SELECT * FROM usage_rollup ORDER BY width_us, slot_us, project, root_name, model, provider')
            .all() as { cost: number }[]
        ).map((row) => ({ ...row, cost: row.cost.toPrecision(12) })),
      };
      db.close();
      return tables;
    };
    const bulk = dump(bulkPath);
    const written = dump(exporterPath);
    assert.equal(result.runs, written.runs.length);
    assert.ok(result.runs >= 3000 && result.traces > 400, `${result.runs} runs, ${result.traces} traces`);
    assert.equal(bulk.version, written.version);
    assert.equal(bulk.journal, 'wal');
    assert.deepEqual(bulk.schema, written.schema);
    assert.deepEqual(bulk.traces, written.traces);
    assert.deepEqual(bulk.runs, written.runs);
    assert.ok(bulk.traceRollup.length > 0 && bulk.usageRollup.length > 0);
    assert.deepEqual(bulk.traceRollup, written.traceRollup);
    assert.deepEqual(bulk.usageRollup, written.usageRollup);

    const search = (path: string, text: string) => {
      const store = new LocalTraceStore(path, { readonly: true });
      const found = store.listTraces({ text, limit: 1000 }).map((trace) => trace.traceId);
      store.close();
      return found;
    };
    for (const text of [RARE_WORD, 'refund', 'warranty courier', 'ToolException', 'thread']) {
      assert.deepEqual(search(bulkPath, text), search(exporterPath, text), text);
    }
    assert.ok(search(bulkPath, RARE_WORD).length > 0);
    assert.ok(search(bulkPath, 'refund').length > 20);
  });
});
