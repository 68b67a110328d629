// The one thing a queued exporter is built on. The exporter supplies `push` — one attempt to send
// one request, answered with a verdict (verdict.ts) — and a codec for the disk queue; this helper
// does everything around it, once for every exporter: the bounded sending queue and its senders,
// retries with backoff, splitting, the on-disk queue and its replay, dead letters, counting every
// loss, delivery holds (src/pipeline/delivery.ts), gauges of what is held, the outage log, and
// the shutdown sequence (shutdown.ts).

import type { Logger } from 'pino';
import type { ComponentSettings } from '../pipeline/component.ts';
import type { Delivery } from '../pipeline/delivery.ts';
import { JournalNotice } from './journal_notice.ts';
import { MemoryHeld } from './memory_held.ts';
import type { ExportRequest, Tracked } from './memory_held.ts';
import type { DropReason, ExporterMetrics } from './metrics.ts';
import { exporterMetrics } from './metrics.ts';
import { OutageLog, logEndpoint } from './outage_log.ts';
import { PersistentQueue } from './persistent_queue.ts';
import type { PersistentQueueConfig, StoredBatch, StoredHeader } from './persistent_queue.ts';
import { Replayer } from './replayer.ts';
import type { ReplayVerdict } from './replayer.ts';
import { withRetry } from './retry.ts';
import type { RetryConfig } from './retry.ts';
import { ThrottleError } from '../pipeline/errors.ts';
import { SendingQueue } from './sending_queue.ts';
import type { QueueSlot, SendingQueueConfig } from './sending_queue.ts';
import { Settlement } from './settlement.ts';
import { drainForShutdown } from './shutdown.ts';
import type { Failure, Verdict } from './verdict.ts';
import { failureLabel, reject } from './verdict.ts';

export type { ExportRequest } from './memory_held.ts';

/** What `push` gets besides the request. */
export interface PushContext {
  /** Aborted late in shutdown: end the attempt at once (the helper then stores the request). */
  readonly signal: AbortSignal;
  /** 1 for a request's first attempt, 2 for its first retry, …; a replay from disk is 1. */
  readonly attempt: number;
}

/** Room for one request, reserved before the request is made (`QueuedExporter.reserve`). */
export interface RequestSlot<R> {
  /**
   * Queues the request in the reserved room; from then on its delivery is held until it is
   * settled. Rejects as `QueuedExporter.offer` does (the queue closed; or, for a request larger
   * than the room reserved for it, a queue that has no more).
   */
  offer(request: R, context?: { readonly delivery?: Delivery }): Promise<void>;
  /** Gives the room back unused: nothing of the batch is to be sent, or making the request failed. */
  release(): void;
}

/** How a request is written to the on-disk queue and read back (after a restart, too). */
export interface RequestCodec<R, H extends object> {
  /** A JSON header (the helper adds `items`) and the body, as stored. */
  encode(request: R): { readonly header: H; readonly body: Uint8Array };
  /** The request again; throwing counts the batch as `corrupt`. */
  decode(header: H & StoredHeader, body: Buffer): R;
}

export interface QueuedExporterOptions<R extends ExportRequest, H extends object> {
  readonly settings: ComponentSettings;
  /** What the items are (`runs`, `spans`): the metrics' data type and the log field of counts. */
  readonly dataType: string;
  /** Where requests go, for logs only (credentials and query strings are left out). */
  readonly endpoint: string;
  /** Concurrent senders. */
  readonly consumers: number;
  readonly sendingQueue: SendingQueueConfig;
  readonly persistentQueue: PersistentQueueConfig;
  readonly retry: RetryConfig;
  /** One attempt to send one request. It may throw only on a bug (counted as `internal_error`). */
  readonly push: (request: R, context: PushContext) => Promise<Verdict<R>>;
  readonly codec: RequestCodec<R, H>;
}

/** A request as the helper carries it from `offer` to its settlement. */
interface Work<R extends ExportRequest> extends Tracked<R> {
  readonly settlement: Settlement;
  /** Counted in the memory gauges: a live batch (not one replayed from disk, which is on disk). */
  readonly inMemory: boolean;
  done: boolean;
}

type Store = 'park' | 'retries_exhausted' | 'shutdown' | 'overflow';

/** Weight of the latest attempt in the running average of attempt durations. */
const ATTEMPT_EWMA_WEIGHT = 0.2;

export class QueuedExporter<R extends ExportRequest, H extends object = object> {
  readonly disk?: PersistentQueue<H & StoredHeader>;
  private readonly logger: Logger;
  private readonly metrics: ExporterMetrics;
  private readonly queue: SendingQueue<Work<R>>;
  private readonly replayer?: Replayer<H & StoredHeader>;
  private readonly held: MemoryHeld;
  private readonly outage: OutageLog;
  private readonly journal: JournalNotice;
  /** Aborted near the shutdown deadline: in-flight attempts stop and their batches are stored. */
  private readonly stopSending = new AbortController();
  private started = false;
  private closing = false;
  /** Running average of how long an attempt takes: shutdown stops starting ones that cannot finish. */
  private attemptMs = 0;
  private shutdownPromise?: Promise<void>;

  constructor(private readonly options: QueuedExporterOptions<R, H>) {
    const { settings, persistentQueue, dataType } = options;
    this.logger = settings.telemetry.logger;
    this.metrics = exporterMetrics(settings.telemetry.meter, dataType);
    this.held = new MemoryHeld(this.metrics);
    this.outage = new OutageLog({ logger: this.logger, endpoint: logEndpoint(options.endpoint), dataType });
    this.journal = new JournalNotice(this.logger, dataType);
    this.queue = new SendingQueue<Work<R>>({
      ...options.sendingQueue,
      consumers: options.consumers,
      sizeOf: (work) => work.request.bytes ?? 0,
      handle: (work) => (this.aborted ? this.store(work, 'shutdown') : this.deliver(work)),
      onHandlerError: (error, work) => {
        // Not expected: every outcome is settled above. Still, never lose items quietly.
        if (!work.done)
          this.drop(
            'internal_error',
            work.request.items,
            `A send failed unexpectedly; its ${dataType} are lost.`,
            error,
          );
        this.finish(work, 'settled');
      },
      retryAfterMs: 1000,
    });
    if (persistentQueue.enabled) {
      this.disk = new PersistentQueue<H & StoredHeader>(
        settings.host.resolvePath(persistentQueue.directory),
        persistentQueue.max_bytes,
      );
      this.replayer = new Replayer<H & StoredHeader>({
        queue: this.disk,
        intervalMs: persistentQueue.replay_interval_ms,
        logger: this.logger,
        metrics: this.metrics,
        send: (entry, body) => (this.aborted ? Promise.resolve('stop') : this.replayOne(entry, body)),
        onPassEnd: () => this.checkOutage(),
      });
    }
  }

  /** True once shutdown began: the exporter refuses new batches. */
  get stopping(): boolean {
    return this.closing;
  }

  /** Opens the on-disk queue and starts re-sending what it holds. Idempotent. */
  async start(): Promise<void> {
    if (this.started || this.closing) return;
    this.started = true;
    if (!this.disk) return;
    const corrupt = await this.disk.open();
    if (corrupt.length > 0) {
      this.logger.error(
        { files: corrupt, directory: this.disk.directory },
        'Unreadable queue files were set aside as *.corrupt.',
      );
    }
    this.replayer!.updateGauges();
    if (this.disk.depth > 0) {
      this.logger.info({ batches: this.disk.depth, bytes: this.disk.bytes }, 'Re-sending batches queued on disk.');
    }
    this.replayer!.start();
  }

  /**
   * Queues a request; resolves once queued (ThrottleError when the queue is full, QueueClosedError
   * after shutdown began). From then on the request's delivery is held until it is settled.
   */
  async offer(request: R, context: { readonly delivery?: Delivery } = {}): Promise<void> {
    const slot = await this.reserve(request.bytes);
    await slot.offer(request, context);
  }

  /**
   * Room for a request that is yet to be made, waited for or refused as `offer` would (see
   * `SendingQueue.reserve`): an exporter that encodes a batch into a request encodes it only once
   * it has a place, so that a full queue costs no encoding thrown away or held while waiting.
   * `bytes`, when known, is the request's size; otherwise the room is sized by the last requests.
   * With `overflow_to_disk`, a full queue gives room on disk instead. Every slot must be offered
   * to or released.
   */
  async reserve(bytes?: number): Promise<RequestSlot<R>> {
    let slot: QueueSlot<Work<R>>;
    try {
      slot = await this.queue.reserve(bytes);
    } catch (error) {
      if (error instanceof ThrottleError && this.overflowsToDisk) {
        return { offer: (request, context) => this.overflow(this.accept(request, context)), release: () => {} };
      }
      throw error;
    }
    return {
      offer: async (request, context) => {
        const work = this.accept(request, context);
        try {
          await slot.fill(work);
        } catch (error) {
          if (error instanceof ThrottleError && this.overflowsToDisk) return this.overflow(work);
          this.held.remove(work);
          work.settlement.cancel();
          throw error;
        }
      },
      release: () => slot.release(),
    };
  }

  /** A request handed over: held in memory and holding its delivery until settled. */
  private accept(request: R, context: { readonly delivery?: Delivery } = {}): Work<R> {
    const work: Work<R> = {
      request,
      settlement: Settlement.hold(context.delivery),
      inMemory: true,
      failed: false,
      done: false,
    };
    this.held.add(work);
    return work;
  }

  // The destination is slower than the callers: the batch waits on disk (settled once written,
  // re-sent by the replayer) rather than refusing a caller whose other data may be bound for
  // healthy destinations.
  private overflow(work: Work<R>): Promise<void> {
    this.metrics.overflowed(work.request.items);
    return this.store(work, 'overflow');
  }

  private get overflowsToDisk(): boolean {
    return this.disk !== undefined && this.options.sendingQueue.overflow_to_disk === true && !this.closing;
  }

  /** Idempotent and safe without `start`. */
  shutdown(deadline: number): Promise<void> {
    this.shutdownPromise ??= this.doShutdown(deadline);
    return this.shutdownPromise;
  }

  /** Appends a record to the dead-letter file (nothing to do without an on-disk queue). */
  async deadLetter(record: Record<string, unknown>): Promise<void> {
    if (!this.disk) return;
    try {
      await this.disk.deadLetter({ time: new Date().toISOString(), ...record });
    } catch (error) {
      this.logger.error({ err: error, path: this.disk.deadLetterPath }, 'The dead-letter file cannot be written.');
    }
  }

  /** Every lost item is counted (by reason) and logged; exporters use it for losses before `offer`. */
  drop(
    reason: DropReason,
    items: number,
    message: string,
    error?: unknown,
    fields: Record<string, unknown> = {},
  ): void {
    this.metrics.dropped(reason, items);
    this.logger.error({ reason, [this.options.dataType]: items, ...(error ? { err: error } : {}), ...fields }, message);
  }

  private get aborted(): boolean {
    return this.stopSending.signal.aborted;
  }

  /** A live request: attempts with retries, then whatever the last verdict says. */
  private async deliver(work: Work<R>): Promise<void> {
    const { last } = await withRetry((attempt) => this.attempt(work, attempt), this.options.retry, {
      signal: this.stopSending.signal,
      onRetry: () => this.metrics.retry(),
    });
    switch (last.verdict) {
      case 'sent':
        return this.sent(work);
      case 'reject':
        return this.rejected(work, last);
      case 'split':
        return this.splitInto(work, last.parts, last.failure);
      case 'park':
        return this.store(work, 'park', last.failure);
      case 'retry':
        return this.store(work, this.aborted ? 'shutdown' : 'retries_exhausted', last.failure);
    }
  }

  /** One attempt, observed: failures counted by status, the outage log told. */
  private async attempt(work: Work<R>, attempt: number): Promise<Verdict<R>> {
    let verdict: Verdict<R>;
    const startedAt = Date.now();
    try {
      verdict = await this.options.push(work.request, { signal: this.stopSending.signal, attempt });
      if (!this.aborted) this.attemptMs += (Date.now() - startedAt - this.attemptMs) * ATTEMPT_EWMA_WEIGHT;
    } catch (error) {
      const message = `A send failed unexpectedly; its ${this.options.dataType} are lost.`;
      return reject(
        { error: error instanceof Error ? error : new Error(String(error)) },
        { reason: 'internal_error', message },
      );
    }
    if (verdict.verdict === 'sent') {
      this.outage.answered();
    } else if (verdict.verdict === 'retry' && this.aborted) {
      // Cut short by shutdown: not the destination's failure.
    } else {
      this.metrics.failure(failureLabel(verdict.failure));
      if (verdict.verdict === 'retry') {
        this.held.markAllFailed();
        this.outage.failed(verdict.failure, work.request.tenant, this.held.tenantKeys());
      } else {
        this.outage.answered();
      }
    }
    return verdict;
  }

  private sent(work: Work<R>): void {
    if (work.failed) this.outage.deliveredLate(work.request.items);
    // A live success after an outage: re-send what waits on disk now.
    if (work.inMemory) this.replayer?.destinationBack();
    this.finish(work, 'settled');
  }

  private async rejected(work: Work<R>, verdict: Extract<Verdict<R>, { verdict: 'reject' }>): Promise<void> {
    for (const record of verdict.deadLetters ?? []) await this.deadLetter(record);
    const what = this.options.dataType;
    this.drop(
      verdict.reason ?? 'rejected',
      work.request.items,
      verdict.message ?? `The destination rejected a batch; its ${what} are dropped.`,
      verdict.failure.error,
      {
        status: verdict.failure.httpStatus,
        response: verdict.failure.responseText,
      },
    );
    this.finish(work, 'settled');
  }

  /** Sends the parts one after another, each with its own retries; they share the delivery hold. */
  private async splitInto(work: Work<R>, parts: readonly R[], failure: Failure): Promise<void> {
    this.logger.warn(
      {
        status: failure.httpStatus,
        [this.options.dataType]: work.request.items,
        parts: parts.length,
        response: failure.responseText,
      },
      'The destination rejected a batch; sending it in smaller parts to isolate what it refuses.',
    );
    const split = parts.map((request): Work<R> => ({
      request,
      settlement: work.settlement,
      inMemory: work.inMemory,
      failed: work.failed,
      done: false,
    }));
    work.settlement.addParts(split.length); // Before the whole settles below, or the hold would go.
    for (const part of split) if (part.inMemory) this.held.add(part);
    this.finish(work, 'settled');
    for (const part of split) await (this.aborted ? this.store(part, 'shutdown') : this.deliver(part));
  }

  /** To the on-disk queue; without one (or when it cannot be written), given up. */
  private async store(work: Work<R>, why: Store, failure?: Failure): Promise<void> {
    const { request } = work;
    const what = this.options.dataType;
    if (!this.disk) {
      const message = `A batch could not be sent and no on-disk queue is configured; its ${what} are lost.`;
      return this.giveUp(work, why === 'shutdown' ? 'shutdown' : 'retries_exhausted', message, failure?.error, {
        status: failure?.httpStatus,
      });
    }
    try {
      const { header, body } = this.options.codec.encode(request);
      const { evicted } = await this.disk.put({ ...header, items: request.items }, body);
      for (const old of evicted) {
        this.drop(
          'disk_queue_full',
          old.header.items,
          'The on-disk queue is full; its oldest batch was dropped.',
          undefined,
          {
            batch: old.name,
            max_bytes: this.options.persistentQueue.max_bytes,
          },
        );
      }
      this.replayer!.stored(why === 'retries_exhausted');
      this.finish(work, 'settled');
    } catch (error) {
      this.giveUp(
        work,
        'retries_exhausted',
        `A batch could not be written to the on-disk queue; its ${what} are lost.`,
        error,
      );
    } finally {
      this.replayer!.updateGauges();
    }
  }

  /**
   * Gives a batch up without storing it. Lost — counted and logged — unless someone else keeps it:
   * the receiver's journal (a durable delivery, left held) or its own file on disk (a replay).
   */
  private giveUp(
    work: Work<R>,
    reason: DropReason,
    message: string,
    error?: unknown,
    fields: Record<string, unknown> = {},
  ): void {
    const { items } = work.request;
    if (work.settlement.keeper === 'journal') {
      this.metrics.leftToJournal(items);
      this.journal.add(items, this.closing);
    } else if (work.settlement.keeper === undefined) {
      this.drop(reason, items, message, error, fields);
      return this.finish(work, 'settled');
    }
    this.finish(work, 'left');
  }

  private finish(work: Work<R>, outcome: 'settled' | 'left'): void {
    if (work.done) return;
    work.done = true;
    if (work.inMemory) this.held.remove(work);
    if (outcome === 'left') work.settlement.leftUnsettled();
    else work.settlement.settled();
    this.checkOutage();
  }

  /**
   * Re-sends one stored batch with one attempt (the replay interval is the backoff). A `retry`
   * stops the pass — the destination is still away — but a parked batch does not, so that one
   * tenant's refused key does not block the others. The file goes once the batch is settled.
   */
  private async replayOne(entry: StoredBatch<H & StoredHeader>, body: Buffer): Promise<ReplayVerdict> {
    let request: R;
    try {
      request = this.options.codec.decode(entry.header, body);
    } catch (error) {
      this.drop('corrupt', entry.header.items, 'A queued batch could not be decoded; it is dropped.', error, {
        batch: entry.name,
      });
      await this.removeStored(entry);
      return 'continue';
    }
    const work: Work<R> = { request, settlement: Settlement.stored(), inMemory: false, failed: true, done: false };
    const verdict = await this.attempt(work, 1);
    switch (verdict.verdict) {
      case 'retry':
        return 'stop';
      case 'park':
        return 'continue';
      case 'sent':
        this.sent(work);
        break;
      case 'reject':
        await this.rejected(work, verdict);
        break;
      case 'split':
        await this.splitInto(work, verdict.parts, verdict.failure);
        if (work.settlement.givenUp) return 'continue'; // A part is neither sent nor stored: keep the file.
        break;
    }
    await this.removeStored(entry);
    return 'continue';
  }

  private async removeStored(entry: StoredBatch<H & StoredHeader>): Promise<void> {
    await this.disk!.remove(entry);
    this.replayer!.updateGauges();
  }

  private checkOutage(): void {
    this.outage.settle(this.held.failing === 0 && (this.replayer?.caughtUp ?? true));
  }

  private async doShutdown(deadline: number): Promise<void> {
    this.closing = true;
    await drainForShutdown(
      this.queue,
      deadline,
      this.stopSending,
      (work) => this.store(work, 'shutdown'),
      this.attemptMs,
    );
    await this.replayer?.stop();
    this.journal.flush();
    if (this.disk && this.disk.depth > 0) {
      this.logger.info(
        { batches: this.disk.depth, bytes: this.disk.bytes },
        'Batches remain queued on disk for the next start.',
      );
    }
    await this.disk?.close();
  }
}

/**
 * The header of a stored batch that is re-sent on its tenant's behalf: the tenant's API key goes
 * with it, so that a restart re-sends it with the right key (queue files are 0600 for that).
 */
export interface TenantHeader {
  readonly apiKey?: string;
  readonly project: string;
}

/** A tenant header; an empty or absent key is left out. */
export function tenantHeader(project: string, apiKey: string | undefined): TenantHeader {
  return { project, ...(apiKey ? { apiKey } : {}) };
}
