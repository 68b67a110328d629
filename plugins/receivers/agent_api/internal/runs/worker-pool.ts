// The worker pool: a fixed number of worker loops that claim due `pending` runs from storage (runs
// of one thread one at a time, oldest first) and hand each to the graph runner. Runs wait in
// storage, not in memory, so the queue is bounded by the database and survives a restart.
//
// Every claim takes a lease on the run in this process's name (`owner`, random per start), and
// the pool renews the leases of the runs it executes every third of the lease. A run whose lease
// could not be renewed was settled by another instance (its lease had expired, see
// `recovery.ts`): the pool stops executing it without recording anything.

import type { Logger } from 'pino';
import { isoOf } from '../domain/clock.ts';
import type { Storage } from '../storage/storage.ts';
import type { GraphRunner } from './graph-runner.ts';

/** How often idle workers look for runs that became due (`after_seconds`) without a notify. */
const POLL_INTERVAL_MS = 1000;

/** What the pool needs of the runner. */
export type RunExecutor = Pick<GraphRunner, 'execute' | 'abort'>;

export interface RunLeases {
  /** This process's name on the leases it takes; random per start. */
  readonly owner: string;
  /** How long a lease lasts without renewal. */
  readonly leaseMs: number;
  /** The time, epoch ms (tests move it); default `Date.now`. */
  readonly now?: () => number;
}

export class WorkerPool {
  private stopped = true;
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();
  /** A wake-up that found no idle worker: the next worker to go idle looks at the queue again first. */
  private missedWake = false;
  /** Runs claimed by a worker in this process (excluded from further claims; their leases renewed). */
  private readonly claimed = new Set<string>();
  private renewTimer?: NodeJS.Timeout;
  private renewing?: Promise<void>;
  private readonly now: () => number;

  constructor(
    private readonly storage: Storage,
    private readonly runner: RunExecutor,
    private readonly workers: number,
    private readonly logger: Logger,
    private readonly leases: RunLeases,
  ) {
    this.now = leases.now ?? Date.now;
  }

  /** The runs this process's workers hold. */
  held(): ReadonlySet<string> {
    return new Set(this.claimed);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loops = Array.from({ length: this.workers }, (_, index) => this.loop(index));
    this.renewTimer = setInterval(() => void this.renewLeases(), Math.max(1, Math.floor(this.leases.leaseMs / 3)));
    this.renewTimer.unref();
  }

  /**
   * Wakes one idle worker: a run was created or a thread became free. One, not all: each woken
   * worker looks at the queue (a storage query under the writer lock), and waking every idle worker
   * for every run made most of those queries find nothing — with 10 workers, about ten empty claims
   * per run, the largest cost of a run on the storage. A worker that claims a run wakes the next one
   * (more may be due), so a burst still reaches as many workers as it needs. A wake-up that comes
   * while no worker is idle (they are all executing, or one is between an empty claim and going
   * idle) is kept, so that it is not lost.
   */
  notify(): void {
    if (!this.wakeOne()) this.missedWake = true;
  }

  /** Wakes one idle worker; false when none is idle. */
  private wakeOne(): boolean {
    const wake = this.wakers.values().next().value;
    wake?.();
    return wake !== undefined;
  }

  /** Wakes every idle worker (the pool is stopping). */
  private wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }

  /** Stops claiming runs and waits for the workers to finish the runs they hold (renewing their leases meanwhile). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeAll();
    await Promise.all(this.loops);
    this.loops = [];
    clearInterval(this.renewTimer);
    this.renewTimer = undefined;
    await this.renewing;
  }

  /**
   * Extends the leases of the runs the workers hold (the timer calls this every third of the lease);
   * a run whose lease is no longer this process's is stopped here. One renewal at a time.
   */
  renewLeases(): Promise<void> {
    this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private async renew(): Promise<void> {
    const held = [...this.claimed];
    if (held.length === 0) return;
    let renewed: string[];
    try {
      renewed = await this.storage.renewLeases(this.leases.owner, held, this.leases.leaseMs, isoOf(this.now()));
    } catch (error) {
      // The next attempt comes a third of a lease later; two more failures and the lease lapses.
      this.logger.warn({ err: error, runs: held.length }, 'Could not renew the leases of running runs.');
      return;
    }
    const kept = new Set(renewed);
    for (const runId of held) {
      // Not renewed: it ended meanwhile (no longer held), or another instance reclaimed it.
      if (kept.has(runId) || !this.claimed.has(runId)) continue;
      if (this.runner.abort(runId, 'lost')) {
        this.logger.warn(
          { run_id: runId, owner: this.leases.owner },
          'Lost the lease of a running run (it was not renewed in time and another instance settled it); stopped executing it.',
        );
      }
    }
  }

  private async loop(index: number): Promise<void> {
    while (!this.stopped) {
      let run;
      try {
        run = await this.storage.claimNextRun(this.leases.owner, this.leases.leaseMs, isoOf(this.now()), this.claimed);
      } catch (error) {
        this.logger.error({ worker: index, err: error }, 'A worker could not read the run queue.');
      }
      if (!run) {
        await this.idle();
        continue;
      }
      this.claimed.add(run.run_id);
      // More runs may be due: the next idle worker looks. (A worker that is not idle needs no
      // wake-up for them: it is executing and looks when it ends, or its claim comes after this one.)
      this.wakeOne();
      try {
        await this.runner.execute(run);
      } catch (error) {
        this.logger.error({ run_id: run.run_id, err: error }, 'A run failed outside its graph.');
      } finally {
        this.claimed.delete(run.run_id);
      }
      // The thread is free again: this worker looks at the queue at once, so its next run (if any)
      // starts now without waking another.
    }
  }

  private idle(): Promise<void> {
    if (this.missedWake) {
      this.missedWake = false;
      return Promise.resolve();
    }
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
