// The SQLite storage on its own: transactions commit or roll back as a whole, the run queue's
// claim order (oldest due first, one running run per thread), and the metadata filter rule.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isoNow } from './internal/domain/clock.ts';
import { containsJson } from './internal/storage/json-match.ts';
import { SqliteStorage } from './internal/storage/sqlite.ts';
import type { RunRecord, Thread } from './internal/storage/storage.ts';

function thread(id: string): Thread {
  const now = isoNow();
  return {
    thread_id: id,
    created_at: now,
    updated_at: now,
    metadata: {},
    status: 'idle',
    config: {},
    values: null,
    interrupts: null,
  };
}

function run(id: string, threadId: string, createdAt = isoNow()): RunRecord {
  return {
    run_id: id,
    thread_id: threadId,
    assistant_id: 'a',
    created_at: createdAt,
    updated_at: createdAt,
    status: 'pending',
    metadata: {},
    kwargs: {} as RunRecord['kwargs'],
    multitask_strategy: 'enqueue',
    error: null,
    attempt: 0,
    temporary: false,
  };
}

describe('agent_api SQLite storage', () => {
  it('rolls a failed transaction back entirely', async () => {
    const storage = new SqliteStorage(':memory:');
    await assert.rejects(
      storage.transaction(async (tx) => {
        await tx.insertThread(thread('t1'));
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(await storage.getThread('t1'), undefined);
    await storage.transaction(async (tx) => tx.insertThread(thread('t1')));
    assert.equal((await storage.getThread('t1'))?.thread_id, 't1');
    await storage.close();
    await storage.close();
  });

  it('claims the oldest due run, one running run per thread, in order within a thread', async () => {
    const storage = new SqliteStorage(':memory:');
    await storage.insertThread(thread('t1'));
    await storage.insertThread(thread('t2'));
    await storage.insertRun(run('r1', 't1', isoNow(-3000)));
    await storage.insertRun(run('r2', 't1', isoNow(-2000)));
    await storage.insertRun(run('r3', 't2', isoNow(-1000)));
    await storage.insertRun(run('later', 't2', isoNow(60_000)));
    const none = new Set<string>();
    const first = await storage.claimNextRun(isoNow(), none);
    assert.equal(first?.run_id, 'r1');
    assert.equal(first?.status, 'running');
    assert.equal(first?.attempt, 1);
    // r2 waits for r1 (same thread); r3 is next; `later` is not due.
    assert.equal((await storage.claimNextRun(isoNow(), none))?.run_id, 'r3');
    assert.equal(await storage.claimNextRun(isoNow(), none), undefined);
    assert.ok(await storage.nextDueRun(isoNow()));
    await storage.updateRun({ ...first!, status: 'success' });
    assert.equal((await storage.claimNextRun(isoNow(), none))?.run_id, 'r2');
    await storage.close();
  });

  it('matches metadata filters by containment (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        // Null filter values never match (a key must be present and non-null), so drop them.
        const clean = JSON.parse(JSON.stringify(value), (_key, item) => (item === null ? undefined : item)) ?? {};
        assert.ok(containsJson(clean, {}), 'the empty filter matches anything');
        for (const [key, item] of Object.entries(clean)) {
          assert.ok(containsJson(clean, { [key]: item }), 'each present key matches itself');
        }
      }),
    );
    assert.equal(containsJson({ a: { b: 1, c: 2 } }, { a: { b: 1 } }), true);
    assert.equal(containsJson({ a: { b: 1 } }, { a: { b: 2 } }), false);
    assert.equal(containsJson({ a: null }, { a: null }), false, 'a null filter value never matches');
    assert.equal(containsJson(null, { a: 1 }), false);
    assert.equal(containsJson({ tags: ['x', 'y'] }, { tags: ['y'] }), true);
  });
});
