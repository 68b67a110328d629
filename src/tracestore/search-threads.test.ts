// The store's full-text search (FTS5: words inside any run's inputs, outputs, errors and metadata,
// with a store of version 2 searched correctly while its index is built), its conversations
// (traces grouped by the root's thread_id / session_id / conversation_id) and its export order, on
// real SQLite files.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Run } from '../model/runs.ts';
import { makeRun } from '../testkit/runs.ts';
import { tempDir } from '../testkit/files.ts';
import { LocalTraceStore, ftsQuery } from './store.ts';
import { bulkLoad } from './testing/bulk-load.ts';

const dir = tempDir('tp-search-');

const at = (minute: number, second = 0) =>
  `2026-01-01T12:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}Z`;

/** An agent root with a tool run under it whose output holds `toolOutput`. */
function agentTrace(minute: number, toolOutput: string, metadata: Record<string, unknown> = {}): Run[] {
  const root = makeRun({
    name: 'agent',
    run_type: 'chain',
    start_time: at(minute),
    end_time: at(minute, 4),
    session_name: 'p',
    extra: { metadata },
    inputs: { messages: [{ role: 'user', content: `question ${minute}` }] },
    outputs: {
      messages: [{ role: 'assistant', content: `answer ${minute}` }],
      usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    },
  });
  const tool = makeRun({
    trace_id: root.id,
    parent_run_id: root.id,
    name: 'lookup',
    run_type: 'tool',
    start_time: at(minute, 1),
    end_time: at(minute, 2),
    dotted_order: `${root.dotted_order}.20260101T120001000000Z${root.id}`,
    session_name: 'p',
    inputs: { query: 'x' },
    outputs: { output: toolOutput },
    extra: { metadata: {} },
  });
  return [root, tool];
}

describe('free-text search', () => {
  it('finds a word inside a tool output, by its beginning, whatever its case and accents', () => {
    const s = new LocalTraceStore(':memory:');
    s.insertRuns(agentTrace(1, 'The warehouse reports 12 crates of Pamplemousse in stock.'), 'p');
    s.insertRuns(agentTrace(2, 'Nothing found.'), 'p');
    const found = (text: string) => s.listTraces({ text }).map((t) => t.startTime);
    assert.deepEqual(found('pamplemousse'), [at(1)]);
    assert.deepEqual(found('PAMPLE'), [at(1)]);
    assert.deepEqual(found('crates pamplemousse'), [at(1)]);
    assert.deepEqual(found('crates nothing'), []);
    assert.deepEqual(found('nothing'), [at(2)]);
    // Not a substring search: "mousse" is inside a word, not the beginning of one.
    assert.deepEqual(found('mousse'), []);
    // FTS5 syntax is plain text; a search with nothing searchable filters nothing out.
    assert.deepEqual(found('"crates" OR NEAR('), []);
    assert.deepEqual(found('*'), [at(2), at(1)]);
    // A run sent again replaces its words, and retention removes them.
    const [root, tool] = agentTrace(3, 'zeppelin');
    s.insertRuns([root!, tool!], 'p');
    assert.deepEqual(found('zeppelin'), [at(3)]);
    s.insertRuns([{ ...tool!, outputs: { output: 'balloon' } }], 'p');
    assert.deepEqual(found('zeppelin'), []);
    assert.deepEqual(found('balloon'), [at(3)]);
    s.close();
  });

  it('quotes each term of the query', () => {
    assert.equal(ftsQuery('gpt-4o "mini"'), '"gpt-4o"* """mini"""*');
    assert.equal(ftsQuery('  - * '), undefined);
  });

  it('searches a store of version 2 at once and builds its index in steps', () => {
    const path = join(dir, 'v2.db');
    const s = new LocalTraceStore(path);
    for (let minute = 0; minute < 30; minute++) {
      s.insertRuns(agentTrace(minute, minute === 7 ? 'a quokka was seen' : 'nothing', { session_id: 's1' }), 'p');
    }
    s.close();
    // A new file is marked current, so that opening it again does not upgrade it again.
    const created = new Database(path);
    assert.equal(created.pragma('user_version', { simple: true }), 7);
    created.close();
    // As a file of version 2 was: no search index, no thread column.
    const raw = new Database(path);
    raw.exec(
      'DROP TABLE runs_fts; DELETE FROM store_meta; UPDATE traces SET thread_id = NULL; PRAGMA user_version = 2',
    );
    raw.close();

    const upgraded = new LocalTraceStore(path);
    assert.deepEqual(
      upgraded.listTraces({ text: 'quokka' }).map((t) => t.startTime),
      [at(7)],
    );
    assert.equal(upgraded.listTraces({ threadId: 's1', limit: 1000 }).length, 30);
    let left = Infinity;
    for (let steps = 0; left > 0 && steps < 100; steps++) left = upgraded.indexSearchBacklog(7);
    assert.equal(left, 0);
    assert.deepEqual(
      upgraded.listTraces({ text: 'quokka' }).map((t) => t.startTime),
      [at(7)],
    );
    upgraded.close();
    // Indexed now: the words are found without the old way (a store that has no backlog).
    const check = new Database(path);
    assert.equal((check.prepare('SELECT COUNT(*) AS n FROM store_meta').get() as { n: number }).n, 0);
    assert.equal(
      (check.prepare("SELECT COUNT(*) AS n FROM runs_fts WHERE runs_fts MATCH 'quokka'").get() as { n: number }).n,
      1,
    );
    check.close();
  });
});

describe('search on a large store', () => {
  it('pages through common, rare and old-only words as a full scan would', () => {
    // 7,100 one-run traces a second apart: "common" in every third, "ancient" only in the 2,050
    // oldest (found by many runs, none among the newest 5,000 traces), "seldom" in every 700th.
    const start = Date.UTC(2026, 0, 1);
    const words = (n: number) =>
      [n % 3 === 0 ? 'common' : '', n < 2050 ? 'ancient' : '', n % 700 === 0 ? 'seldom' : '', `n${n}`].join(' ');
    const traces = Array.from({ length: 7100 }, (_, n) => [
      makeRun({
        name: 'agent',
        run_type: 'chain',
        start_time: new Date(start + n * 1000).toISOString(),
        end_time: new Date(start + n * 1000 + 500).toISOString(),
        inputs: { question: words(n) },
        outputs: {},
      }),
    ]);
    const path = join(dir, 'large.db');
    bulkLoad(path, traces);
    const s = new LocalTraceStore(path, { readonly: true });
    const all = (text: string) => {
      const found: string[] = [];
      let cursor: string | undefined;
      do {
        const page = s.queryTraces({ text, limit: 400, ...(cursor ? { cursor } : {}) });
        found.push(...page.traces.map((t) => t.traceId));
        cursor = page.nextCursor;
      } while (cursor);
      return found;
    };
    const expected = (has: (n: number) => boolean) =>
      traces.flatMap((runs, n) => (has(n) ? [runs[0]!.trace_id] : [])).reverse();
    assert.deepEqual(
      all('common'),
      expected((n) => n % 3 === 0),
    );
    assert.deepEqual(
      all('ancient'),
      expected((n) => n < 2050),
    );
    assert.deepEqual(
      all('seldom'),
      expected((n) => n % 700 === 0),
    );
    assert.deepEqual(
      all('common ancient'),
      expected((n) => n % 3 === 0 && n < 2050),
    );
    assert.deepEqual(
      s.queryTraces({ text: 'common', sort: 'name', order: 'asc', limit: 5 }).traces.map((t) => t.traceId),
      expected((n) => n % 3 === 0)
        .sort()
        .slice(0, 5),
    );
    s.close();
  });
});

describe('threads', () => {
  it('groups traces by the root run metadata thread_id, session_id or conversation_id', () => {
    const s = new LocalTraceStore(':memory:');
    s.insertRuns(agentTrace(1, 'a', { thread_id: 't-1' }), 'p');
    s.insertRuns(agentTrace(2, 'b', { session_id: 'sess-9' }), 'p');
    s.insertRuns(agentTrace(3, 'c', { thread_id: 't-1', session_id: 'ignored' }), 'p');
    s.insertRuns(agentTrace(4, 'd', { conversation_id: 42 }), 'p');
    s.insertRuns(agentTrace(5, 'e', {}), 'p');
    s.insertRuns(agentTrace(6, 'f', { thread_id: 't-1' }), 'p');
    const page = s.listThreads();
    assert.deepEqual(
      page.threads.map((t) => [t.threadId, t.turns]),
      [
        ['t-1', 3],
        ['42', 1],
        ['sess-9', 1],
      ],
    );
    const t1 = page.threads[0]!;
    assert.equal(t1.startTime, '2026-01-01T12:01:00.000000Z');
    assert.equal(t1.lastTime, '2026-01-01T12:06:00.000000Z');
    assert.equal(t1.totalTokens, 3 * 15);
    assert.equal(t1.durationMs, 3 * 4000);
    assert.equal(t1.inputPreview, 'question 1');
    assert.equal(t1.outputPreview, 'answer 6');
    const thread = s.getThread('t-1')!;
    assert.deepEqual(
      thread.turns.map((t) => t.startTime),
      [at(1), at(3), at(6)],
    );
    assert.equal(s.getThread('nope'), undefined);
    // Pages by cursor.
    const first = s.listThreads({ limit: 2 });
    assert.equal(first.threads.length, 2);
    const second = s.listThreads({ limit: 2, cursor: first.nextCursor! });
    assert.deepEqual(
      second.threads.map((t) => t.threadId),
      ['sess-9'],
    );
    assert.equal(second.nextCursor, undefined);
    s.close();
  });

  it('exports the runs of traces parents first, trace by trace', () => {
    const s = new LocalTraceStore(':memory:');
    const a = agentTrace(1, 'a');
    const b = agentTrace(2, 'b');
    s.insertRuns([a[1]!, b[1]!, b[0]!, a[0]!], 'p');
    assert.deepEqual(
      [...s.exportRuns([b[0]!.trace_id, a[0]!.trace_id])].map((run) => run.id),
      [b[0]!.id, b[1]!.id, a[0]!.id, a[1]!.id],
    );
    s.close();
  });
});
