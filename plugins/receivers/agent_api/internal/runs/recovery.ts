// The restart rule with leases: a `running` run whose lease has expired was cut off by a process
// that stopped (or stalled for a whole lease), and is settled as `error` — not retried, because a
// retry could repeat side effects its tools already had. Every instance applies it at start and
// then every half lease, so a run left by an instance that died (kill -9) is settled by another
// one within about a lease and a half; each run by exactly one instance (`reclaimExpired`).

import type { Logger } from 'pino';
import { isoOf } from '../api/clock.ts';
import { settleThread } from '../storage/settle-thread.ts';
import type { RunRecord, Storage } from '../storage/storage.ts';
import type { EventBroker } from './broker.ts';

/** The error a cut-off run records (the same as a run still going when a graceful stop's deadline comes). */
export const RESTART_ERROR = {
  error: 'ServerRestart',
  message: 'The server stopped while this run was executing; start a new run to retry.',
} as const;

export interface RunRecoveryOptions {
  readonly storage: Storage;
  readonly broker: EventBroker;
  readonly leaseMs: number;
  readonly logger: Logger;
  /** Called after runs were reclaimed: their threads may have queued runs that can start now. */
  readonly onReclaimed?: (runs: readonly RunRecord[]) => void;
  /** The time, epoch ms (tests move it); default `Date.now`. */
  readonly now?: () => number;
}

export class RunRecovery {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<RunRecord[]>;
  private readonly now: () => number;

  constructor(private readonly options: RunRecoveryOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Settles the `running` runs whose lease has expired (with `everyLease`, every `running` run:
   * one server per database, starting), each with its thread in one transaction, and ends their
   * streams with the error. Returns the runs it settled. One sweep at a time.
   */
  reclaim(options: { everyLease?: boolean } = {}): Promise<RunRecord[]> {
    this.sweeping ??= this.sweep(options).finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Sweeps every half lease from now on. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => {
        this.reclaim().catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'Could not look for runs whose lease expired.'),
        );
      },
      Math.max(1, Math.floor(this.options.leaseMs / 2)),
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => undefined);
  }

  private async sweep(options: { everyLease?: boolean }): Promise<RunRecord[]> {
    const { storage, broker, logger } = this.options;
    const now = isoOf(this.now());
    const reclaimed = await storage.transaction(async (tx) => {
      const runs = await tx.runs.reclaimExpired(now, RESTART_ERROR, options);
      for (const run of runs) await settleThread(tx, run.thread_id, { error: true });
      return runs;
    });
    if (reclaimed.length === 0) return reclaimed;
    for (const run of reclaimed) {
      // Readers of the run's stream (on any instance, with a shared broker) learn why it ended.
      broker.publish(run.run_id, 'error', RESTART_ERROR);
      broker.finish(run.run_id);
    }
    logger.warn(
      { marked_error: reclaimed.length, run_ids: reclaimed.map((run) => run.run_id) },
      'Settled runs whose executing process stopped (their lease expired) as error.',
    );
    this.options.onReclaimed?.(reclaimed);
    return reclaimed;
  }
}
