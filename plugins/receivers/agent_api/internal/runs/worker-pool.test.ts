// The worker pool's wake-ups, on a real SQLite storage whose claims are counted: one claim per
// wake-up, a wake-up that finds every worker busy kept for the next worker that finishes, one
// from another instance forgotten when no worker is idle, and no claim while the pool is idle
// and nothing wakes it (its safety-net poll aside).

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { eventually } from 'tracepipe/testing';
import { silentLogger } from 'tracepipe';
import { openSqliteStorage } from '../storage/sqlite.ts';
import type { RunRecord, Storage } from '../storage/storage.ts';
import { run, thread } from '../../testing/storage-contract.ts';
import { WorkerPool } from './worker-pool.ts';
import type { RunExecutor } from './worker-pool.ts';

/** A runner that holds each run until the test releases it. */
class HeldRunner implements RunExecutor {
  readonly started: string[] = [];
  private readonly held = new Map<string, () => void>();

  execute(record: RunRecord): Promise<boolean> {
    this.started.push(record.run_id);
    return new Promise((resolve) => this.held.set(record.run_id, () => resolve(false)));
  }

  abort(): boolean {
    return false;
  }

  release(runId: string): void {
    this.held.get(runId)?.();
    this.held.delete(runId);
  }
}

describe('agent_api worker pool wake-ups', () => {
  let storage: Storage;
  let claims: number;
  let runner: HeldRunner;
  let pool: WorkerPool;

  beforeEach(async () => {
    storage = openSqliteStorage(':memory:');
    claims = 0;
    // Every claim goes through the storage's run repository: count them there.
    const claimNext = storage.runs.claimNext.bind(storage.runs);
    storage.runs.claimNext = (...args) => {
      claims++;
      return claimNext(...args);
    };
    runner = new HeldRunner();
    // A lease and a poll far longer than the test: neither timer fires.
    pool = new WorkerPool(storage, runner, 2, silentLogger(), { owner: 'test', leaseMs: 3_600_000 }, 3_600_000);
    for (const id of ['t1', 't2', 't3']) await storage.threads.insert(thread(id));
  });

  afterEach(async () => {
    for (const id of runner.started) runner.release(id);
    await pool.stop();
    await storage.close();
  });

  /** Waits until every worker has claimed once at start and gone idle (the queue was empty). */
  async function started(): Promise<void> {
    pool.start();
    await eventually(() => assert.equal(claims, 2));
  }

  it('claims once per run announced, and keeps a wake-up that found every worker busy', async () => {
    await started();
    await storage.runs.insert(run('r1', 't1'));
    pool.notify();
    await eventually(() => assert.deepEqual(runner.started, ['r1']));
    assert.equal(claims, 3, 'one claim for one announced run');
    await storage.runs.insert(run('r2', 't2'));
    pool.notify();
    await eventually(() => assert.deepEqual(runner.started, ['r1', 'r2']));
    assert.equal(claims, 4);
    // Both workers busy: the wake-up for r3 is kept, and the first worker to finish claims it.
    await storage.runs.insert(run('r3', 't3'));
    pool.notify();
    assert.equal(claims, 4, 'no worker was idle to claim');
    runner.release('r1');
    await eventually(() => assert.deepEqual(runner.started, ['r1', 'r2', 'r3']));
    assert.equal(claims, 5);
  });

  it('forgets a wake-up from another instance when no worker is idle', async () => {
    await started();
    for (const [id, threadId] of [
      ['r1', 't1'],
      ['r2', 't2'],
    ]) {
      await storage.runs.insert(run(id!, threadId!));
      pool.notify();
    }
    await eventually(() => assert.equal(runner.started.length, 2));
    const before = claims;
    assert.equal(pool.wakeIdle(), false);
    runner.release('r1');
    // The finished worker goes idle without claiming: nothing told it a run is waiting.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(claims, before);
  });
});
