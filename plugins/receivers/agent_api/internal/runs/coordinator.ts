// The run machinery as the domain and the routes see it (the domain's `RunControl`): wakes the
// worker pool, stops runs, opens and closes their event logs, waits for a run to end and reads its
// result (the last root values, or `{__error__: {error, message}}`). With `signals` (the Redis
// broker, or PostgreSQL notifications), wake-ups and cancels also reach the other instances.
//
// On a database several servers share without a shared broker (`shared`), a run may execute in
// another server, whose events this one does not see: waits then end when the run's record has
// ended, and a run this server executes is stopped when another server cancelled it (its record
// is no longer `running`, or is gone after a rollback). The other server says so through
// PostgreSQL notifications (`ended`); while they cannot be heard (`signals.live()` is
// false), the coordinator reads those records every `pollMs` instead, and once they can again
// (`resync`) it reads them all once, for what it missed.

import type { RunRecord, Storage } from '../storage/storage.ts';
import { BrokerUnavailableError, metadataEvent } from './broker.ts';
import type { EventBroker, StreamEvent } from './broker.ts';
import type { GraphRunner } from './graph-runner.ts';
import type { RunSignals } from './redis-signals.ts';
import type { WorkerPool } from './worker-pool.ts';

/** How many final records read by waits are kept for their results. */
const ENDED_RECORDS = 256;

/** Why a record watch ends when the run's record has ended. */
const RECORD_ENDED = Symbol('the run record ended');

/** Reads a waited run's record and ends the wait once the record has ended; `stop` ends it at once. */
type RecordCheck = ((announced?: boolean) => Promise<void>) & { readonly stop: () => void };

export class RunCoordinator {
  private stopped = false;
  private cancelWatch?: NodeJS.Timeout;
  /**
   * The final records the last waits read, for `result` to answer from instead of reading them
   * again (a wait is followed by its result); bounded, oldest first.
   */
  private readonly endedRecords = new Map<string, RunRecord>();
  /** The record checks of the waits in progress (with `shared`), by run id. */
  private readonly recordChecks = new Map<string, Set<RecordCheck>>();

  constructor(
    private readonly storage: Storage,
    private readonly broker: EventBroker,
    private readonly runner: Pick<GraphRunner, 'abort' | 'activeIds' | 'result'>,
    private readonly workers: () => Pick<WorkerPool, 'wakeIdle' | 'notify'>,
    private readonly signals?: RunSignals,
    private readonly shared?: { readonly pollMs: number },
  ) {}

  /** Starts watching for runs cancelled by other servers (with `shared` only). */
  start(): void {
    if (!this.shared || this.cancelWatch) return;
    this.cancelWatch = setInterval(() => {
      if (!this.notified()) void this.stopRunsCancelledElsewhere();
    }, this.shared.pollMs);
    this.cancelWatch.unref();
  }

  /** Whether the other servers' notifications reach this one (then records need no watching). */
  private notified(): boolean {
    return this.signals?.live?.() ?? false;
  }

  /**
   * The run's record reached its final state, recorded by this server or (`elsewhere`) another
   * one: the waits for it end, and this server stops executing it if another one settled it.
   */
  ended(runId: string, elsewhere: boolean): void {
    if (elsewhere && this.runner.activeIds().has(runId)) void this.stopIfCancelledElsewhere(runId);
    for (const check of this.recordChecks.get(runId) ?? []) void check(true);
  }

  /** Notifications may have been missed (they could not be heard until now): reads every record concerned. */
  resync(): void {
    void this.stopRunsCancelledElsewhere();
    for (const checks of this.recordChecks.values()) for (const check of checks) void check(true);
  }

  /** Stops the runs this server executes whose record another server ended or deleted. */
  private async stopRunsCancelledElsewhere(): Promise<void> {
    for (const runId of this.runner.activeIds()) await this.stopIfCancelledElsewhere(runId);
  }

  private async stopIfCancelledElsewhere(runId: string): Promise<void> {
    try {
      const run = await this.storage.runs.get(runId);
      if (!run) this.runner.abort(runId, 'rollback');
      else if (run.status !== 'running') this.runner.abort(runId, 'interrupt');
    } catch {
      // The database is unreachable: look again next time.
    }
  }

  /**
   * One wake-up for the worker that will take the new run: an idle worker of this server when
   * there is one (the run's events then stay in this process until they reach the broker);
   * otherwise the wake-up is counted for the next worker here that finishes, and the other
   * instances are told, so that one idle worker on each looks.
   */
  notify(): void {
    const workers = this.workers();
    if (workers.wakeIdle()) return;
    workers.notify();
    this.signals?.wake();
  }

  /**
   * Opens the new run's log with its `metadata` event, which streams send first, and announces the
   * run to the streams following its thread.
   */
  open(runId: string, threadId?: string): void {
    this.broker.open(runId, metadataEvent(runId));
    if (threadId !== undefined) this.broker.announce(threadId, runId);
  }

  abort(runId: string, action: 'interrupt' | 'rollback'): boolean | Promise<boolean> {
    if (this.runner.abort(runId, action)) return true;
    return this.signals ? this.signals.cancel(runId, action) : false;
  }

  close(runId: string): void {
    this.broker.finish(runId);
  }

  discard(runId: string): void {
    this.broker.discard(runId);
  }

  /** The server is stopping: waits end now instead of holding connections open. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.cancelWatch);
    this.broker.finishAll();
    for (const checks of this.recordChecks.values()) for (const check of checks) check.stop();
  }

  async waitFor(runId: string, signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (signal?.aborted || this.stopped) return;
      // Following the log from past its end yields nothing and returns when the run's stream ends.
      const watch = this.shared ? this.watchRecord(runId, signal) : undefined;
      try {
        try {
          await this.broker.untilEnded(runId, watch?.signal ?? signal);
        } catch (error) {
          // The shared broker is unreachable: fall back on the run's status in storage.
          if (!(error instanceof BrokerUnavailableError)) throw error;
        }
        const run = await this.storage.runs.get(runId);
        if (run && run.status !== 'pending' && run.status !== 'running') this.keepEnded(run);
        if (!run || (run.status !== 'pending' && run.status !== 'running') || this.stopped) return;
        if (watch && !this.runner.activeIds().has(runId)) {
          // No log here: another server executes it, or it waits for a worker; its end is announced.
          if (!watch.signal.aborted)
            await new Promise((resolve) => watch.signal.addEventListener('abort', resolve, { once: true }));
          if (watch.signal.reason === RECORD_ENDED) return;
        } else {
          // Still in flight with no live log (e.g. left by a previous process): look again shortly.
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      } finally {
        watch?.abort();
      }
    }
  }

  /**
   * A signal that aborts with `signal`, or once the run's record says it ended while no worker
   * of this server holds it (it executed in another server, whose events never reach this log).
   * The record is read when that server says the run ended, and every `pollMs` while such
   * notifications cannot be heard.
   */
  private watchRecord(runId: string, signal?: AbortSignal): AbortController {
    const watch = new AbortController();
    const stop = () => watch.abort();
    signal?.addEventListener('abort', stop, { once: true });
    // A poll skips the runs executing here (their log ends with them); an announced end does not.
    const check = Object.assign(
      async (announced = false) => {
        if (watch.signal.aborted || (!announced && this.runner.activeIds().has(runId))) return;
        const run = await this.storage.runs.get(runId).catch(() => null);
        if (run === null) return;
        if (run && run.status !== 'pending' && run.status !== 'running') this.keepEnded(run);
        if (!run || (run.status !== 'pending' && run.status !== 'running')) watch.abort(RECORD_ENDED);
      },
      { stop },
    );
    const checks = this.recordChecks.get(runId) ?? new Set();
    checks.add(check);
    this.recordChecks.set(runId, checks);
    const timer = setInterval(() => {
      if (!this.notified()) void check();
    }, this.shared?.pollMs ?? 500);
    watch.signal.addEventListener('abort', () => {
      clearInterval(timer);
      checks.delete(check);
      if (checks.size === 0 && this.recordChecks.get(runId) === checks) this.recordChecks.delete(runId);
      signal?.removeEventListener('abort', stop);
    });
    return watch;
  }

  /**
   * What wait and join answer once a run ended: `{__error__: {error, message}}` for a failed run,
   * else its last root values, else (the run's events are gone) the thread's values, else null.
   * A run still in flight (the server stopped waiting for it), deleted (rolled back) or cancelled
   * before it produced anything is reported as an error too, so a client never takes the thread's
   * current values — or a bare null — for the run's result.
   */
  async result(runId: string, threadId?: string): Promise<unknown> {
    const errorEvent = await this.lastEvent(runId, 'error');
    if (errorEvent) return { __error__: errorEvent.data };
    const run = this.takeEnded(runId) ?? (await this.storage.runs.get(runId));
    if (run?.error) return { __error__: run.error };
    if (run && (run.status === 'pending' || run.status === 'running')) {
      return {
        __error__: {
          error: 'RunNotFinished',
          message: `Run ${runId} is still ${run.status}: the server stopped before it ended. It is kept; join it again once the server is back.`,
        },
      };
    }
    if (!run && (await this.broker.wasDiscarded(runId))) {
      // Whatever it had computed belongs to a state that was thrown away with it.
      return {
        __error__: {
          error: 'RunDeleted',
          message: `Run ${runId} was deleted before it finished (rolled back by a newer run, or deleted).`,
        },
      };
    }
    const values = this.runner.result(runId);
    if (values !== undefined) return values;
    if (this.signals) {
      // Executed by another instance: its last root values are in the shared log.
      const last = await this.lastEvent(runId, 'values');
      if (last) return last.data;
    }
    const thread = threadId ? await this.storage.threads.get(threadId) : undefined;
    if ((thread?.values ?? null) === null && run?.status === 'interrupted') {
      // Cancelled before it produced anything: say so, rather than answer a bare null.
      return {
        __error__: { error: 'RunCancelled', message: `Run ${runId} was cancelled before it produced any values.` },
      };
    }
    return thread?.values ?? null;
  }

  private keepEnded(run: RunRecord): void {
    this.endedRecords.delete(run.run_id);
    this.endedRecords.set(run.run_id, run);
    if (this.endedRecords.size > ENDED_RECORDS) this.endedRecords.delete(this.endedRecords.keys().next().value!);
  }

  private takeEnded(runId: string): RunRecord | undefined {
    const run = this.endedRecords.get(runId);
    this.endedRecords.delete(runId);
    return run;
  }

  /** The run's last `event` in its log; none while the shared broker is unreachable. */
  private async lastEvent(runId: string, event: string): Promise<StreamEvent | undefined> {
    try {
      return await this.broker.last(runId, event);
    } catch (error) {
      if (error instanceof BrokerUnavailableError) return undefined;
      throw error;
    }
  }
}
