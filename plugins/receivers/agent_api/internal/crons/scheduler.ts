// The cron scheduler: wakes when the earliest cron is due (and at least every `pollMs`, so crons
// another instance created are seen), and starts each due cron's run as an ordinary run.
//
// Exactly once. Starting a tick's run and moving the cron's `next_run_date` on are one database
// transaction: the run's insertion begins with `claimCronTick`, a compare-and-set of
// `next_run_date` from the value this instance read. Of several instances sharing the database,
// or of a manual `tick()` racing the timer, only one claim succeeds; the others roll back and start
// nothing. A process that stops before the transaction commits leaves the tick due, so it fires
// after the restart; one that stops after it has fired it.
//
// Missed ticks. `next_run_date` always moves to the schedule's first match after the time the tick
// is handled, so a cron that was due while no instance ran fires once when one runs again, and then
// keeps its schedule: the ticks missed in between are not made up.
//
// Failures. A run that cannot be created (its assistant's graph is gone, its thread refuses a
// new run) is logged, and the cron moves on to its next time; the tick is not retried.

import type { Logger } from 'pino';
import type { AuthContext, AuthUser } from '../auth/custom.ts';
import { isoOf } from '../api/clock.ts';
import type { RunCreate } from '../api/schemas.ts';
import type { CronRecord } from '../storage/crons.ts';
import type { RunRecord, Storage, StorageOps } from '../storage/storage.ts';
import { nextRunAfter } from './schedule.ts';
import type { Clock } from './schedule.ts';

/** Another claimer started this tick's run first. */
class TickTaken extends Error {}

/** How a tick's run is created: inside the transaction that claims the tick, as the cron's owner. */
export interface TickRunAccess {
  /** Runs first in the transaction that inserts the run; throwing aborts the creation. */
  readonly claim: (tx: StorageOps) => Promise<void>;
  readonly auth?: AuthContext;
}

export interface CronSchedulerOptions {
  readonly storage: Storage;
  /** Creates runs (the run service). */
  readonly runs: {
    create(
      threadId: string | undefined,
      body: RunCreate,
      headers: Record<string, string>,
      access: TickRunAccess,
    ): Promise<RunRecord>;
  };
  /** Read anew at every tick, so tests can move time. */
  readonly clock: () => Clock;
  readonly logger: Logger;
  /** Longest sleep between two looks at the database (default 1000 ms). */
  readonly pollMs?: number;
}

const RUN_FIELDS = [
  'input',
  'config',
  'context',
  'webhook',
  'interrupt_before',
  'interrupt_after',
  'stream_mode',
  'stream_subgraphs',
  'stream_resumable',
  'multitask_strategy',
] as const;

/** The run a cron's tick starts, from its payload. */
export function cronRunBody(cron: CronRecord): RunCreate {
  const body: Record<string, unknown> = {};
  for (const key of RUN_FIELDS) if (cron.payload[key] !== undefined) body[key] = cron.payload[key];
  return {
    ...body,
    assistant_id: cron.assistant_id,
    metadata: { ...cron.metadata, cron_id: cron.cron_id },
    // A thread cron's tick waits behind a run in progress on its thread unless told otherwise.
    multitask_strategy: (body.multitask_strategy as RunCreate['multitask_strategy']) ?? 'enqueue',
    ...(cron.thread_id === null ? { on_completion: cron.on_run_completed ?? 'delete' } : {}),
  } as RunCreate;
}

export class CronScheduler {
  private timer?: NodeJS.Timeout;
  private stopped = true;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly pollMs: number;

  constructor(private readonly options: CronSchedulerOptions) {
    this.pollMs = options.pollMs ?? 1000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.arm(0);
  }

  /** Stops the timer and waits for a tick in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.chain.catch(() => undefined);
  }

  /** A cron was created or changed: look again now. */
  wake(): void {
    if (!this.stopped) this.arm(0);
  }

  /**
   * Starts the run of every cron due now, once each; resolves with the runs this call started.
   * Calls run one after another (with the timer's own ticks too).
   */
  tick(): Promise<RunRecord[]> {
    const next = this.chain.catch(() => undefined).then(() => this.fireDue());
    this.chain = next;
    return next;
  }

  private arm(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.loop(), delayMs);
    this.timer.unref();
  }

  private async loop(): Promise<void> {
    if (this.stopped) return;
    let delay = this.pollMs;
    try {
      await this.tick();
      const earliest = await this.options.storage.crons.earliestRun();
      if (earliest !== undefined) {
        const wait = Date.parse(earliest) - this.options.clock().now();
        delay = Math.max(20, Math.min(this.pollMs, wait));
      }
    } catch (error) {
      this.options.logger.error({ err: error }, 'The cron scheduler could not read the crons.');
    }
    if (!this.stopped) this.arm(delay);
  }

  private async fireDue(): Promise<RunRecord[]> {
    const started: RunRecord[] = [];
    // Bounded: each pass moves every cron it saw past now (or another instance did).
    for (let pass = 0; pass < 10; pass++) {
      const nowMs = this.options.clock().now();
      const due = await this.options.storage.crons.due(isoOf(nowMs), 100);
      for (const cron of due) {
        const run = await this.fire(cron, nowMs);
        if (run) started.push(run);
      }
      if (due.length < 100) break;
    }
    return started;
  }

  private async fire(cron: CronRecord, nowMs: number): Promise<RunRecord | undefined> {
    const { storage, runs, logger } = this.options;
    const expected = cron.next_run_date!;
    const now = isoOf(nowMs);
    let next: string | null;
    try {
      next = nextRunAfter(cron.schedule, cron.timezone, nowMs);
    } catch {
      next = null;
    }
    const claim = async (tx: StorageOps) => {
      if (!(await tx.crons.claimTick(cron.cron_id, expected, next, now))) throw new TickTaken();
    };
    // The stored creator is the JSON of the AuthUser the custom auth handler returned when the cron
    // was created; JSON's type cannot say so.
    const auth: AuthContext | undefined = cron.auth
      ? { user: cron.auth.user as unknown as AuthUser, scopes: cron.auth.scopes }
      : undefined;
    try {
      const run = await runs.create(cron.thread_id ?? undefined, cronRunBody(cron), {}, { claim, auth });
      logger.info(
        { cron_id: cron.cron_id, run_id: run.run_id, thread_id: run.thread_id, due: expected },
        'A cron started a run.',
      );
      return run;
    } catch (error) {
      if (error instanceof TickTaken) return undefined;
      logger.warn(
        { cron_id: cron.cron_id, due: expected, err: error },
        'A cron could not start its run; it runs again at its next scheduled time.',
      );
      await storage.crons.claimTick(cron.cron_id, expected, next, now).catch((failure: unknown) => {
        logger.error({ cron_id: cron.cron_id, err: failure }, 'Could not move a cron to its next time.');
      });
      return undefined;
    }
  }
}
