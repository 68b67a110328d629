// The stats rollups (rollup.ts) against the raw tables: a store written as the exporter writes —
// batches with children before their roots, re-sent runs, retention deleting the oldest traces —
// answers the stats from its rollups with exactly the counts, errors, tokens and costs that the
// same file answers from its traces and runs (a reader of a file not yet upgraded reads those),
// and latency percentiles from the histograms within 1% of the latency at their rank.

import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { tempDir } from '../testkit/files.ts';
import type { StatsQuery } from './store.ts';
import { addHistogram } from './rollup.ts';
import { LocalTraceStore, fromMicros } from './store.ts';
import { syntheticTraces } from './testing/synthetic-traces.ts';

const HOUR_US = 3600_000_000;
const END_MS = Date.UTC(2026, 0, 3);
const SPAN_MS = 2 * 86_400_000;

describe('stats rollups', () => {
  const dir = tempDir('tp-rollup-');
  const path = join(dir, 'store.db');
  const rawPath = join(dir, 'raw.db');
  // Retention's clock: traces whose last activity is over 42 h before the end are deleted.
  const store = new LocalTraceStore(path, { now: () => END_MS });
  let batch = [];
  let resent = 0;
  for (const runs of syntheticTraces({ runs: 4000, endMs: END_MS, spanMs: SPAN_MS, seed: 11 })) {
    batch.push(...runs.slice(1), runs[0]!);
    if (batch.length > 150) {
      store.insertRuns(batch, 'default');
      // Every few batches, a run sent again: the same figures must not count twice.
      if (resent++ % 3 === 0) store.insertRuns([batch[0]!], 'default');
      batch = [];
    }
  }
  store.insertRuns(batch, 'default');
  const deleted = store.enforceRetention({ maxAgeMs: 42 * 3600_000 });
  store.close();
  copyFileSync(path, rawPath);
  // As a reader sees a file not yet upgraded to the rollups: the stats from the traces and runs.
  const raw = new Database(rawPath);
  raw.pragma('user_version = 5');
  raw.close();

  const queries: StatsQuery[] = [];
  const startUs = (END_MS - SPAN_MS) * 1000;
  for (const groupBy of [undefined, 'project', 'model', 'name'] as const) {
    // Whole hours, minutes inside hours (a ragged end), a bucket not on the minute.
    queries.push({ startUs, endUs: END_MS * 1000, bucketUs: 6 * HOUR_US, ...(groupBy ? { groupBy } : {}) });
    queries.push({ startUs: startUs + HOUR_US, endUs: END_MS * 1000 - 1_234_567, bucketUs: 15 * 60_000_000 });
    queries.push({ startUs, endUs: startUs + 90 * 60_000_000 + 30_000_000, bucketUs: 60_000_000, project: 'support' });
    queries.push({ startUs: startUs + 17, endUs: END_MS * 1000, bucketUs: 86_400_000_000 - 17 });
  }

  it('answers with the counts, errors, tokens and costs of the raw tables', () => {
    assert.ok(deleted.maxAge.traces > 0, 'retention deleted some traces');
    const rolled = new LocalTraceStore(path, { readonly: true });
    const unrolled = new LocalTraceStore(rawPath, { readonly: true });
    const round = (rows: { reportedCost: number | null }[]) =>
      rows.map((row) => ({ ...row, reportedCost: row.reportedCost?.toPrecision(12) ?? null }));
    for (const query of queries) {
      const what = JSON.stringify({ ...query, start: fromMicros(query.startUs) });
      // Histogram percentiles on both sides: the raw side builds them from the traces.
      const histograms = { ...query, exactPercentileTraces: 0 };
      assert.deepEqual(rolled.traceStats(histograms), unrolled.traceStats(histograms), what);
      assert.deepEqual(rolled.traceStats(query), unrolled.traceStats(query), what);
      assert.deepEqual(round(rolled.usageStats(query)), round(unrolled.usageStats(query)), what);
    }
    const whole = rolled.traceStats(queries[0]!).reduce((sum, row) => sum + row.traces, 0);
    const db = new Database(path, { readonly: true });
    assert.equal(
      whole,
      db
        .prepare('SELECT COUNT(*) FROM traces WHERE start_us >= ? AND start_us < ?')
        .pluck()
        .get(startUs, END_MS * 1000),
    );
    db.close();
    rolled.close();
    unrolled.close();
  });

  it("reads each rollup's histogram as JSON.parse reads it", () => {
    const db = new Database(path, { readonly: true });
    const texts = db.prepare('SELECT latencies FROM trace_rollup').pluck().all() as string[];
    db.close();
    assert.ok(texts.length > 100, `${texts.length} rollup rows`);
    for (const text of [...texts, '{}', '{ "0": 3, "1": 1 }']) {
      const histogram = new Map<number, number>();
      const added = addHistogram(histogram, text);
      const parsed = Object.entries(JSON.parse(text) as Record<string, number>).map(([k, n]) => [Number(k), n]);
      assert.deepEqual(
        [...histogram].sort((a, b) => a[0]! - b[0]!),
        parsed.sort((a, b) => a[0]! - b[0]!),
        text,
      );
      assert.equal(
        added,
        parsed.reduce((sum, [, n]) => sum + n!, 0),
        text,
      );
    }
  });

  it('reads latency percentiles from the histograms within 1% of the latency at their rank', () => {
    const rolled = new LocalTraceStore(path, { readonly: true });
    const db = new Database(path, { readonly: true });
    const query: StatsQuery = { startUs, endUs: END_MS * 1000, bucketUs: SPAN_MS * 1000, groupBy: 'project' };
    for (const row of rolled.traceStats({ ...query, exactPercentileTraces: 0 })) {
      const latencies = (
        db
          .prepare(
            `SELECT duration_us FROM traces WHERE project = ? AND start_us >= ? AND start_us < ?
             AND duration_us IS NOT NULL ORDER BY duration_us`,
          )
          .pluck()
          .all(row.group, query.startUs, query.endUs) as number[]
      ).map((us) => us / 1000);
      assert.ok(latencies.length > 50, `${row.group}: ${latencies.length} finished traces`);
      for (const [q, value] of [
        [0.5, row.p50],
        [0.95, row.p95],
        [0.99, row.p99],
      ] as const) {
        const rank = q * (latencies.length - 1);
        const low = latencies[Math.floor(rank)]! * 0.99;
        const high = latencies[Math.ceil(rank)]! * 1.01;
        assert.ok(value! >= low && value! <= high, `${row.group} p${q * 100}: ${value} not in [${low}, ${high}]`);
      }
    }
    db.close();
    rolled.close();
  });
});
