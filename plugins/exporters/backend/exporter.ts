// The `backend` exporter: uploads each batch of runs as one zstd-compressed multipart body to
// `<endpoint>/runs/multipart` with its tenant's key, retrying per `retry_on_failure`. What cannot be
// sent — retries used up, the backend refusing the key, shutdown arriving first — goes to the
// on-disk queue and is re-sent once the backend answers again; a batch leaves the disk only after a
// 2xx. A batch the backend rejects as invalid is split in halves down to single runs, so that one
// bad run does not take its neighbours with it; a single run still rejected goes to the dead-letter
// file. Every run lost on any path is counted and logged.

import type { Logger } from 'pino';
import { decompress } from 'zstd-napi';
import type { ComponentSettings, Exporter } from '../../../src/pipeline/component.ts';
import type { RequestContext } from '../../../src/pipeline/data.ts';
import { errorMessage } from '../../../src/pipeline/errors.ts';
import type { Run, RunBatch } from '../../../src/model/runs.ts';
import { HttpSender, failureLabel } from '../../../src/exporterhelper/http_sender.ts';
import type { HttpExportResult } from '../../../src/exporterhelper/http_sender.ts';
import type { DropReason, ExporterMetrics } from '../../../src/exporterhelper/metrics.ts';
import { exporterMetrics } from '../../../src/exporterhelper/metrics.ts';
import { PersistentQueue } from '../../../src/exporterhelper/persistent_queue.ts';
import type { StoredBatch } from '../../../src/exporterhelper/persistent_queue.ts';
import { Replayer } from '../../../src/exporterhelper/replayer.ts';
import type { ReplayVerdict } from '../../../src/exporterhelper/replayer.ts';
import { withRetry } from '../../../src/exporterhelper/retry.ts';
import { SendingQueue } from '../../../src/exporterhelper/sending_queue.ts';
import { drainForShutdown } from '../../../src/exporterhelper/shutdown.ts';
import { counter } from '../../../src/telemetry/metrics.ts';
import type { BackendExporterConfig } from './config.ts';
import type { EncodedBatch } from './internal/multipart_writer.ts';
import { MultipartZstdWriter, UnencodableRunError, multipartContentType } from './internal/multipart_writer.ts';
import { parseMultipart, runsFromParts } from './internal/multipart_reader.ts';

/** One upload as it waits in the sending queue. */
interface Upload {
  readonly runs: readonly Run[];
  readonly apiKey?: string;
  readonly project: string;
}

/**
 * The header stored with a queued body. It includes the tenant's API key, because a batch must be
 * re-sent with its own tenant's key after a restart; queue files are therefore created 0600 in a
 * 0700 directory (see README).
 */
interface QueuedHeader {
  readonly items: number;
  readonly apiKey?: string;
  readonly project: string;
  readonly boundary: string;
  readonly rawBytes: number;
}

/** Statuses that say "this body is invalid": split it to find the bad run. */
const SPLIT_STATUSES = new Set([400, 413, 422]);
/** Statuses that say "not with this key / not here": keep the batch until an operator fixes it. */
const HOLD_STATUSES = new Set([401, 403, 404]);

type Settled = 'sent' | 'held' | 'dropped';

export class BackendExporter implements Exporter<'runs'> {
  readonly mutatesData = false;
  private readonly logger: Logger;
  private readonly componentId: string;
  private readonly metrics: ExporterMetrics;
  private readonly sent: ReturnType<typeof backendCounters>;
  private readonly queue: SendingQueue<Upload>;
  private readonly sender: HttpSender;
  private readonly disk?: PersistentQueue<QueuedHeader>;
  private readonly replayer?: Replayer<QueuedHeader>;
  /** Aborted near the shutdown deadline: in-flight attempts stop and their batches go to disk. */
  private readonly stopSending = new AbortController();
  /** Keys whose refusal was logged: one log line per key until it works again. */
  private readonly authFailuresLogged = new Set<string>();
  private started = false;
  private stopping = false;
  private shutdownPromise?: Promise<void>;

  constructor(
    settings: ComponentSettings,
    private readonly config: BackendExporterConfig,
  ) {
    this.logger = settings.logger;
    this.componentId = settings.id;
    this.metrics = exporterMetrics(settings.metrics, settings.id, 'runs');
    this.sent = backendCounters(settings);
    this.sender = new HttpSender(`${config.endpoint.replace(/\/+$/, '')}/runs/multipart`, config.max_concurrent_uploads + 1);
    this.queue = new SendingQueue<Upload>({
      ...config.sending_queue,
      consumers: config.max_concurrent_uploads,
      handle: (upload) => this.upload(upload),
      onHandlerError: (error, upload) => {
        // Not expected: upload() settles every outcome itself. Still, never lose runs quietly.
        this.drop('internal_error', upload.runs.length, 'An upload failed unexpectedly; its runs are lost.', error);
      },
      onDepth: (depth) => this.metrics.memoryDepth(depth),
      retryAfterMs: 1000,
    });
    if (config.persistent_queue.enabled) {
      this.disk = new PersistentQueue(settings.host.resolvePath(config.persistent_queue.directory), config.persistent_queue.max_bytes);
      this.replayer = new Replayer({
        queue: this.disk,
        intervalMs: config.persistent_queue.replay_interval_ms,
        logger: this.logger,
        metrics: this.metrics,
        send: (entry, body) => this.replayOne(entry, body),
      });
    }
  }

  async start(_signal?: AbortSignal): Promise<void> {
    if (this.started || this.stopping) return;
    this.started = true;
    if (this.disk) {
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
  }

  async consume(batch: RunBatch, context: RequestContext): Promise<void> {
    if (this.stopping) throw new Error('the backend exporter is shutting down');
    if (batch.runs.length === 0) return;
    const apiKey = context.apiKey || this.config.api_key; // An empty key is no key.
    await this.queue.offer({ runs: batch.runs, project: context.project, ...(apiKey ? { apiKey } : {}) });
  }

  shutdown(deadline: number): Promise<void> {
    this.shutdownPromise ??= this.doShutdown(deadline);
    return this.shutdownPromise;
  }

  private async doShutdown(deadline: number): Promise<void> {
    this.stopping = true;
    await drainForShutdown(this.queue, deadline, this.stopSending, (upload) => this.holdUnsent(upload));
    await this.replayer?.stop();
    this.sender.close();
    if (this.disk && this.disk.depth > 0) {
      this.logger.info({ batches: this.disk.depth, bytes: this.disk.bytes }, 'Batches remain queued on disk for the next start.');
    }
  }

  /** Handles one batch from the sending queue: encode, send with retries, settle the outcome. */
  private async upload(upload: Upload): Promise<void> {
    if (this.stopSending.signal.aborted) return this.holdUnsent(upload);
    await this.sendRuns(upload.runs, upload.apiKey, upload.project);
  }

  private async sendRuns(runs: readonly Run[], apiKey: string | undefined, project: string): Promise<Settled> {
    const { encoded, included } = await this.encode(runs);
    if (encoded.runs === 0) return 'dropped';
    const result = await withRetry((_attempt) => this.attempt(encoded, apiKey), this.config.retry_on_failure, {
      signal: this.stopSending.signal,
      onRetry: () => this.metrics.retry(),
    });
    return this.settle(result, encoded, () => included, apiKey, project);
  }

  /** Writes runs into a compressed body; runs that cannot be encoded are dead-lettered. */
  private async encode(runs: readonly Run[]): Promise<{ encoded: EncodedBatch; included: Run[] }> {
    const writer = new MultipartZstdWriter(this.config.compression_level);
    const included: Run[] = [];
    const refused: { run: Run; error: unknown }[] = [];
    for (const run of runs) {
      try {
        writer.addRun(run);
        included.push(run);
      } catch (error) {
        if (!(error instanceof UnencodableRunError)) throw error;
        refused.push({ run, error });
      }
    }
    const encoded = writer.finish();
    if (refused.length > 0) {
      for (const { run, error } of refused) {
        await this.deadLetter({ reason: 'unencodable', error: errorMessage(error), run_id: String(run.id) });
      }
      this.drop('unencodable', refused.length, 'Runs that cannot be encoded as JSON were dead-lettered.', refused[0]!.error);
    }
    return { encoded, included };
  }

  private async attempt(encoded: EncodedBatch, apiKey: string | undefined): Promise<HttpExportResult> {
    const headers: Record<string, string> = {
      'Content-Type': multipartContentType(encoded.boundary),
      'Content-Encoding': 'zstd',
    };
    if (apiKey) headers['X-API-Key'] = apiKey;
    const result = await this.sender.post(encoded.body, headers, this.config.timeout_ms, this.stopSending.signal);
    if (result.status !== 'success') this.metrics.failure(failureLabel(result));
    return result;
  }

  /**
   * Decides what happens to a batch after its last attempt. `runs` is lazy: a batch read back from
   * disk is only decoded when it has to be split. `stored` is the disk entry the body came from.
   */
  private async settle(
    result: HttpExportResult,
    encoded: EncodedBatch,
    runs: () => readonly Run[],
    apiKey: string | undefined,
    project: string,
    stored?: StoredBatch<QueuedHeader>,
  ): Promise<Settled> {
    if (result.status === 'success') {
      this.sent.batches.inc({ component_id: this.componentId });
      this.sent.runs.inc({ component_id: this.componentId }, encoded.runs);
      this.sent.bytes.inc({ component_id: this.componentId, encoding: 'raw' }, encoded.rawBytes);
      this.sent.bytes.inc({ component_id: this.componentId, encoding: 'compressed' }, encoded.body.byteLength);
      // A key that works again will be reported again if it is refused later.
      if (this.authFailuresLogged.size > 0) this.authFailuresLogged.delete(apiKey ?? '');
      if (stored) await this.removeStored(stored);
      else this.replayer?.destinationBack(); // Re-send what waits on disk.
      return 'sent';
    }
    const status = result.httpStatus;
    if (result.status === 'retryable' || (status !== undefined && HOLD_STATUSES.has(status))) {
      if (status === 401 || status === 403) this.logAuthFailure(apiKey, status, result.responseText);
      else if (status === 404) this.logger.error({ status, endpoint: this.config.endpoint }, 'The backend has no multipart endpoint at this address; batches are kept on disk.');
      if (!stored) await this.hold(encoded, apiKey, project, result);
      return 'held';
    }
    let all: readonly Run[];
    try {
      all = runs();
    } catch (error) {
      // Only a queued body is decoded here; one that does not parse can never be sent or split.
      this.drop('corrupt', encoded.runs, 'A queued batch could not be decoded; it is dropped.', error, { batch: stored?.name });
      if (stored) await this.removeStored(stored);
      return 'dropped';
    }
    if (status !== undefined && SPLIT_STATUSES.has(status)) {
      if (all.length > 1) {
        this.logger.warn({ status, runs: all.length, response: result.responseText }, 'The backend rejected a batch; splitting it to isolate the bad runs.');
        const middle = Math.ceil(all.length / 2);
        // A half that cannot be sent now is persisted on its own, so the original entry can go.
        await this.sendRuns(all.slice(0, middle), apiKey, project);
        await this.sendRuns(all.slice(middle), apiKey, project);
        if (stored) await this.removeStored(stored);
        return 'sent';
      }
    }
    // A single run rejected as invalid, or a status that retrying cannot change (409, ...).
    const rejected = all;
    for (const run of rejected) {
      await this.deadLetter({ reason: 'rejected', status, response: result.responseText, project, run });
    }
    this.drop('rejected', rejected.length, 'The backend rejected runs; they were written to the dead-letter file.', result.error, {
      status,
      response: result.responseText,
    });
    if (stored) await this.removeStored(stored);
    return 'dropped';
  }

  /** Persists a batch that could not be sent now; without a disk queue, counts it as lost. */
  private async hold(encoded: EncodedBatch, apiKey: string | undefined, project: string, result?: HttpExportResult): Promise<void> {
    if (!this.disk) {
      const reason: DropReason = this.stopSending.signal.aborted ? 'shutdown' : 'retries_exhausted';
      this.drop(reason, encoded.runs, 'A batch could not be sent and no on-disk queue is configured; its runs are lost.', result?.error, {
        status: result?.httpStatus,
      });
      return;
    }
    const header: QueuedHeader = {
      items: encoded.runs,
      project,
      boundary: encoded.boundary,
      rawBytes: encoded.rawBytes,
      ...(apiKey ? { apiKey } : {}),
    };
    try {
      const { evicted } = await this.disk.put(header, encoded.body);
      for (const old of evicted) {
        this.drop('disk_queue_full', old.header.items, 'The on-disk queue is full; its oldest batch was dropped.', undefined, {
          batch: old.name,
          max_bytes: this.config.persistent_queue.max_bytes,
        });
      }
    } catch (error) {
      this.drop('retries_exhausted', encoded.runs, 'A batch could not be written to the on-disk queue; its runs are lost.', error);
    }
    this.updateDiskGauges();
  }

  private async holdUnsent(upload: Upload): Promise<void> {
    const { encoded } = await this.encode(upload.runs);
    if (encoded.runs > 0) await this.hold(encoded, upload.apiKey, upload.project);
  }

  /**
   * Re-sends one queued batch, with one attempt (the replay interval is the backoff). A retryable
   * failure stops the pass — the backend is still away — but a batch held for its key does not,
   * so one tenant's revoked key does not block the others.
   */
  private async replayOne(entry: StoredBatch<QueuedHeader>, body: Buffer): Promise<ReplayVerdict> {
    if (this.stopSending.signal.aborted) return 'stop';
    const { header } = entry;
    const encoded: EncodedBatch = { body, boundary: header.boundary, runs: header.items, rawBytes: header.rawBytes };
    const result = await this.attempt(encoded, header.apiKey);
    const runs = () => runsFromParts(parseMultipart(decompress(body), header.boundary));
    await this.settle(result, encoded, runs, header.apiKey, header.project, entry);
    return result.status === 'retryable' ? 'stop' : 'continue';
  }

  private async removeStored(entry: StoredBatch<QueuedHeader>): Promise<void> {
    await this.disk!.remove(entry);
    this.updateDiskGauges();
  }

  private async deadLetter(record: Record<string, unknown>): Promise<void> {
    if (!this.disk) return;
    try {
      await this.disk.deadLetter({ time: new Date().toISOString(), ...record });
    } catch (error) {
      this.logger.error({ err: error, path: this.disk.deadLetterPath }, 'The dead-letter file cannot be written.');
    }
  }

  private logAuthFailure(apiKey: string | undefined, status: number, response: string | undefined): void {
    // Remembered in memory by the key itself (two keys may share their last characters).
    const key = apiKey ?? '';
    if (this.authFailuresLogged.has(key)) return;
    this.authFailuresLogged.add(key);
    this.logger.error(
      { status, api_key: redactKey(apiKey), response },
      'The backend refused this API key; its batches are kept on disk until the key works again.',
    );
  }

  private drop(reason: DropReason, items: number, message: string, error?: unknown, fields: Record<string, unknown> = {}): void {
    this.metrics.dropped(reason, items);
    this.logger.error({ reason, runs: items, ...(error ? { err: error } : {}), ...fields }, message);
  }

  private updateDiskGauges(): void {
    this.replayer?.updateGauges();
  }

}

/** `…abcd`: enough to tell keys apart in logs without revealing them. */
export function redactKey(apiKey: string | undefined): string {
  if (!apiKey) return '(none)';
  return apiKey.length <= 4 ? '…' : `…${apiKey.slice(-4)}`;
}

function backendCounters(settings: ComponentSettings) {
  const { metrics } = settings;
  return {
    batches: counter<'component_id'>(metrics, {
      name: 'tracepipe_backend_batches_sent_total',
      help: 'Batches the backend accepted.',
      labelNames: ['component_id'],
    }),
    runs: counter<'component_id'>(metrics, {
      name: 'tracepipe_backend_runs_sent_total',
      help: 'Runs the backend accepted.',
      labelNames: ['component_id'],
    }),
    bytes: counter<'component_id' | 'encoding'>(metrics, {
      name: 'tracepipe_backend_bytes_sent_total',
      help: 'Body bytes of accepted batches, before (`raw`) and after (`compressed`) zstd.',
      labelNames: ['component_id', 'encoding'],
    }),
  };
}
