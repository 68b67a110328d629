// The worker pool: a fixed number of worker loops that claim due `pending` runs from storage (runs
// of one thread one at a time, oldest first) and hand each to the graph runner. Runs wait in
// storage, not in memory, so the queue is bounded by the database and survives a restart.

import type { Logger } from 'pino';
import type { Storage } from '../storage/storage.ts';
import { isoNow } from '../domain/clock.ts';
import type { GraphRunner } from './graph-runner.ts';

/** How often idle workers look for runs that became due (`after_seconds`) without a notify. */
const POLL_INTERVAL_MS = 1000;

export class WorkerPool {
  private stopped = true;
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();
  /** Runs claimed by a worker in this process (excluded from further claims). */
  private readonly claimed = new Set<string>();

  constructor(
    private readonly storage: Storage,
    private readonly runner: GraphRunner,
    private readonly workers: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loops = Array.from({ length: this.workers }, (_, index) => this.loop(index));
  }

  /** Wakes idle workers: a run was created or a thread became free. */
  notify(): void {
    for (const wake of [...this.wakers]) wake();
  }

  /** Stops claiming runs and waits for the workers to finish the runs they hold. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.notify();
    await Promise.all(this.loops);
    this.loops = [];
  }

  private async loop(index: number): Promise<void> {
    while (!this.stopped) {
      let run;
      try {
        run = await this.storage.claimNextRun(isoNow(), this.claimed);
      } catch (error) {
        this.logger.error({ worker: index, err: error }, 'A worker could not read the run queue.');
      }
      if (!run) {
        await this.idle();
        continue;
      }
      this.claimed.add(run.run_id);
      try {
        await this.runner.execute(run);
      } catch (error) {
        this.logger.error({ run_id: run.run_id, err: error }, 'A run failed outside its graph.');
      } finally {
        this.claimed.delete(run.run_id);
      }
      // The thread is free again: its next run (if any) may start now.
      this.notify();
    }
  }

  private idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, POLL_INTERVAL_MS);
      this.wakers.add(wake);
    });
  }
}
