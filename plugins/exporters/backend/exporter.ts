// The `backend` exporter: uploads each batch of runs as one zstd-compressed multipart body to
// `<endpoint>/runs/multipart` with its tenant's key, retrying per `retry_on_failure`. What cannot be
// sent — retries used up, the backend refusing the key, shutdown arriving first — goes to the
// on-disk queue and is re-sent once the backend answers again; a batch leaves the disk only after a
// 2xx. A batch the backend rejects as invalid is split in halves down to single runs, so that one
// bad run does not take its neighbours with it; a single run still rejected goes to the dead-letter
// file. Every run lost on any path is counted and logged.

import { decompress } from 'zstd-napi';
import type { ComponentSettings, Exporter } from '../../../src/pipeline/component.ts';
import type { RequestContext } from '../../../src/pipeline/data.ts';
import { errorMessage } from '../../../src/pipeline/errors.ts';
import type { Run, RunBatch } from '../../../src/model/runs.ts';
import type { HttpExportResult } from '../../../src/exporterhelper/http_sender.ts';
import type { StoredBatch } from '../../../src/exporterhelper/persistent_queue.ts';
import { QueuedExporter, tenantBatchHeader } from '../../../src/exporterhelper/queued_exporter.ts';
import type { TenantBatchHeader } from '../../../src/exporterhelper/queued_exporter.ts';
import type { ReplayVerdict } from '../../../src/exporterhelper/replayer.ts';
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
interface QueuedHeader extends TenantBatchHeader {
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
  private readonly componentId: string;
  private readonly sent: ReturnType<typeof backendCounters>;
  private readonly pipeline: QueuedExporter<Upload, QueuedHeader>;
  /** Keys whose refusal was logged: one log line per key until it works again. */
  private readonly authFailuresLogged = new Set<string>();

  constructor(
    settings: ComponentSettings,
    private readonly config: BackendExporterConfig,
  ) {
    this.componentId = settings.id;
    this.sent = backendCounters(settings);
    this.pipeline = new QueuedExporter<Upload, QueuedHeader>({
      settings,
      dataType: 'runs',
      url: `${config.endpoint.replace(/\/+$/, '')}/runs/multipart`,
      consumers: config.max_concurrent_uploads,
      sendingQueue: config.sending_queue,
      persistentQueue: config.persistent_queue,
      retry: config.retry_on_failure,
      timeoutMs: config.timeout_ms,
      itemCount: (upload) => upload.runs.length,
      send: async (upload) => {
        await this.sendRuns(upload.runs, upload.apiKey, upload.project);
      },
      keepUnsent: (upload) => this.holdUnsent(upload),
      replay: (entry, body) => this.replayOne(entry, body),
    });
  }

  start(_signal?: AbortSignal): Promise<void> {
    return this.pipeline.start();
  }

  async consume(batch: RunBatch, context: RequestContext): Promise<void> {
    if (this.pipeline.stopping) throw new Error('the backend exporter is shutting down');
    if (batch.runs.length === 0) return;
    const apiKey = context.apiKey || this.config.api_key; // An empty key is no key.
    await this.pipeline.offer({ runs: batch.runs, project: context.project, ...(apiKey ? { apiKey } : {}) });
  }

  shutdown(deadline: number): Promise<void> {
    return this.pipeline.shutdown(deadline);
  }

  /** Encodes, sends with retries, settles the outcome. */
  private async sendRuns(runs: readonly Run[], apiKey: string | undefined, project: string): Promise<Settled> {
    const { encoded, included } = await this.encode(runs);
    if (encoded.runs === 0) return 'dropped';
    const result = await this.pipeline.withRetry(() => this.attempt(encoded, apiKey));
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
        await this.pipeline.deadLetter({ reason: 'unencodable', error: errorMessage(error), run_id: String(run.id) });
      }
      this.pipeline.drop('unencodable', refused.length, 'Runs that cannot be encoded as JSON were dead-lettered.', refused[0]!.error);
    }
    return { encoded, included };
  }

  private attempt(encoded: EncodedBatch, apiKey: string | undefined): Promise<HttpExportResult> {
    const headers: Record<string, string> = {
      'Content-Type': multipartContentType(encoded.boundary),
      'Content-Encoding': 'zstd',
    };
    if (apiKey) headers['X-API-Key'] = apiKey;
    return this.pipeline.attempt(encoded.body, headers);
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
    const { pipeline } = this;
    if (result.status === 'success') {
      this.sent.batches.inc({ component_id: this.componentId });
      this.sent.runs.inc({ component_id: this.componentId }, encoded.runs);
      this.sent.bytes.inc({ component_id: this.componentId, encoding: 'raw' }, encoded.rawBytes);
      this.sent.bytes.inc({ component_id: this.componentId, encoding: 'compressed' }, encoded.body.byteLength);
      // A key that works again will be reported again if it is refused later.
      if (this.authFailuresLogged.size > 0) this.authFailuresLogged.delete(apiKey ?? '');
      if (stored) await pipeline.removeStored(stored);
      else pipeline.destinationBack(); // Re-send what waits on disk.
      return 'sent';
    }
    const status = result.httpStatus;
    if (result.status === 'retryable' || (status !== undefined && HOLD_STATUSES.has(status))) {
      if (status === 401 || status === 403) this.logAuthFailure(apiKey, status, result.responseText);
      else if (status === 404) pipeline.logger.error({ status, endpoint: this.config.endpoint }, 'The backend has no multipart endpoint at this address; batches are kept on disk.');
      if (!stored) await this.hold(encoded, apiKey, project, result);
      return 'held';
    }
    let all: readonly Run[];
    try {
      all = runs();
    } catch (error) {
      // Only a queued body is decoded here; one that does not parse can never be sent or split.
      pipeline.drop('corrupt', encoded.runs, 'A queued batch could not be decoded; it is dropped.', error, { batch: stored?.name });
      if (stored) await pipeline.removeStored(stored);
      return 'dropped';
    }
    if (status !== undefined && SPLIT_STATUSES.has(status)) {
      if (all.length > 1) {
        pipeline.logger.warn({ status, runs: all.length, response: result.responseText }, 'The backend rejected a batch; splitting it to isolate the bad runs.');
        const middle = Math.ceil(all.length / 2);
        // A half that cannot be sent now is persisted on its own, so the original entry can go.
        await this.sendRuns(all.slice(0, middle), apiKey, project);
        await this.sendRuns(all.slice(middle), apiKey, project);
        if (stored) await pipeline.removeStored(stored);
        return 'sent';
      }
    }
    // A single run rejected as invalid, or a status that retrying cannot change (409, ...).
    const rejected = all;
    for (const run of rejected) {
      await pipeline.deadLetter({ reason: 'rejected', status, response: result.responseText, project, run });
    }
    pipeline.drop('rejected', rejected.length, 'The backend rejected runs; they were written to the dead-letter file.', result.error, {
      status,
      response: result.responseText,
    });
    if (stored) await pipeline.removeStored(stored);
    return 'dropped';
  }

  /** Persists a batch that could not be sent now; without a disk queue, counts it as lost. */
  private hold(encoded: EncodedBatch, apiKey: string | undefined, project: string, result?: HttpExportResult): Promise<void> {
    const header: QueuedHeader = {
      ...tenantBatchHeader(encoded.runs, project, apiKey),
      boundary: encoded.boundary,
      rawBytes: encoded.rawBytes,
    };
    return this.pipeline.hold(header, encoded.body, result);
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
    const { header } = entry;
    const encoded: EncodedBatch = { body, boundary: header.boundary, runs: header.items, rawBytes: header.rawBytes };
    const result = await this.attempt(encoded, header.apiKey);
    const runs = () => runsFromParts(parseMultipart(decompress(body), header.boundary));
    await this.settle(result, encoded, runs, header.apiKey, header.project, entry);
    return result.status === 'retryable' ? 'stop' : 'continue';
  }

  private logAuthFailure(apiKey: string | undefined, status: number, response: string | undefined): void {
    // Remembered in memory by the key itself (two keys may share their last characters).
    const key = apiKey ?? '';
    if (this.authFailuresLogged.has(key)) return;
    this.authFailuresLogged.add(key);
    this.pipeline.logger.error(
      { status, api_key: redactKey(apiKey), response },
      'The backend refused this API key; its batches are kept on disk until the key works again.',
    );
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
