// The worker pool: a fixed number of worker loops that claim due `pending` runs from storage (runs
// of one thread one at a time, oldest first) and hand each to the graph runner. Runs wait in
// storage, not in memory, so the queue is bounded by the database and survives a restart.
//
// A claim is a database statement, so workers claim when told to, one claim per wake-up: a new run
// (`notify`, one wake-up per run), a thread whose queued run may start now (the runner says so), a
// wake-up from another instance (`wakeIdle`). A wake-up that finds every worker busy is counted,
// and the next workers to finish claim once per count instead of going idle. One timer per pool
// (not per worker) claims once a second as a safety net: runs that became due
// (`after_seconds`), and wake-ups lost between instances.
//
// Every claim takes a lease on the run in this process's name (`owner`, random per start), and
// the pool renews the leases of the runs it executes every third of the lease. A run whose lease
// could not be renewed was settled by another instance (its lease had expired, see
// `recovery.ts`): the pool stops executing it without recording anything.

import type { Logger } from 'pino';
import { isoOf } from '../api/clock.ts';
import type { Storage } from '../storage/storage.ts';
import type { GraphRunner } from './graph-runner.ts';

/** How often an idle pool looks for runs that became due (`after_seconds`) without a wake-up. */
export const POLL_INTERVAL_MS = 1000;

/** Why an idle worker looks at the queue. */
type Wake = 'run' | 'poll' | 'stop';

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
  private wakers = new Set<(why: Wake) => void>();
  /** Wake-ups that found no idle worker: as many workers look at the queue again before going idle. */
  private missedWakes = 0;
  private pollTimer?: NodeJS.Timeout;
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
    /** How often the pool claims without a wake-up (default `POLL_INTERVAL_MS`). */
    private readonly pollMs = POLL_INTERVAL_MS,
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
    this.pollTimer = setInterval(() => this.wakeOne('poll'), this.pollMs);
    this.pollTimer.unref();
  }

  /**
   * One run may be claimed (created here, or its thread became free): wakes one idle worker, or,
   * when none is idle, counts the wake-up for the next worker that finishes. One worker, not all:
   * each woken worker claims (a database statement), and waking every idle worker for every run
   * made most claims find nothing — with 10 workers, about ten empty claims per run.
   */
  notify(): void {
    if (!this.wakeOne('run')) this.missedWakes++;
  }

  /**
   * Wakes one idle worker if there is one, and forgets the wake-up otherwise: for a run that
   * another instance created while its own workers were busy (busy workers here need no reminder,
   * and that instance keeps its own count).
   */
  wakeIdle(): boolean {
    return this.wakeOne('run');
  }

  /** Wakes one idle worker; false when none is idle. */
  private wakeOne(why: Wake): boolean {
    const wake = this.wakers.values().next().value;
    wake?.(why);
    return wake !== undefined;
  }

  /** Wakes every idle worker (the pool is stopping). */
  private wakeAll(): void {
    for (const wake of [...this.wakers]) wake('stop');
  }

  /** Stops claiming runs and waits for the workers to finish the runs they hold (renewing their leases meanwhile). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeAll();
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
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
      renewed = await this.storage.runs.renewLeases(this.leases.owner, held, this.leases.leaseMs, isoOf(this.now()));
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
    // A worker claims once when it starts (runs left pending by a stop), then once per wake-up.
    let why: Wake = 'poll';
    while (!this.stopped) {
      let run;
      try {
        run = await this.storage.runs.claimNext(
          this.leases.owner,
          this.leases.leaseMs,
          isoOf(this.now()),
          this.claimed,
        );
      } catch (error) {
        this.logger.error({ worker: index, err: error }, 'A worker could not read the run queue.');
      }
      if (run) {
        this.claimed.add(run.run_id);
        // Found by the safety net, not announced: more unannounced runs may be due, so the next
        // idle worker looks too. (An announced run has a wake-up of its own.)
        if (why === 'poll') this.wakeOne('poll');
        try {
          // Runs wait behind it on its thread: one of them may be claimed now.
          if (await this.runner.execute(run)) this.notify();
        } catch (error) {
          this.logger.error({ run_id: run.run_id, err: error }, 'A run failed outside its graph.');
        } finally {
          this.claimed.delete(run.run_id);
        }
      }
      why = await this.idle();
    }
  }

  /** Resolves when this worker should claim: at once for a wake-up that found no idle worker. */
  private idle(): Promise<Wake> {
    if (this.missedWakes > 0) {
      this.missedWakes--;
      return Promise.resolve('run');
    }
    if (this.stopped) return Promise.resolve('stop');
    return new Promise<Wake>((resolve) => {
      const wake = (why: Wake) => {
        this.wakers.delete(wake);
        resolve(why);
      };
      this.wakers.add(wake);
    });
  }
}
