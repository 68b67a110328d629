// Cancelling a run that a worker claims between the cancel's read and its write: the run is read
// as pending, so no worker is asked to stop it, but by the time the cancel settles it a worker
// executes it. The cancel must then go through that worker (abort), never settle the run under it:
// a rollback that deleted the record would leave the graph executing on a thread that looks free.
// And a rollback of a run no worker holds (its process stopped) takes the run's checkpoints with
// it, since no worker will. Real SQLite storage and checkpointer; the run machinery is a recording
// `RunControl`, the worker a real claim.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { emptyCheckpoint } from '@langchain/langgraph';
import type { CheckpointMetadata } from '@langchain/langgraph';
import { GraphRegistry } from '../graphs/registry.ts';
import { SqliteCheckpointDatabase } from '../storage/checkpoints.ts';
import { openSqliteStorage } from '../storage/sqlite.ts';
import type { Storage } from '../storage/storage.ts';
import { assistant, run, thread } from '../../testing/storage-contract.ts';
import { AssistantService } from './assistants.ts';
import type { RunControl } from './run-control.ts';
import { RunService } from './runs.ts';

class RecordingControl implements RunControl {
  readonly calls: string[] = [];
  /** Whether a worker holds the runs it is asked to stop (false: their process is gone). */
  constructor(private readonly held = true) {}
  notify(): void {}
  open(): void {}
  abort(runId: string, action: 'interrupt' | 'rollback'): boolean {
    this.calls.push(`abort ${runId} ${action}`);
    return this.held;
  }
  async waitFor(): Promise<void> {}
  close(runId: string): void {
    this.calls.push(`close ${runId}`);
  }
  discard(runId: string): void {
    this.calls.push(`discard ${runId}`);
  }
}

/** `storage` whose next transaction starts only after a worker has claimed the next run. */
function claimingBeforeTransaction(storage: Storage): Storage {
  let claimed = false;
  return {
    ...storage,
    async transaction(fn) {
      if (!claimed) {
        claimed = true;
        await storage.runs.claimNext('worker-elsewhere', 60_000, new Date().toISOString(), new Set());
      }
      return storage.transaction(fn);
    },
  };
}

describe('RunService.cancel against a concurrent claim', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-cancel-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const action of ['rollback', 'interrupt'] as const) {
    it(`${action}: a run claimed after it was read as pending is stopped by its worker, not settled under it`, async () => {
      const storage = openSqliteStorage(join(dir, `${action}.sqlite`));
      try {
        await storage.assistants.insert(assistant('a1'));
        await storage.threads.insert(thread('t1', { status: 'busy' }));
        await storage.runs.insert(run('r1', 't1', { assistant_id: 'a1', status: 'pending' }));
        const control = new RecordingControl();
        const racing = claimingBeforeTransaction(storage);
        const graphs = await GraphRegistry.load([]);
        const service = new RunService(
          racing,
          new AssistantService(racing, graphs, async () => {}),
          control,
          () => true,
        );

        await service.cancel('t1', 'r1', action, false);

        assert.deepEqual(control.calls, [`abort r1 ${action}`], 'the worker executing it was asked to stop it');
        const record = await storage.runs.get('r1');
        assert.equal(record?.status, 'running', 'the run is left to its worker, which settles it as it stops');
        assert.equal((await storage.threads.get('t1'))?.status, 'busy');
      } finally {
        await storage.close();
      }
    });
  }

  it('a pending run nobody claims is settled by the cancel itself', async () => {
    const storage = openSqliteStorage(join(dir, 'pending.sqlite'));
    try {
      await storage.assistants.insert(assistant('a1'));
      await storage.threads.insert(thread('t1', { status: 'busy' }));
      await storage.runs.insert(run('r1', 't1', { assistant_id: 'a1', status: 'pending' }));
      const control = new RecordingControl();
      const service = new RunService(
        storage,
        new AssistantService(storage, await GraphRegistry.load([]), async () => {}),
        control,
        () => true,
      );
      await service.cancel('t1', 'r1', 'rollback', false);
      assert.deepEqual(control.calls, ['discard r1']);
      assert.equal(await storage.runs.get('r1'), undefined);
      assert.equal((await storage.threads.get('t1'))?.status, 'idle');
    } finally {
      await storage.close();
    }
  });
  it('rollback of a run a stopped process left running deletes the run and the checkpoints its graph wrote', async () => {
    const storage = openSqliteStorage(join(dir, 'orphan.sqlite'));
    const checkpoints = new SqliteCheckpointDatabase(join(dir, 'orphan-checkpoints.sqlite'));
    try {
      await storage.assistants.insert(assistant('a1'));
      await storage.threads.insert(thread('t1', { status: 'busy' }));
      await storage.runs.insert(run('r1', 't1', { assistant_id: 'a1', status: 'running' }));
      const address = { configurable: { thread_id: 't1', checkpoint_ns: '' } };
      const metadata = { source: 'loop', step: 0, parents: {} } as CheckpointMetadata;
      await checkpoints.saver.put(
        { ...address, metadata: { run_id: 'r1' } },
        { ...emptyCheckpoint(), id: randomUUID() },
        metadata,
      );
      const control = new RecordingControl(false);
      const service = new RunService(
        storage,
        new AssistantService(storage, await GraphRegistry.load([]), async () => {}),
        control,
        () => true,
        undefined,
        { deleteRunCheckpoints: (threadId, runId) => checkpoints.deleteRunCheckpoints(threadId, runId) },
      );
      await service.cancel('t1', 'r1', 'rollback', false);
      assert.deepEqual(control.calls, ['abort r1 rollback', 'discard r1']);
      assert.equal(await storage.runs.get('r1'), undefined);
      assert.equal(await checkpoints.saver.getTuple(address), undefined, "the run's checkpoints went with it");
      assert.equal((await storage.threads.get('t1'))?.status, 'idle');
    } finally {
      await checkpoints.close();
      await storage.close();
    }
  });
});
