// The trace explorer's queries on a large local store: bulk-loads a SQLite file with RUNS runs
// (default a million) of synthetic agent traces shaped like a deployment's (projects, root names and
// models of unequal popularity, failures, conversations, messages of common and rare words; see
// src/tracestore/testing/synthetic-traces.ts) spread over the 7 days ending now, then
// times, in process, the answers of the explorer's API: pages of the trace list, the monitoring
// stats (whole and split by project, model and root name) and full-text searches. Prints the
// median (p50) and the slowest of REPS runs of each, after one run to warm up, in wall time and
// in CPU time of the process (on a shared machine the wall time counts the waits for a core too).
//
//   node --import tsx bench/explorer/store.ts [runs, default 1000000] [--keep <path>] [--only <text>]
//
// With --keep, the store is left at <path> and a later run on the same path skips the loading.
// With --only, just the queries whose label contains <text> run (`--only stats`).

import { rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalTraceStore } from '../../src/tracestore/store.ts';
import { bulkLoad } from '../../src/tracestore/testing/bulk-load.ts';
import { RARE_WORD, syntheticTraces } from '../../src/tracestore/testing/synthetic-traces.ts';
import { tracePage } from '../../plugins/extensions/trace_explorer/internal/api.ts';
import { Pricer } from '../../plugins/extensions/trace_explorer/internal/pricing.ts';
import { parseStatsQuery, statsBody } from '../../plugins/extensions/trace_explorer/internal/stats.ts';

const RUNS = Number(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 1_000_000);
const keepAt = process.argv.indexOf('--keep');
const PATH = keepAt > 0 ? process.argv[keepAt + 1]! : join(tmpdir(), `tracepipe-explorer-bench-${process.pid}.db`);
const onlyAt = process.argv.indexOf('--only');
const ONLY = onlyAt > 0 ? process.argv[onlyAt + 1]! : '';
const REPS = 15;
const DAY_MS = 24 * 3600_000;
const WEEK_MS = 7 * DAY_MS;

const iso = (ms: number) => new Date(ms).toISOString();
const load = () =>
  `load average ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}`;

/** CPU time (user and system) of this process so far, in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function time(label: string, fn: () => unknown): void {
  if (!label.includes(ONLY)) return;
  fn(); // warm: the statement cache and the pages the query reads
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const start = performance.now();
    const startCpu = cpuMs();
    fn();
    cpu.push(cpuMs() - startCpu);
    wall.push(performance.now() - start);
  }
  const figures = (ms: number[]) => {
    ms.sort((a, b) => a - b);
    return `p50 ${ms[Math.floor(REPS / 2)]!.toFixed(1).padStart(7)} ms  max ${ms.at(-1)!.toFixed(1).padStart(7)} ms`;
  };
  console.log(`${label.padEnd(48)} wall ${figures(wall)}   CPU ${figures(cpu)}`);
}

let store = new LocalTraceStore(PATH);
if (store.traceCount() === 0) {
  store.close();
  console.log(`Loading ${RUNS} runs into ${PATH} (${load()}) ...`);
  const started = performance.now();
  const loaded = bulkLoad(PATH, syntheticTraces({ runs: RUNS, endMs: Date.now(), spanMs: WEEK_MS }));
  const seconds = (performance.now() - started) / 1000;
  store = new LocalTraceStore(PATH);
  console.log(
    `loaded ${loaded.runs} runs (${loaded.traces} traces) in ${seconds.toFixed(0)} s, ${(store.usedBytes() / 1e6).toFixed(0)} MB`,
  );
}
console.log(`${store.traceCount()} traces; ${REPS} runs of each query after one to warm up; ${load()}`);
const pricer = new Pricer({});
const now = Date.now();
const stats = (raw: Record<string, string>) => statsBody(store, parseStatsQuery(raw, now), pricer);
time('list: first page of 50 (with costs)', () => tracePage(store, {}, pricer));
time('list: project=support, errors only', () => tracePage(store, { project: 'support', error: true }, pricer));
time('list: sorted by duration', () => tracePage(store, { sort: 'duration' }, pricer));
time('stats: last 24 h, auto bucket (15m)', () => stats({ start_after: iso(now - DAY_MS) }));
time('stats: last 24 h by root name', () => stats({ start_after: iso(now - DAY_MS), group_by: 'name' }));
time('stats: last 24 h by model', () => stats({ start_after: iso(now - DAY_MS), group_by: 'model' }));
time('stats: last hour (1m buckets)', () => stats({ start_after: iso(now - 3600_000) }));
time('stats: 7 days (auto bucket, 6h)', () => stats({ start_after: iso(now - WEEK_MS) }));
for (const group of ['project', 'model', 'name']) {
  time(`stats: 7 days by ${group === 'name' ? 'root name' : group} (1h buckets)`, () =>
    stats({ start_after: iso(now - WEEK_MS), bucket: '1h', group_by: group }),
  );
}
// A range whose end is not on the hour: its last part is read from finer rollups and the raw rows.
time('stats: 7 days ending at :37:13, by model (1h)', () =>
  stats({
    start_after: iso(now - WEEK_MS),
    start_before: iso(Math.floor(now / 3600_000) * 3600_000 - 1_367_000),
    bucket: '1h',
    group_by: 'model',
  }),
);
time(`search: a rare word ("${RARE_WORD}")`, () => tracePage(store, { text: RARE_WORD }, pricer));
time('search: a word in 1 trace in 9 ("refund")', () => tracePage(store, { text: 'refund' }, pricer));
time('search: a word in most traces ("the")', () => tracePage(store, { text: 'the' }, pricer));
time('search: two words ("warranty courier")', () => tracePage(store, { text: 'warranty courier' }, pricer));
time('search: "refund", one project, errors only', () =>
  tracePage(store, { text: 'refund', project: 'billing', error: true }, pricer),
);
console.log(load());
store.close();
if (keepAt < 0) for (const suffix of ['', '-wal', '-shm']) rmSync(`${PATH}${suffix}`, { force: true });
