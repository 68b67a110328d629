// Cancelling runs: a running run is stopped by the worker that executes it; a pending one (or a
// running one no worker holds, left over by a stopped process) is settled here with its thread.
// Its own module, below the services, because deleting a thread or an assistant cancels their
// runs first: threads and assistants depend on this, not on the whole run service.

import { isoNow } from '../api/clock.ts';
import { settleThread } from '../storage/settle-thread.ts';
import type { RunRecord, Storage } from '../storage/storage.ts';
import type { RunControl } from './run-control.ts';

export class RunCancellation {
  constructor(
    private readonly storage: Storage,
    private readonly execution: RunControl,
    /**
     * Deletes the checkpoints a run wrote. A rollback of a run that a stopped process left
     * `running` (no worker holds it) calls this, since no worker will; a worker deletes those of the
     * runs it executes itself.
     */
    private readonly deleteRunCheckpoints?: (threadId: string, runId: string) => Promise<unknown>,
  ) {}

  /** Interrupts a run if it is still pending or running (a client that left); an ended run is left alone. */
  async cancelIfActive(runId: string): Promise<void> {
    const run = await this.storage.runs.get(runId);
    if (run) await this.cancelOne(run, 'interrupt');
  }

  /** Cancels every pending or running run of a thread (before the thread is deleted). */
  async cancelThreadRuns(threadId: string): Promise<void> {
    const runs = await this.storage.runs.inflight(threadId);
    for (const run of runs) await this.cancelOne(run, 'interrupt');
    // Wait until they have stopped, so none writes a checkpoint after the thread is gone.
    for (const run of runs) await this.execution.waitFor(run.run_id);
  }

  /** Cancels every pending or running run of an assistant (before the assistant is deleted). */
  async cancelAssistantRuns(assistantId: string): Promise<void> {
    const inflight = [
      ...(await this.storage.runs.withStatus('pending')),
      ...(await this.storage.runs.withStatus('running')),
    ];
    const runs = inflight.filter((run) => run.assistant_id === assistantId);
    for (const run of runs) await this.cancelOne(run, 'interrupt');
    for (const run of runs) await this.execution.waitFor(run.run_id);
  }

  /** Cancels one run that was pending or running when read. */
  async cancelOne(run: RunRecord, action: 'interrupt' | 'rollback'): Promise<void> {
    for (;;) {
      if (run.status === 'running' && (await this.execution.abort(run.run_id, action))) return;
      if (run.status !== 'pending' && run.status !== 'running') return;
      // Pending (or running in no worker: left over by a stopped process): settle it here.
      let orphaned = false;
      const claimed = await this.storage.transaction(async (tx) => {
        const current = await tx.runs.get(run.run_id);
        if (!current || (current.status !== 'pending' && current.status !== 'running')) return undefined;
        // Read as pending, claimed by a worker since (here or on another instance): that worker
        // executes it, so it is the one to stop it. Settling it here would leave it executing on a
        // thread that looks free, its checkpoints landing after the rollback that should remove them.
        if (current.status === 'running' && run.status === 'pending') return current;
        orphaned = current.status === 'running';
        if (action === 'rollback') await tx.runs.delete(run.run_id);
        else await tx.runs.update({ ...current, status: 'interrupted', updated_at: isoNow() });
        await settleThread(tx, run.thread_id, {});
        return undefined;
      });
      if (claimed) {
        run = claimed;
        continue;
      }
      if (action === 'rollback') {
        // What the stopped process's graph wrote goes with the run, as it would with a worker's rollback.
        if (orphaned) await this.deleteRunCheckpoints?.(run.thread_id, run.run_id);
        this.execution.discard(run.run_id);
      } else this.execution.close(run.run_id);
      return;
    }
  }
}
