// Run signals between server instances, through Redis: wake-ups (a run was created: idle workers
// everywhere look for it) and cancellation (a cancel arriving on one instance stops the run on the
// instance executing it, with the same interrupt / rollback semantics as a local cancel).
//
//   <p>wake                 pub/sub: a run may be claimed (message: the sender's instance id)
//   <p>cancel               pub/sub: {run_id, action} for whoever executes the run
//   <p>run:{id}:cancel      the requested action, kept for a while: the executing instance also
//                           polls it, so a lost message (or one sent before the run started) only
//                           delays the cancel
//   <p>run:{id}:owner       the instance executing the run, refreshed while it runs and expiring
//                           soon after it stops; a cancel finding none settles the run itself
//
// Pub/sub is lossy; everything it carries has a polling fallback: idle workers poll the queue
// every second anyway, and executing instances poll the cancel keys of their runs.

import type { Logger } from 'pino';
import { BrokerUnavailableError } from './broker.ts';
import type { RedisBus } from './redis.ts';

export type CancelAction = 'interrupt' | 'rollback';

/** What the coordinator needs to reach the other instances. */
export interface RunSignals {
  /** Wakes idle workers on the other instances. */
  wake(): void;
  /** Asks the instance executing `runId` to stop it; true when an instance holds the run. */
  cancel(runId: string, action: CancelAction): Promise<boolean>;
  /** The run started executing in this process. */
  started(runId: string): void;
  /**
   * Whether the other instances' signals reach this one now; without it they always do (a lost
   * connection is covered by the signals' own polling).
   */
  live?(): boolean;
  stop(): Promise<void>;
}

export interface RedisRunSignalsOptions {
  /** The local runs: stops one, lists those executing. */
  readonly runner: { abort(runId: string, action: CancelAction): boolean; activeIds(): ReadonlySet<string> };
  /** Wakes this instance's idle workers. */
  readonly wakeWorkers: () => void;
  readonly logger: Logger;
  /** How often executing runs' owner keys are refreshed and their cancel keys read (default 1 s). */
  readonly pollMs?: number;
  /** Owner keys expire this long after the last refresh (default 10 s). */
  readonly ownerTtlMs?: number;
  /** A cancel request is kept this long for an instance to pick it up (default 10 min). */
  readonly cancelTtlMs?: number;
}

function isCancelAction(value: unknown): value is CancelAction {
  return value === 'interrupt' || value === 'rollback';
}

export class RedisRunSignals implements RunSignals {
  private readonly pollMs: number;
  private readonly ownerTtlMs: number;
  private readonly cancelTtlMs: number;
  private timer?: NodeJS.Timeout;
  private unlisten: (() => void)[] = [];
  /** Runs whose owner key this instance set. */
  private owned = new Set<string>();
  private ticking = false;

  constructor(
    private readonly bus: RedisBus,
    private readonly options: RedisRunSignalsOptions,
  ) {
    this.pollMs = options.pollMs ?? 1000;
    this.ownerTtlMs = options.ownerTtlMs ?? 10_000;
    this.cancelTtlMs = options.cancelTtlMs ?? 600_000;
  }

  private key(runId: string, suffix: string): string {
    return `${this.bus.prefix}run:{${runId}}:${suffix}`;
  }

  async start(): Promise<void> {
    const { prefix, instanceId } = this.bus;
    this.unlisten.push(
      await this.bus.listen(`${prefix}wake`, (message) => {
        if (message !== instanceId) this.options.wakeWorkers();
      }),
      await this.bus.listen(`${prefix}cancel`, (message) => this.onCancel(message)),
    );
    this.timer = setInterval(() => void this.tick(), this.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    for (const unlisten of this.unlisten) unlisten();
    this.unlisten = [];
    if (this.owned.size > 0 && this.bus.ready()) {
      await this.bus.command.del(...[...this.owned].map((runId) => this.key(runId, 'owner'))).catch(() => undefined);
    }
    this.owned.clear();
  }

  wake(): void {
    // Lost while Redis is down: the other instances' workers poll the queue anyway.
    if (this.bus.ready())
      this.bus.command.publish(`${this.bus.prefix}wake`, this.bus.instanceId).catch(() => undefined);
  }

  async cancel(runId: string, action: CancelAction): Promise<boolean> {
    if (!this.bus.ready())
      throw new BrokerUnavailableError(
        'Cannot reach the other server instances (Redis is unreachable) to cancel the run; retry shortly.',
      );
    const results = await this.bus.command
      .multi()
      .set(this.key(runId, 'cancel'), action, 'PX', this.cancelTtlMs)
      .publish(`${this.bus.prefix}cancel`, JSON.stringify({ run_id: runId, action }))
      .exists(this.key(runId, 'owner'))
      .exec();
    const [error, owners] = results?.[2] ?? [new Error('the cancel was not sent'), 0];
    if (error) throw error;
    return Number(owners) > 0;
  }

  started(runId: string): void {
    this.owned.add(runId);
    if (!this.bus.ready()) return;
    this.bus.command
      .multi()
      .set(this.key(runId, 'owner'), this.bus.instanceId, 'PX', this.ownerTtlMs)
      .get(this.key(runId, 'cancel'))
      .exec()
      .then((results) => this.applyCancel(runId, results?.[1]?.[1]))
      .catch(() => undefined);
  }

  private onCancel(message: string): void {
    let parsed: { run_id?: unknown; action?: unknown };
    try {
      parsed = JSON.parse(message) as typeof parsed;
    } catch {
      return;
    }
    if (typeof parsed.run_id === 'string') this.applyCancel(parsed.run_id, parsed.action);
  }

  private applyCancel(runId: string, action: unknown): void {
    if (!isCancelAction(action) || !this.options.runner.abort(runId, action)) return;
    this.options.logger.debug({ run_id: runId, action }, 'Stopped a run cancelled through another instance.');
    this.bus.command.del(this.key(runId, 'cancel')).catch(() => undefined);
  }

  /** Refreshes the owner keys of the runs executing here and applies cancels nobody was told of. */
  private async tick(): Promise<void> {
    if (this.ticking || !this.bus.ready()) return;
    this.ticking = true;
    try {
      const active = [...this.options.runner.activeIds()];
      const ended = [...this.owned].filter((runId) => !active.includes(runId));
      if (active.length === 0 && ended.length === 0) return;
      const pipeline = this.bus.command.pipeline();
      for (const runId of active) {
        pipeline.set(this.key(runId, 'owner'), this.bus.instanceId, 'PX', this.ownerTtlMs);
        pipeline.get(this.key(runId, 'cancel'));
      }
      if (ended.length > 0) pipeline.del(...ended.map((runId) => this.key(runId, 'owner')));
      const results = (await pipeline.exec()) ?? [];
      this.owned = new Set(active);
      active.forEach((runId, index) => this.applyCancel(runId, results[index * 2 + 1]?.[1]));
    } catch (error) {
      this.options.logger.debug({ err: error }, 'Could not refresh the runs executing here in Redis.');
    } finally {
      this.ticking = false;
    }
  }
}
