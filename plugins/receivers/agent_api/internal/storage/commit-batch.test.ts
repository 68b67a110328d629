// The SQLite checkpointer's writes committed together: the rows are the ones LangGraph's
// `SqliteSaver` writes for the same calls (so a change of its table layout fails here), writes of
// one moment share one transaction, and a failing write fails only its own caller.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { RunnableConfig } from '@langchain/core/runnables';
import { emptyCheckpoint } from '@langchain/langgraph';
import type { Checkpoint, CheckpointMetadata } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { tempDir } from 'tracepipe/testing';
import { SqliteCheckpointDatabase, serverCheckpointMetadata } from './checkpoints.ts';
import { CommitBatch } from './commit-batch.ts';

const config = (threadId: string, namespace: string, checkpointId?: string): RunnableConfig => ({
  configurable: {
    thread_id: threadId,
    checkpoint_ns: namespace,
    ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
  },
  metadata: { run_id: 'run-1', owner: 'someone' },
});

function checkpoint(id: string, values: Record<string, unknown>): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id,
    ts: '2026-11-27T00:00:00.000Z',
    channel_values: values,
    channel_versions: { a: 1 },
  };
}

const metadata = (step: number): CheckpointMetadata => ({ source: 'loop', step, parents: {} });

/** The same calls on a saver: two threads, a subgraph namespace, repeated and special writes. */
async function write(saver: {
  put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig>;
  putWrites(config: RunnableConfig, writes: [string, unknown][], taskId: string): Promise<void>;
}): Promise<void> {
  await saver.put(config('t1', ''), checkpoint('1ef00000-0000-6000-8000-000000000001', { a: [1] }), metadata(-1));
  await Promise.all([
    saver.put(
      config('t1', '', '1ef00000-0000-6000-8000-000000000001'),
      checkpoint('1ef00000-0000-6000-8000-000000000002', { a: [1, 'two'] }),
      metadata(0),
    ),
    saver.put(
      config('t2', 'sub:task'),
      checkpoint('1ef00000-0000-6000-8000-000000000003', { b: { c: null } }),
      metadata(0),
    ),
    saver.putWrites(
      config('t1', '', '1ef00000-0000-6000-8000-000000000002'),
      [
        ['a', 'x'],
        ['b', { y: 1 }],
      ],
      'task-b',
    ),
    saver.putWrites(
      config('t1', '', '1ef00000-0000-6000-8000-000000000002'),
      [['__interrupt__', [{ id: 'i', value: 'ask' }]]],
      'task-a',
    ),
  ]);
  // Repeated: an ordinary write keeps the first; a call of special channels alone replaces.
  await saver.putWrites(
    config('t1', '', '1ef00000-0000-6000-8000-000000000002'),
    [
      ['a', 'later'],
      ['__error__', { message: 'm' }],
    ],
    'task-b',
  );
  await saver.putWrites(
    config('t1', '', '1ef00000-0000-6000-8000-000000000002'),
    [['__interrupt__', [{ id: 'i', value: 'again' }]]],
    'task-a',
  );
}

function rows(path: string): unknown {
  const db = new Database(path, { readonly: true });
  try {
    return {
      checkpoints: db.prepare('SELECT * FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id').all(),
      writes: db.prepare('SELECT * FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx').all(),
    };
  } finally {
    db.close();
  }
}

describe('checkpoint writes committed together', () => {
  const dir = tempDir('agent-api-commit-batch-');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("stores the rows LangGraph's SqliteSaver stores for the same calls", async () => {
    const ours = new SqliteCheckpointDatabase(join(dir, 'ours.sqlite'));
    await write(ours.saver as never);
    await ours.close();
    const libraryDb = new Database(join(dir, 'library.sqlite'));
    const library = new SqliteSaver(libraryDb);
    // The server's saver adds the run's metadata to each checkpoint's; the library's is given it.
    await write({
      put: (at, saved, meta) => library.put(at, saved, serverCheckpointMetadata(at, meta)),
      putWrites: (at, writes, taskId) => library.putWrites(at, writes, taskId),
    });
    libraryDb.close();
    const stored = rows(join(dir, 'ours.sqlite')) as { checkpoints: unknown[]; writes: unknown[] };
    assert.equal(stored.checkpoints.length, 3);
    assert.equal(stored.writes.length, 4);
    assert.deepEqual(stored, rows(join(dir, 'library.sqlite')));
  });

  it('commits the writes of one moment in one transaction, and fails only the write that fails', async () => {
    const db = new Database(join(dir, 'batch.sqlite'));
    try {
      db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      const batch = new CommitBatch(db);
      const insert = (id: number, body: string | null) => () =>
        void db.prepare('INSERT INTO items VALUES (?, ?)').run(id, body);
      const outcomes = await Promise.allSettled([
        batch.commit(insert(1, 'a')),
        batch.commit(insert(2, null)),
        batch.commit(insert(3, 'c')),
      ]);
      assert.deepEqual(
        outcomes.map((outcome) => outcome.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /NOT NULL/);
      assert.deepEqual(db.prepare('SELECT id FROM items ORDER BY id').pluck().all(), [1, 3]);

      // Three together, in one transaction: another connection sees none of them while each is
      // written (each in a transaction of its own, it would see the ones before).
      const reader = new Database(join(dir, 'batch.sqlite'), { readonly: true });
      try {
        const seen: number[] = [];
        const count = () => reader.prepare('SELECT count(*) FROM items').pluck().get() as number;
        const together = [4, 5, 6].map((id) =>
          batch.commit(() => {
            insert(id, 'x')();
            seen.push(count());
          }),
        );
        await Promise.all(together);
        assert.deepEqual(seen, [2, 2, 2]);
        assert.equal(count(), 5);
      } finally {
        reader.close();
      }
    } finally {
      db.close();
    }
  });
});
