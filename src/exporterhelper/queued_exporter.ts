// The wiring every queued HTTP exporter shares, written once: a SendingQueue drained by N senders,
// one HttpSender, the optional PersistentQueue with its Replayer, idempotent start and shutdown
// (drainForShutdown), "keep on disk or count as lost", and "a drop is a metric and an error log".
// An exporter owns one and supplies only what is its own: how a batch is sent and settled, how an
// unsent batch is kept at shutdown, and how a stored batch is re-sent.

import type { Logger } from 'pino';
import type { ComponentSettings } from '../pipeline/component.ts';
import { HttpSender, failureLabel } from './http_sender.ts';
import type { HttpExportResult } from './http_sender.ts';
import type { DropReason, ExporterMetrics } from './metrics.ts';
import { exporterMetrics } from './metrics.ts';
import { PersistentQueue } from './persistent_queue.ts';
import type { PersistentQueueConfig, StoredBatch, StoredHeader } from './persistent_queue.ts';
import { Replayer } from './replayer.ts';
import type { ReplayVerdict } from './replayer.ts';
import { withRetry } from './retry.ts';
import type { RetryConfig } from './retry.ts';
import { SendingQueue } from './sending_queue.ts';
import type { SendingQueueConfig } from './sending_queue.ts';
import { drainForShutdown } from './shutdown.ts';

/**
 * The header of a stored batch that is re-sent on its tenant's behalf: the tenant's API key goes
 * with it, so that a restart re-sends it with the right key (queue files are 0600 for that).
 */
export interface TenantBatchHeader extends StoredHeader {
  readonly apiKey?: string;
  readonly project: string;
}

/** A tenant header; an empty or absent key is left out. */
export function tenantBatchHeader(items: number, project: string, apiKey: string | undefined): TenantBatchHeader {
  return { items, project, ...(apiKey ? { apiKey } : {}) };
}

export interface QueuedExporterOptions<T, H extends StoredHeader> {
  readonly settings: ComponentSettings;
  /** What the items are (`runs`, `spans`): the metrics' data type and the log field of counts. */
  readonly dataType: string;
  /** Where every batch is POSTed. */
  readonly url: string;
  /** Concurrent senders (the HTTP agent gets one socket more, for the replayer). */
  readonly consumers: number;
  readonly sendingQueue: SendingQueueConfig;
  readonly persistentQueue: PersistentQueueConfig;
  readonly retry: RetryConfig;
  readonly timeoutMs: number;
  /** Items in a queued batch, to count them if it is lost. */
  readonly itemCount: (item: T) => number;
  /** Sends one batch from the sending queue and settles every outcome (with `hold` and `drop`). */
  readonly send: (item: T) => Promise<void>;
  /** Keeps a batch no sender could start before shutdown (usually: encode it, then `hold`). */
  readonly keepUnsent: (item: T) => Promise<void>;
  /** Re-sends one stored batch with one attempt and settles it. */
  readonly replay: (entry: StoredBatch<H>, body: Buffer) => Promise<ReplayVerdict>;
}

export class QueuedExporter<T, H extends StoredHeader> {
  readonly logger: Logger;
  readonly metrics: ExporterMetrics;
  readonly disk?: PersistentQueue<H>;
  private readonly queue: SendingQueue<T>;
  private readonly sender: HttpSender;
  private readonly replayer?: Replayer<H>;
  /** Aborted near the shutdown deadline: in-flight attempts stop and their batches go to disk. */
  private readonly stopSending = new AbortController();
  private started = false;
  private closing = false;
  private shutdownPromise?: Promise<void>;

  constructor(private readonly options: QueuedExporterOptions<T, H>) {
    const { settings, persistentQueue } = options;
    this.logger = settings.logger;
    this.metrics = exporterMetrics(settings.metrics, settings.id, options.dataType);
    this.sender = new HttpSender(options.url, options.consumers + 1);
    this.queue = new SendingQueue<T>({
      ...options.sendingQueue,
      consumers: options.consumers,
      handle: (item) => (this.aborted ? options.keepUnsent(item) : options.send(item)),
      onHandlerError: (error, item) => {
        // Not expected: `send` settles every outcome itself. Still, never lose items quietly.
        this.drop('internal_error', options.itemCount(item), `A send failed unexpectedly; its ${options.dataType} are lost.`, error);
      },
      onDepth: (depth) => this.metrics.memoryDepth(depth),
      retryAfterMs: 1000,
    });
    if (persistentQueue.enabled) {
      this.disk = new PersistentQueue<H>(settings.host.resolvePath(persistentQueue.directory), persistentQueue.max_bytes);
      this.replayer = new Replayer<H>({
        queue: this.disk,
        intervalMs: persistentQueue.replay_interval_ms,
        logger: this.logger,
        metrics: this.metrics,
        send: (entry, body) => (this.aborted ? Promise.resolve('stop') : options.replay(entry, body)),
      });
    }
  }

  /** True once shutdown began: the exporter refuses new batches. */
  get stopping(): boolean {
    return this.closing;
  }

  /** True once in-flight sends are being aborted (late in shutdown). */
  get aborted(): boolean {
    return this.stopSending.signal.aborted;
  }

  /** Opens the on-disk queue and starts re-sending what it holds. Idempotent. */
  async start(): Promise<void> {
    if (this.started || this.closing) return;
    this.started = true;
    if (!this.disk) return;
    const corrupt = await this.disk.open();
    if (corrupt.length > 0) {
      this.logger.error({ files: corrupt, directory: this.disk.directory }, 'Unreadable queue files were set aside as *.corrupt.');
    }
    this.updateDiskGauges();
    if (this.disk.depth > 0) {
      this.logger.info({ batches: this.disk.depth, bytes: this.disk.bytes }, 'Re-sending batches queued on disk.');
    }
    this.replayer!.start();
  }

  /** Queues a batch; resolves once queued (ThrottleError when the queue is full). */
  offer(item: T): Promise<void> {
    return this.queue.offer(item);
  }

  /** Idempotent and safe without `start`. */
  shutdown(deadline: number): Promise<void> {
    this.shutdownPromise ??= this.doShutdown(deadline);
    return this.shutdownPromise;
  }

  /** One attempt; a failed one is counted by status. */
  async attempt(body: Buffer, headers: Record<string, string>): Promise<HttpExportResult> {
    const result = await this.sender.post(body, headers, this.options.timeoutMs, this.stopSending.signal);
    if (result.status !== 'success') this.metrics.failure(failureLabel(result));
    return result;
  }

  /** Runs attempts per `retry_on_failure`, stopping early at shutdown. */
  withRetry(attempt: () => Promise<HttpExportResult>): Promise<HttpExportResult> {
    return withRetry(attempt, this.options.retry, {
      signal: this.stopSending.signal,
      onRetry: () => this.metrics.retry(),
    });
  }

  /** A live send succeeded: re-send what waits on disk if an outage cut the last pass short. */
  destinationBack(): void {
    this.replayer?.destinationBack();
  }

  /** Persists a batch that could not be sent now; without a disk queue, counts it as lost. */
  async hold(header: H, body: Buffer, result?: HttpExportResult): Promise<void> {
    const what = this.options.dataType;
    if (!this.disk) {
      const reason: DropReason = this.aborted ? 'shutdown' : 'retries_exhausted';
      this.drop(reason, header.items, `A batch could not be sent and no on-disk queue is configured; its ${what} are lost.`, result?.error, {
        status: result?.httpStatus,
      });
      return;
    }
    try {
      const { evicted } = await this.disk.put(header, body);
      for (const old of evicted) {
        this.drop('disk_queue_full', old.header.items, 'The on-disk queue is full; its oldest batch was dropped.', undefined, {
          batch: old.name,
          max_bytes: this.options.persistentQueue.max_bytes,
        });
      }
    } catch (error) {
      this.drop('retries_exhausted', header.items, `A batch could not be written to the on-disk queue; its ${what} are lost.`, error);
    }
    this.updateDiskGauges();
  }

  /** Removes a re-sent (or settled) batch from the on-disk queue. */
  async removeStored(entry: StoredBatch<H>): Promise<void> {
    await this.disk!.remove(entry);
    this.updateDiskGauges();
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

  /** Every lost item is counted (by reason) and logged. */
  drop(reason: DropReason, items: number, message: string, error?: unknown, fields: Record<string, unknown> = {}): void {
    this.metrics.dropped(reason, items);
    this.logger.error({ reason, [this.options.dataType]: items, ...(error ? { err: error } : {}), ...fields }, message);
  }

  private async doShutdown(deadline: number): Promise<void> {
    this.closing = true;
    await drainForShutdown(this.queue, deadline, this.stopSending, this.options.keepUnsent);
    await this.replayer?.stop();
    this.sender.close();
    if (this.disk && this.disk.depth > 0) {
      this.logger.info({ batches: this.disk.depth, bytes: this.disk.bytes }, 'Batches remain queued on disk for the next start.');
    }
  }

  private updateDiskGauges(): void {
    this.replayer?.updateGauges();
  }
}
