// The rollback fence: a run's checkpoint writes still under way when its rollback begins end
// before the rollback deletes anything, and any the run attempts afterwards are dropped, on the
// real SQLite checkpointer as well as on the fence alone.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { RunnableConfig } from '@langchain/core/runnables';
import { emptyCheckpoint } from '@langchain/langgraph';
import type { CheckpointMetadata } from '@langchain/langgraph';
import { SqliteCheckpointDatabase } from './checkpoints.ts';
import { RunWriteFence, runOfWrite } from './write-fence.ts';

const configOf = (runId: string | undefined, threadId = 'thread'): RunnableConfig => ({
  configurable: { thread_id: threadId, checkpoint_ns: '' },
  ...(runId === undefined ? {} : { metadata: { run_id: runId } }),
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('RunWriteFence', () => {
  it('reads the run of a write from the metadata the graph runner sets', () => {
    assert.equal(runOfWrite(configOf('run-1')), 'run-1');
    assert.equal(runOfWrite(configOf(undefined)), undefined);
    assert.equal(runOfWrite({ metadata: { run_id: 7 } }), undefined);
  });

  it('closing a run waits for its writes under way, and drops the writes it attempts afterwards', async () => {
    const fence = new RunWriteFence();
    const held = deferred();
    const written: string[] = [];
    const first = fence.guard(
      configOf('run-1'),
      async () => {
        await held.promise;
        written.push('before');
        return 'written';
      },
      'skipped',
    );
    let closed = false;
    const closing = fence.close('run-1').then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(closed, false, 'the close waits for the write under way');
    held.resolve();
    await closing;
    assert.equal(await first, 'written');
    assert.deepEqual(written, ['before']);

    const late = await fence.guard(
      configOf('run-1'),
      async () => {
        written.push('after');
        return 'written';
      },
      'skipped',
    );
    assert.equal(late, 'skipped');
    assert.deepEqual(written, ['before'], 'a write after the close never reaches the saver');
  });

  it("leaves other runs' writes, and writes of no run, alone", async () => {
    const fence = new RunWriteFence();
    await fence.close('run-1');
    assert.equal(await fence.guard(configOf('run-2'), async () => 'written', 'skipped'), 'written');
    assert.equal(await fence.guard(configOf(undefined), async () => 'written', 'skipped'), 'written');
  });

  it('a failed write under way does not fail the close, and still fails its caller', async () => {
    const fence = new RunWriteFence();
    const failing = fence.guard(
      configOf('run-1'),
      async () => {
        throw new Error('disk full');
      },
      'skipped',
    );
    await fence.close('run-1');
    await assert.rejects(failing, /disk full/);
  });

  it('closing a run with no write under way resolves at once', async () => {
    await new RunWriteFence().close('never-wrote');
  });
});

describe('SqliteCheckpointDatabase: rollback against late writes', () => {
  it('a checkpoint the run writes after its rollback began is dropped; other runs still write', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tracepipe-fence-'));
    const database = new SqliteCheckpointDatabase(join(dir, 'checkpoints.sqlite'));
    try {
      const put = (runId: string) => {
        const checkpoint = { ...emptyCheckpoint(), id: randomUUID() };
        const metadata = { source: 'loop', step: 0, parents: {} } as CheckpointMetadata;
        return database.saver.put(configOf(runId), checkpoint, metadata);
      };
      await put('rolled-back');
      assert.equal(await database.deleteRunCheckpoints('thread', 'rolled-back'), 1);
      // The run's loop, still finishing its step, writes once more: nothing lands.
      const answer = await put('rolled-back');
      assert.equal(typeof answer.configurable?.checkpoint_id, 'string', 'the loop is answered as if written');
      assert.equal(
        await database.saver.getTuple({ configurable: { thread_id: 'thread', checkpoint_ns: '' } }),
        undefined,
      );
      await database.saver.putWrites(configOf('rolled-back'), [['messages', 'late']], 'task');

      await put('next');
      const latest = await database.saver.getTuple({ configurable: { thread_id: 'thread', checkpoint_ns: '' } });
      assert.equal((latest?.metadata as Record<string, unknown> | undefined)?.run_id, 'next');
      assert.deepEqual(latest?.pendingWrites, []);
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
