// Updates of runs (Run.update: the ingest API's `PATCH /runs/{id}` and `patch.<id>` parts) in any
// order with their creates: an SDK retrying a create after a 429 or 503 while the update got
// through, batches sent concurrently, a journal replayed after a crash. Whatever the order, the
// store ends with the same rows — the run, its search words, its trace's summary, thread and stats
// rollups — as when the create came first; an update waiting for its create is shown nowhere.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Run } from '../model/runs.ts';
import { LocalTraceStore, toMicros } from './store.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tp-updates-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ROOT = '01960000-0000-7000-8000-000000000001';
const LLM = '01960000-0000-7000-8000-000000000002';
const START = '2026-01-01T12:00:00Z';

/** An update of a run: only the fields it sets (a create's required ones left out). */
const asUpdate = (fields: Partial<Run>) => ({ ...fields, update: true }) as Run;

/** A root chain and its model call as the LangSmith SDK sends them: each created, then updated. */
const messages = {
  createRoot: {
    id: ROOT,
    trace_id: ROOT,
    dotted_order: `20260101T120000000000Z${ROOT}`,
    name: 'ooo-agent',
    run_type: 'chain',
    start_time: START,
    inputs: { question: 'quince question' },
    session_name: 'proj-ooo',
    tags: ['nightly'],
    extra: { metadata: { thread_id: 'thread-ooo', user: 'u1' }, runtime: { sdk: 'js' } },
  } as Run,
  patchRoot: asUpdate({
    id: ROOT,
    trace_id: ROOT,
    dotted_order: `20260101T120000000000Z${ROOT}`,
    end_time: '2026-01-01T12:00:05Z',
    outputs: { answer: 'zucchini answer' },
    status: 'success',
    extra: { runtime: { sdk: 'js', finished: true } },
  }),
  /** A second update of the root (a failure reported after its end), for orders of two updates. */
  failRoot: asUpdate({
    id: ROOT,
    trace_id: ROOT,
    error: 'late walrus failure',
    status: 'error',
    events: [{ name: 'end' }],
  }),
  createLlm: {
    id: LLM,
    trace_id: ROOT,
    parent_run_id: ROOT,
    dotted_order: `20260101T120000000000Z${ROOT}.20260101T120001000000Z${LLM}`,
    name: 'ChatModel',
    run_type: 'llm',
    start_time: '2026-01-01T12:00:01Z',
    inputs: { messages: [{ role: 'user', content: 'quince question' }] },
    session_name: 'proj-ooo',
    extra: { metadata: { ls_provider: 'openai', ls_model_name: 'gpt-4o-mini' } },
  } as Run,
  /** Without its trace id, as `PATCH /runs/{id}` may be. */
  patchLlm: asUpdate({
    id: LLM,
    end_time: '2026-01-01T12:00:03Z',
    outputs: {
      generations: [{ text: 'xylophone' }],
      usage_metadata: { input_tokens: 12, output_tokens: 3, total_tokens: 15, total_cost: 0.25 },
    },
    status: 'success',
  }),
} satisfies Record<string, Run>;
type Message = keyof typeof messages;

/** Every row the store derives from its runs, from the file itself. */
function rowsOf(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    const words = ['quince', 'zucchini', 'walrus', 'xylophone', 'agent', 'nightly'];
    return {
      runs: db.prepare('SELECT * FROM runs ORDER BY id').all(),
      traces: db.prepare('SELECT * FROM traces ORDER BY trace_id').all(),
      pending: db.prepare('SELECT id FROM pending_updates ORDER BY id').all(),
      search: Object.fromEntries(
        words.map((word) => [
          word,
          db
            .prepare(
              'SELECT runs.id FROM runs_fts JOIN runs ON runs.rowid = runs_fts.rowid WHERE runs_fts MATCH ? ORDER BY runs.id',
            )
            .pluck()
            .all(`"${word}"*`),
        ]),
      ),
      searchEntries: db.prepare('SELECT COUNT(*) FROM runs_fts').pluck().get(),
      traceRollup: db.prepare('SELECT * FROM trace_rollup ORDER BY width_us, slot_us, project, name, model').all(),
      usageRollup: db
        .prepare('SELECT * FROM usage_rollup ORDER BY width_us, slot_us, project, root_name, model, provider')
        .all(),
    };
  } finally {
    db.close();
  }
}

/** What the store answers about the trace: the trace, the lists, search, threads and stats. */
function answersOf(store: LocalTraceStore) {
  const range = {
    startUs: toMicros(START) - 3600_000_000,
    endUs: toMicros(START) + 3600_000_000,
    bucketUs: 60_000_000,
  };
  return {
    trace: store.getTrace(ROOT),
    list: store.listTraces({ project: 'proj-ooo' }),
    searches: ['quince', 'zucchini', 'walrus', 'xylophone'].map((text) =>
      store.listTraces({ text }).map((t) => t.traceId),
    ),
    statuses: (['success', 'error', 'pending'] as const).map((status) =>
      store.listTraces({ status }).map((t) => t.traceId),
    ),
    projects: store.projects(),
    threads: store.listThreads(),
    traceStats: store.traceStats(range),
    usageStats: store.usageStats(range),
    modelUsage: store.modelUsage([ROOT]),
  };
}

let stores = 0;
/** The rows and answers of a store that was sent `order`, one request (insertRuns) at a time or at once. */
function storeAfter(order: readonly Message[], batching: 'one by one' | 'one batch' = 'one by one') {
  const path = join(dir, `order-${stores++}.db`);
  const store = new LocalTraceStore(path);
  if (batching === 'one batch')
    store.insertRuns(
      order.map((name) => messages[name]),
      'default',
    );
  else for (const name of order) store.insertRuns([messages[name]], 'default');
  const answers = answersOf(store);
  store.close();
  return { answers, rows: rowsOf(path) };
}

describe('run updates in any order with their creates', () => {
  let createFirst: ReturnType<typeof storeAfter>;
  before(() => {
    createFirst = storeAfter(['createRoot', 'createLlm', 'patchLlm', 'patchRoot']);
  });

  it('create then update: one complete run, its trace finished, counted and found', () => {
    const { trace } = createFirst.answers;
    const root = trace!.runs.find((run) => run.id === ROOT)!;
    assert.equal(root.name, 'ooo-agent');
    assert.equal(root.session_name, 'proj-ooo');
    assert.deepEqual(root.inputs, { question: 'quince question' });
    assert.equal(root.end_time, '2026-01-01T12:00:05Z');
    assert.deepEqual(root.outputs, { answer: 'zucchini answer' });
    assert.equal(root.status, 'success');
    assert.deepEqual(root.extra, {
      metadata: { thread_id: 'thread-ooo', user: 'u1' },
      runtime: { sdk: 'js', finished: true },
    });
    assert.equal(root.update, undefined);
    const llm = trace!.runs.find((run) => run.id === LLM)!;
    assert.equal(llm.trace_id, ROOT);
    assert.equal(llm.end_time, '2026-01-01T12:00:03Z');
    const summary = createFirst.answers.list[0]!;
    assert.equal(createFirst.answers.list.length, 1);
    assert.equal(summary.name, 'ooo-agent');
    assert.equal(summary.status, 'success');
    assert.equal(summary.project, 'proj-ooo');
    assert.equal(summary.endTime, '2026-01-01T12:00:05Z');
    assert.equal(summary.durationMs, 5000);
    assert.equal(summary.runCount, 2);
    assert.equal(summary.totalTokens, 15);
    assert.equal(summary.reportedCost, 0.25);
    assert.equal(summary.model, 'gpt-4o-mini');
    assert.equal(summary.threadId, 'thread-ooo');
    assert.equal(summary.inputPreview, 'quince question');
    assert.equal(summary.outputPreview, 'zucchini answer');
    assert.deepEqual(trace!.countedUsageRunIds, [LLM]);
    assert.deepEqual(createFirst.answers.searches, [[ROOT], [ROOT], [], [ROOT]]);
    assert.deepEqual(createFirst.answers.statuses, [[ROOT], [], []]);
    assert.equal(createFirst.answers.threads.threads[0]?.outputPreview, 'zucchini answer');
    assert.deepEqual(createFirst.rows.pending, []);
  });

  const sameOrders: [string, Message[]][] = [
    ['update then create', ['patchRoot', 'patchLlm', 'createLlm', 'createRoot']],
    ['root created between its child’s update and create', ['patchLlm', 'createRoot', 'createLlm', 'patchRoot']],
    ['the root’s update before its create, the child in order', ['patchRoot', 'createRoot', 'createLlm', 'patchLlm']],
    [
      'updates sent twice, before the creates',
      ['patchRoot', 'patchLlm', 'patchRoot', 'patchLlm', 'createRoot', 'createLlm'],
    ],
    [
      'creates sent again after their updates (a retried POST, a replayed journal)',
      ['createRoot', 'createLlm', 'patchLlm', 'patchRoot', 'createLlm', 'createRoot'],
    ],
    [
      'update, create, then the create again',
      ['patchRoot', 'patchLlm', 'createRoot', 'createLlm', 'createRoot', 'createLlm'],
    ],
    [
      'updates sent again after the creates',
      ['createRoot', 'createLlm', 'patchLlm', 'patchRoot', 'patchRoot', 'patchLlm'],
    ],
  ];
  for (const [title, order] of sameOrders) {
    it(`${title}: the same run, trace, search words, thread and stats`, () => {
      const result = storeAfter(order);
      assert.deepEqual(result.answers, createFirst.answers);
      assert.deepEqual(result.rows, createFirst.rows);
    });
  }

  it('update then create in one batch: the same as create then update', () => {
    const result = storeAfter(['patchRoot', 'patchLlm', 'createRoot', 'createLlm'], 'one batch');
    assert.deepEqual(result.answers, createFirst.answers);
    assert.deepEqual(result.rows, createFirst.rows);
  });

  it('two updates before the create: both apply, the later one over the earlier', () => {
    const inOrder = storeAfter(['createRoot', 'createLlm', 'patchLlm', 'patchRoot', 'failRoot']);
    const root = inOrder.answers.trace!.runs.find((run) => run.id === ROOT)!;
    assert.equal(root.status, 'error');
    assert.equal(root.error, 'late walrus failure');
    assert.deepEqual(root.outputs, { answer: 'zucchini answer' });
    assert.deepEqual(root.events, [{ name: 'end' }]);
    assert.equal(inOrder.answers.list[0]!.status, 'error');
    assert.equal(inOrder.answers.list[0]!.errorCount, 1);
    assert.deepEqual(inOrder.answers.searches[2], [ROOT]);
    for (const order of [
      ['patchRoot', 'failRoot', 'patchLlm', 'createRoot', 'createLlm'],
      ['patchRoot', 'createRoot', 'failRoot', 'createLlm', 'patchLlm'],
      ['patchRoot', 'failRoot', 'createRoot', 'createLlm', 'patchLlm', 'createRoot'],
      ['createRoot', 'patchRoot', 'failRoot', 'createRoot', 'patchLlm', 'createLlm'],
    ] as Message[][]) {
      const result = storeAfter(order);
      assert.deepEqual(result.answers, inOrder.answers, order.join(', '));
      assert.deepEqual(result.rows, inOrder.rows, order.join(', '));
    }
  });

  it('an update waiting for its create is in no list, search, project, thread or stats', () => {
    const path = join(dir, 'waiting.db');
    const store = new LocalTraceStore(path);
    store.insertRuns([messages.patchRoot, messages.patchLlm], 'default');
    store.insertRuns([messages.patchRoot], 'default');
    assert.equal(store.getTrace(ROOT), undefined);
    assert.deepEqual(store.listTraces(), []);
    assert.deepEqual(store.listTraces({ text: 'zucchini' }), []);
    assert.deepEqual(store.listTraces({ name: 'Unnamed' }), []);
    assert.deepEqual(store.projects(), []);
    assert.deepEqual(store.listThreads().threads, []);
    assert.equal(store.traceCount(), 0);
    // The child's create comes: its trace is listed without a root (pending), the root's update waits on.
    store.insertRuns([messages.createLlm], 'default');
    const summary = store.listTraces()[0]!;
    assert.equal(summary.traceId, ROOT);
    assert.equal(summary.name, undefined);
    assert.equal(summary.status, undefined);
    assert.equal(summary.runCount, 1);
    assert.equal(summary.totalTokens, 15);
    assert.deepEqual(
      store.listTraces({ text: 'zucchini' }).map((t) => t.traceId),
      [],
    );
    assert.deepEqual(
      store.listTraces({ status: 'pending' }).map((t) => t.traceId),
      [ROOT],
    );
    store.close();
    assert.deepEqual(rowsOf(path).pending, [{ id: ROOT }]);
  });

  it('an update waits across a restart; a create replayed after the next restart keeps it', () => {
    const path = join(dir, 'restart.db');
    let store = new LocalTraceStore(path);
    store.insertRuns([messages.patchRoot], 'default');
    store.close();
    store = new LocalTraceStore(path);
    store.insertRuns([messages.createRoot], 'default');
    store.close();
    store = new LocalTraceStore(path);
    store.insertRuns([messages.createRoot], 'default');
    const root = store.getTrace(ROOT)!.runs[0]!;
    assert.equal(root.end_time, '2026-01-01T12:00:05Z');
    assert.deepEqual(root.outputs, { answer: 'zucchini answer' });
    assert.equal(root.status, 'success');
    assert.equal(store.listTraces({ project: 'proj-ooo' })[0]?.status, 'success');
    store.close();
  });

  it('retention drops updates whose create did not come within the age limit, and those of deleted traces', () => {
    let now = Date.parse('2026-01-01T12:00:00Z');
    const store = new LocalTraceStore(join(dir, 'retention.db'), { now: () => now });
    store.insertRuns([messages.patchRoot], 'default');
    now += 10 * 60_000;
    store.enforceRetention({ maxAgeMs: 3600_000 });
    store.insertRuns([messages.createRoot], 'default');
    assert.deepEqual(store.getTrace(ROOT)!.runs[0]!.outputs, { answer: 'zucchini answer' });

    const other = { ...messages.patchRoot, id: LLM, trace_id: LLM, outputs: { late: 'yes' } };
    store.insertRuns([other], 'default');
    now += 2 * 3600_000;
    store.enforceRetention({ maxAgeMs: 3600_000 });
    store.insertRuns(
      [{ ...messages.createRoot, id: LLM, trace_id: LLM, start_time: new Date(now).toISOString() }],
      'default',
    );
    const run = store.getTrace(LLM)!.runs[0]!;
    assert.equal(run.outputs, undefined);
    assert.equal(run.end_time, undefined);
    store.close();
  });

  it('a store of version 6 is upgraded and then merges an update sent before its create', () => {
    const path = join(dir, 'v6.db');
    new LocalTraceStore(path).close();
    const raw = new Database(path);
    raw.exec('DROP TABLE pending_updates; ALTER TABLE runs DROP COLUMN updated; PRAGMA user_version = 6');
    raw.close();
    const store = new LocalTraceStore(path);
    for (const name of ['patchRoot', 'createRoot', 'createRoot'] as const)
      store.insertRuns([messages[name]], 'default');
    assert.deepEqual(store.getTrace(ROOT)!.runs[0]!.outputs, { answer: 'zucchini answer' });
    store.close();
    const file = new Database(path, { readonly: true });
    assert.equal(file.pragma('user_version', { simple: true }), 7);
    file.close();
  });

  it('an update that moves a run to another trace leaves no summary behind for the old one', () => {
    const store = new LocalTraceStore(':memory:');
    const other = '01960000-0000-7000-8000-0000000000ff';
    store.insertRuns([{ ...messages.createLlm, trace_id: other, parent_run_id: other }], 'default');
    assert.deepEqual(
      store.listTraces().map((t) => t.traceId),
      [other],
    );
    store.insertRuns([{ ...messages.patchLlm, trace_id: ROOT, parent_run_id: ROOT }], 'default');
    assert.deepEqual(
      store.listTraces().map((t) => t.traceId),
      [ROOT],
    );
    store.close();
  });
});
