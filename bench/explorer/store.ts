// The trace explorer's queries on a large local store: seeds a SQLite file with RUNS runs (default
// a million) through the store's own bulk path (`insertRuns`, 5,000 runs per transaction), then
// times, in process, the answers of the explorer's API: the first page of the trace list (with its
// costs), the same filtered by project, the stats of the last 24 hours and of the whole 7 days split
// by model, and full-text searches for a rare and a common word. Prints the median (p50) and the
// slowest of REPS runs of each.
//
//   node --import tsx bench/explorer/store.ts [runs, default 1000000] [--keep <path>]
//
// Traces are five runs (an agent root, two LLM calls with messages and usage, a tool call, a
// retriever) spread evenly over 7 days ending now, in three projects, on three models; one in 20
// has a failed tool run, one in three belongs to one of 10,000 conversations, one in 1,000 tool
// outputs holds the word "quokka".

import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { Run } from '../../src/model/runs.ts';
import { LocalTraceStore } from '../../src/tracestore/store.ts';
import { tracePage } from '../../plugins/extensions/trace_explorer/internal/api.ts';
import { Pricer } from '../../plugins/extensions/trace_explorer/internal/pricing.ts';
import { parseStatsQuery, statsBody } from '../../plugins/extensions/trace_explorer/internal/stats.ts';

const RUNS = Number(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 1_000_000);
const keepAt = process.argv.indexOf('--keep');
const PATH = keepAt > 0 ? process.argv[keepAt + 1]! : join(tmpdir(), `tracepipe-explorer-bench-${process.pid}.db`);
const REPS = 15;
const RUNS_PER_TRACE = 5;
const WEEK_MS = 7 * 24 * 3600_000;
const PROJECTS = ['shop', 'support', 'search'];
const MODELS = [
  ['gpt-4o-mini', 'openai'],
  ['claude-3-5-haiku-20241022', 'anthropic'],
  ['gpt-4o', 'openai'],
] as const;
const WORDS = ['order', 'refund', 'shipping', 'invoice', 'weather', 'delivery', 'account', 'password', 'warranty'];

const iso = (ms: number) => new Date(ms).toISOString();

function traceRuns(n: number, startMs: number): Run[] {
  const rootId = randomUUID();
  const project = PROJECTS[n % PROJECTS.length]!;
  const [model, provider] = MODELS[n % MODELS.length]!;
  const word = WORDS[n % WORDS.length]!;
  const question = `Customer ${n} asks about their ${word}: where is order #${n * 7}?`;
  const order = (offset: number, id: string) =>
    `${iso(startMs + offset)
      .replace(/[-:.]/g, '')
      .replace('Z', '000Z')}${id}`;
  const rootOrder = order(0, rootId);
  const child = (offset: number, ms: number, fields: Partial<Run>): Run => {
    const id = randomUUID();
    return {
      id,
      trace_id: rootId,
      parent_run_id: rootId,
      name: 'child',
      run_type: 'chain',
      start_time: iso(startMs + offset),
      end_time: iso(startMs + offset + ms),
      dotted_order: `${rootOrder}.${order(offset, id)}`,
      status: 'success',
      session_name: project,
      ...fields,
    };
  };
  const llm = (offset: number, answer: string) =>
    child(offset, 400 + (n % 700), {
      name: `Chat ${model}`,
      run_type: 'llm',
      inputs: { messages: [{ role: 'user', content: question }] },
      outputs: {
        generations: [{ text: answer }],
        usage_metadata: {
          input_tokens: 120 + (n % 50),
          output_tokens: 30 + (n % 20),
          total_tokens: 150 + (n % 50) + (n % 20),
        },
      },
      extra: { metadata: { ls_model_name: model, ls_provider: provider } },
    });
  const failed = n % 20 === 0;
  return [
    {
      id: rootId,
      trace_id: rootId,
      name: `${project} agent`,
      run_type: 'chain',
      start_time: iso(startMs),
      end_time: iso(startMs + 1500 + (n % 2000)),
      dotted_order: rootOrder,
      status: 'success',
      session_name: project,
      inputs: { messages: [{ role: 'user', content: question }] },
      outputs: { messages: [{ role: 'assistant', content: `Your ${word} is on its way.` }] },
      extra: { metadata: n % 3 === 0 ? { thread_id: `conversation-${n % 10_000}` } : {} },
      tags: [project],
    },
    llm(10, `Let me look up the ${word}.`),
    child(500, 200, {
      name: 'lookup_order',
      run_type: 'tool',
      inputs: { order: n * 7 },
      outputs: { output: n % 1000 === 0 ? `Order ${n * 7}: a quokka signed for it.` : `Order ${n * 7}: shipped.` },
      ...(failed ? { status: 'error', error: 'order service unavailable' } : {}),
    }),
    child(720, 80, {
      name: 'retrieve_policy',
      run_type: 'retriever',
      inputs: { query: word },
      outputs: { documents: [`Policy on ${word}`] },
    }),
    llm(800, `Your ${word} is on its way.`),
  ];
}

function seed(store: LocalTraceStore): number {
  const traces = Math.ceil(RUNS / RUNS_PER_TRACE);
  const end = Date.now();
  const started = performance.now();
  let batch: Run[] = [];
  for (let n = 0; n < traces; n++) {
    batch.push(...traceRuns(n, end - WEEK_MS + Math.floor((n / traces) * (WEEK_MS - 10_000))));
    if (batch.length >= 5000) {
      store.insertRuns(batch, 'default');
      batch = [];
    }
    if (n % 40_000 === 0 && n > 0) {
      const rate = (n * RUNS_PER_TRACE) / ((performance.now() - started) / 1000);
      process.stderr.write(`  seeded ${n * RUNS_PER_TRACE} runs (${Math.round(rate)} runs/s)\n`);
    }
  }
  if (batch.length > 0) store.insertRuns(batch, 'default');
  return (performance.now() - started) / 1000;
}

function time(label: string, fn: () => unknown): void {
  fn(); // warm: the statement cache and the pages the query reads
  const ms: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const start = performance.now();
    fn();
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(48)} p50 ${ms[Math.floor(REPS / 2)]!.toFixed(1).padStart(7)} ms   max ${ms.at(-1)!.toFixed(1).padStart(7)} ms`,
  );
}

const store = new LocalTraceStore(PATH);
if (store.traceCount() === 0) {
  console.log(`Seeding ${RUNS} runs into ${PATH} ...`);
  const seconds = seed(store);
  console.log(
    `seeded in ${seconds.toFixed(0)} s (${Math.round(RUNS / seconds)} runs/s), ${(store.usedBytes() / 1e6).toFixed(0)} MB`,
  );
}
console.log(`${store.traceCount()} traces; ${REPS} runs of each query after one to warm up`);
const pricer = new Pricer({});
const now = Date.now();
const stats = (raw: Record<string, string>) => statsBody(store, parseStatsQuery(raw, now), pricer);
time('list: first page of 50 (with costs)', () => tracePage(store, {}, pricer));
time('list: project=support, errors only', () => tracePage(store, { project: 'support', error: true }, pricer));
time('list: sorted by duration', () => tracePage(store, { sort: 'duration' }, pricer));
time('stats: last 24 h, auto bucket (15m)', () => stats({ start_after: iso(now - 24 * 3600_000) }));
time('stats: 7 days by model (1h buckets)', () =>
  stats({ start_after: iso(now - WEEK_MS), bucket: '1h', group_by: 'model' }),
);
time('stats: 7 days by root name (6h buckets)', () =>
  stats({ start_after: iso(now - WEEK_MS), bucket: '6h', group_by: 'name' }),
);
time('search: a rare word ("quokka")', () => tracePage(store, { text: 'quokka' }, pricer));
time('search: a common word ("refund")', () => tracePage(store, { text: 'refund' }, pricer));
time('search: two words ("warranty shipped")', () => tracePage(store, { text: 'warranty shipped' }, pricer));
store.close();
if (keepAt < 0) for (const suffix of ['', '-wal', '-shm']) rmSync(`${PATH}${suffix}`, { force: true });
