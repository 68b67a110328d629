// The `backend` exporter: uploads each batch of runs as one zstd-compressed multipart body to
// `<endpoint>/runs/multipart` with its tenant's key. The body is written when the batch is consumed,
// so the sending queue holds compressed bodies of known size. Its own part is one attempt (`push`),
// which reads the backend's answers: a batch rejected as invalid is split in halves down to single
// runs, so that one bad run does not take its neighbours with it, and a single run still rejected
// is dead-lettered; a refused key parks the batch on disk until the key works. Retries, the on-disk
// queue, counting every lost run and delivery holds are src/exporterhelper's.

import { decompressZstd as decompress } from './internal/zstd_stream.ts'; // resets its context after an error
import type { ComponentSettings, Exporter } from '../../../src/pipeline/component.ts';
import type { RequestContext } from '../../../src/pipeline/data.ts';
import { errorMessage } from '../../../src/pipeline/errors.ts';
import type { Run, RunBatch } from '../../../src/model/runs.ts';
import { HttpSender } from '../../../src/exporterhelper/http_sender.ts';
import type { HttpExportResult } from '../../../src/exporterhelper/http_sender.ts';
import { logEndpoint } from '../../../src/exporterhelper/outage_log.ts';
import { QueuedExporter, tenantHeader } from '../../../src/exporterhelper/queued_exporter.ts';
import type {
  ExportRequest,
  PushContext,
  RequestCodec,
  TenantHeader,
} from '../../../src/exporterhelper/queued_exporter.ts';
import { park, reject, retry, sent, split } from '../../../src/exporterhelper/verdict.ts';
import type { Verdict } from '../../../src/exporterhelper/verdict.ts';
import type { ComponentMeter } from '../../../src/telemetry/component.ts';
import type { BackendExporterConfig } from './config.ts';
import { MultipartZstdWriter, UnencodableRunError, multipartContentType } from './internal/multipart_writer.ts';
import { parseMultipart, runsFromParts } from './internal/multipart_reader.ts';

/** One upload: its compressed body and the tenant it is sent for. */
interface Upload extends ExportRequest {
  /** The zstd-compressed multipart body. */
  readonly body: Buffer;
  readonly boundary: string;
  /** Uncompressed body size. */
  readonly rawBytes: number;
  readonly apiKey?: string;
  readonly project: string;
}

/**
 * The header stored with a queued body. It includes the tenant's API key, because a batch must be
 * re-sent with its own tenant's key after a restart; queue files are therefore created 0600 in a
 * 0700 directory (see README).
 */
interface QueuedHeader extends TenantHeader {
  readonly boundary: string;
  readonly rawBytes: number;
}

const codec: RequestCodec<Upload, QueuedHeader> = {
  encode: (upload) => ({
    header: { ...tenantHeader(upload.project, upload.apiKey), boundary: upload.boundary, rawBytes: upload.rawBytes },
    body: upload.body,
  }),
  decode: (header, body) => ({
    body,
    boundary: header.boundary,
    rawBytes: header.rawBytes,
    items: header.items,
    bytes: body.byteLength,
    project: header.project,
    ...(header.apiKey ? { apiKey: header.apiKey, tenant: header.apiKey } : {}),
  }),
};

/** Statuses that say "this body is invalid": split it to find the bad run. */
const SPLIT_STATUSES = new Set([400, 413, 422]);
/** Statuses that say "not with this key / not here": keep the batch until an operator fixes it. */
const HOLD_STATUSES = new Set([401, 403, 404]);

interface Encoded {
  readonly upload?: Upload;
  /** Runs left out because they cannot be encoded. */
  readonly refused: readonly { readonly run: Run; readonly error: unknown }[];
}

export class BackendExporter implements Exporter<'runs'> {
  readonly mutatesData = false;
  private readonly logger: ComponentSettings['telemetry']['logger'];
  private readonly sent: ReturnType<typeof backendCounters>;
  private readonly sender: HttpSender;
  private readonly pipeline: QueuedExporter<Upload, QueuedHeader>;
  /** Keys whose refusal was logged: one log line per key until it works again. */
  private readonly authFailuresLogged = new Set<string>();

  constructor(
    settings: ComponentSettings,
    private readonly config: BackendExporterConfig,
  ) {
    this.logger = settings.telemetry.logger;
    this.sent = backendCounters(settings.telemetry.meter);
    const url = `${config.endpoint.replace(/\/+$/, '')}/runs/multipart`;
    this.sender = new HttpSender(url, config.max_concurrent_uploads + 1); // One socket more for the replayer.
    this.pipeline = new QueuedExporter<Upload, QueuedHeader>({
      settings,
      dataType: 'runs',
      endpoint: url,
      consumers: config.max_concurrent_uploads,
      sendingQueue: config.sending_queue,
      persistentQueue: config.persistent_queue,
      retry: config.retry_on_failure,
      push: (upload, context) => this.push(upload, context),
      codec,
    });
  }

  start(_signal?: AbortSignal): Promise<void> {
    return this.pipeline.start();
  }

  async consume(batch: RunBatch, context: RequestContext): Promise<void> {
    if (this.pipeline.stopping) throw new Error('the backend exporter is shutting down');
    if (batch.runs.length === 0) return;
    const apiKey = context.apiKey || this.config.api_key; // An empty key is no key.
    const { upload, refused } = this.encode(batch.runs, apiKey, context.project);
    // Queued first: a refusal (a full queue) sends the client back to retry the whole request, so
    // the unencodable runs are dead-lettered only once the rest is accepted.
    if (upload) await this.pipeline.offer(upload, context);
    await this.deadLetterUnencodable(refused);
  }

  async shutdown(deadline: number): Promise<void> {
    await this.pipeline.shutdown(deadline);
    this.sender.close();
  }

  /** Writes runs into a compressed body, leaving out (and returning) those that cannot be encoded. */
  private encode(runs: readonly Run[], apiKey: string | undefined, project: string): Encoded {
    const writer = new MultipartZstdWriter(this.config.compression_level);
    const refused: { run: Run; error: unknown }[] = [];
    for (const run of runs) {
      try {
        writer.addRun(run);
      } catch (error) {
        if (!(error instanceof UnencodableRunError)) throw error;
        refused.push({ run, error });
      }
    }
    const { body, boundary, runs: items, rawBytes } = writer.finish();
    if (items === 0) return { refused };
    const tenant = apiKey ? { apiKey, tenant: apiKey } : {};
    return { upload: { body, boundary, rawBytes, items, bytes: body.byteLength, project, ...tenant }, refused };
  }

  private async deadLetterUnencodable(refused: Encoded['refused']): Promise<void> {
    if (refused.length === 0) return;
    for (const { run, error } of refused) {
      await this.pipeline.deadLetter({ reason: 'unencodable', error: errorMessage(error), run_id: String(run.id) });
    }
    this.pipeline.drop(
      'unencodable',
      refused.length,
      'Runs that cannot be encoded as JSON were dead-lettered.',
      refused[0]!.error,
    );
  }

  /** One upload attempt, and what the backend's answer means for the batch. */
  private async push(upload: Upload, { signal }: PushContext): Promise<Verdict<Upload>> {
    const headers: Record<string, string> = {
      'Content-Type': multipartContentType(upload.boundary),
      'Content-Encoding': 'zstd',
    };
    if (upload.apiKey) headers['X-API-Key'] = upload.apiKey;
    const result = await this.sender.post(upload.body, headers, this.config.timeout_ms, signal);
    if (result.status === 'success') {
      this.countSent(upload);
      return sent();
    }
    if (result.status === 'retryable') return retry(result, result.retryAfterMs);
    const status = result.httpStatus!;
    if (HOLD_STATUSES.has(status)) {
      if (status === 404)
        this.logger.error(
          { status, endpoint: logEndpoint(this.config.endpoint) },
          'The backend has no multipart endpoint at this address; batches are kept on disk.',
        );
      else this.logAuthFailure(upload.apiKey, status, result.responseText);
      return park(result);
    }
    return this.refused(upload, result);
  }

  /** The backend will never take this body: split it to find the bad run, or dead-letter it. */
  private async refused(upload: Upload, result: HttpExportResult): Promise<Verdict<Upload>> {
    const status = result.httpStatus!;
    let runs: readonly Run[];
    try {
      runs = await this.decodeRuns(upload);
    } catch (error) {
      // A body that does not parse (a damaged queue file) can never be sent or split.
      return reject(
        { ...result, error: error instanceof Error ? error : new Error(String(error)) },
        {
          reason: 'corrupt',
          message: 'A queued batch could not be decoded; it is dropped.',
        },
      );
    }
    if (SPLIT_STATUSES.has(status) && runs.length > 1) {
      const middle = Math.ceil(runs.length / 2);
      const parts: Upload[] = [];
      for (const half of [runs.slice(0, middle), runs.slice(middle)]) {
        // Runs read back from a body always encode again; the check only keeps the types honest.
        const { upload: part, refused } = this.encode(half, upload.apiKey, upload.project);
        await this.deadLetterUnencodable(refused);
        if (part) parts.push(part);
      }
      return split(result, parts);
    }
    // A single run rejected as invalid, or a status that retrying cannot change (409, ...).
    return reject(result, {
      message: 'The backend rejected runs; they were written to the dead-letter file.',
      deadLetters: runs.map((run) => ({
        reason: 'rejected',
        status,
        response: result.responseText,
        project: upload.project,
        run,
      })),
    });
  }

  /** The runs of an upload, read back from its body: only to split or dead-letter it. */
  private async decodeRuns(upload: Upload): Promise<readonly Run[]> {
    return runsFromParts(parseMultipart(decompress(upload.body), upload.boundary));
  }

  private countSent(upload: Upload): void {
    this.sent.batches.inc();
    this.sent.runs.inc(upload.items);
    this.sent.bytes.inc({ encoding: 'raw' }, upload.rawBytes);
    this.sent.bytes.inc({ encoding: 'compressed' }, upload.body.byteLength);
    // A key that works again will be reported again if it is refused later.
    if (this.authFailuresLogged.size > 0) this.authFailuresLogged.delete(upload.apiKey ?? '');
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
}

/** `…abcd`: enough to tell keys apart in logs without revealing them. */
export function redactKey(apiKey: string | undefined): string {
  if (!apiKey) return '(none)';
  return apiKey.length <= 4 ? '…' : `…${apiKey.slice(-4)}`;
}

function backendCounters(meter: ComponentMeter) {
  return {
    batches: meter.counter({
      name: 'tracepipe_backend_batches_sent_total',
      help: 'Batches the backend accepted.',
    }),
    runs: meter.counter({
      name: 'tracepipe_backend_runs_sent_total',
      help: 'Runs the backend accepted.',
    }),
    bytes: meter.counter({
      name: 'tracepipe_backend_bytes_sent_total',
      help: 'Body bytes of accepted batches, before (`raw`) and after (`compressed`) zstd.',
      labelNames: ['encoding'],
    }),
  };
}
