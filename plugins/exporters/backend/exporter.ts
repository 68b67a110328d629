// The `backend` exporter: uploads each batch of runs as one zstd-compressed multipart body to
// `<endpoint>/runs/multipart` with its tenant's key. The body is written when the batch is consumed,
// so the sending queue holds compressed bodies of known size. Its own part is one attempt (`push`),
// which reads the backend's answers: a batch rejected as invalid is split in halves down to single
// runs, so that one bad run does not take its neighbours with it, and a single run still rejected
// is dead-lettered; a refused key parks the batch on disk until the key works. Retries, the on-disk
// queue, counting every lost run and delivery holds are `newExporter`'s.

import {
  HttpSender,
  logEndpoint,
  newExporter,
  park,
  reject,
  retry,
  sent,
  split,
  tenantHeader,
} from 'tracepipe/exporterhelper';
import type {
  ExportRequest,
  ExporterControls,
  HttpExportResult,
  RequestCodec,
  TenantHeader,
  Unencodable,
  Verdict,
} from 'tracepipe/exporterhelper';
import type { ComponentSettings, Exporter, Run, RunBatch } from 'tracepipe/plugin';
import type { BackendExporterConfig } from './config.ts';
import { MultipartZstdWriter, UnencodableRunError, multipartContentType } from './internal/multipart_writer.ts';
import { parseMultipart, runsFromParts } from './internal/multipart_reader.ts';
import { decompressZstd as decompress } from './internal/zstd_stream.ts'; // resets its context after an error

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

export function backendExporter(settings: ComponentSettings, config: BackendExporterConfig): Exporter<'runs'> {
  const { logger } = settings.telemetry;
  const counters = backendCounters(settings.telemetry.meter);
  const url = `${config.endpoint.replace(/\/+$/, '')}/runs/multipart`;
  const sender = new HttpSender(url, config.max_concurrent_uploads + 1); // One socket more for the replayer.
  /** Keys whose refusal was logged: one log line per key until it works again. */
  const authFailuresLogged = new Set<string>();

  /** Writes runs into a compressed body, leaving out (and returning) those that cannot be encoded. */
  function encode(runs: readonly Run[], apiKey: string | undefined, project: string) {
    const writer = new MultipartZstdWriter(config.compression_level);
    const unencodable: Unencodable[] = [];
    for (const run of runs) {
      try {
        writer.addRun(run);
      } catch (error) {
        if (!(error instanceof UnencodableRunError)) throw error;
        unencodable.push({ error, record: { run_id: String(run.id) } });
      }
    }
    const { body, boundary, runs: items, rawBytes } = writer.finish();
    if (items === 0) return { unencodable };
    const tenant = apiKey ? { apiKey, tenant: apiKey } : {};
    const upload: Upload = { body, boundary, rawBytes, items, bytes: body.byteLength, project, ...tenant };
    return { request: upload, unencodable };
  }

  /** The backend will never take this body: split it to find the bad run, or dead-letter it. */
  async function refused(
    upload: Upload,
    result: HttpExportResult,
    controls: ExporterControls,
  ): Promise<Verdict<Upload>> {
    const status = result.httpStatus!;
    let runs: readonly Run[];
    try {
      // Read back from the body: only to split or dead-letter it.
      runs = runsFromParts(parseMultipart(decompress(upload.body), upload.boundary));
    } catch (error) {
      // A body that does not parse (a damaged queue file) can never be sent or split.
      return reject(
        { ...result, error: error instanceof Error ? error : new Error(String(error)) },
        { reason: 'corrupt', message: 'A queued batch could not be decoded; it is dropped.' },
      );
    }
    if (SPLIT_STATUSES.has(status) && runs.length > 1) {
      const middle = Math.ceil(runs.length / 2);
      const parts: Upload[] = [];
      for (const half of [runs.slice(0, middle), runs.slice(middle)]) {
        // Runs read back from a body always encode again; the check only keeps the types honest.
        const { request: part, unencodable } = encode(half, upload.apiKey, upload.project);
        await controls.refuse(unencodable);
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

  function countSent(upload: Upload): void {
    counters.batches.inc();
    counters.runs.inc(upload.items);
    counters.bytes.inc({ encoding: 'raw' }, upload.rawBytes);
    counters.bytes.inc({ encoding: 'compressed' }, upload.body.byteLength);
    // A key that works again will be reported again if it is refused later.
    if (authFailuresLogged.size > 0) authFailuresLogged.delete(upload.apiKey ?? '');
  }

  function logAuthFailure(apiKey: string | undefined, status: number, response: string | undefined): void {
    // Remembered in memory by the key itself (two keys may share their last characters).
    const key = apiKey ?? '';
    if (authFailuresLogged.has(key)) return;
    authFailuresLogged.add(key);
    logger.error(
      { status, api_key: redactKey(apiKey), response },
      'The backend refused this API key; its batches are kept on disk until the key works again.',
    );
  }

  return newExporter(settings, config, {
    dataType: 'runs',
    endpoint: url,
    codec,
    close: () => sender.close(),

    encode(batch: RunBatch, context) {
      if (batch.runs.length === 0) return {};
      return encode(batch.runs, context.apiKey || config.api_key, context.project); // An empty key is no key.
    },

    /** One upload attempt, and what the backend's answer means for the batch. */
    async push(upload, { signal }, controls) {
      const headers: Record<string, string> = {
        'Content-Type': multipartContentType(upload.boundary),
        'Content-Encoding': 'zstd',
      };
      if (upload.apiKey) headers['X-API-Key'] = upload.apiKey;
      const result = await sender.post(upload.body, headers, config.timeout_ms, signal);
      if (result.status === 'success') {
        countSent(upload);
        return sent();
      }
      if (result.status === 'retryable') return retry(result, result.retryAfterMs);
      const status = result.httpStatus!;
      if (HOLD_STATUSES.has(status)) {
        if (status === 404)
          logger.error(
            { status, endpoint: logEndpoint(config.endpoint) },
            'The backend has no multipart endpoint at this address; batches are kept on disk.',
          );
        else logAuthFailure(upload.apiKey, status, result.responseText);
        return park(result);
      }
      return refused(upload, result, controls);
    },
  });
}

/** `…abcd`: enough to tell keys apart in logs without revealing them. */
export function redactKey(apiKey: string | undefined): string {
  if (!apiKey) return '(none)';
  return apiKey.length <= 4 ? '…' : `…${apiKey.slice(-4)}`;
}

function backendCounters(meter: ComponentSettings['telemetry']['meter']) {
  return {
    batches: meter.counter({ name: 'tracepipe_backend_batches_sent_total', help: 'Batches the backend accepted.' }),
    runs: meter.counter({ name: 'tracepipe_backend_runs_sent_total', help: 'Runs the backend accepted.' }),
    bytes: meter.counter({
      name: 'tracepipe_backend_bytes_sent_total',
      help: 'Body bytes of accepted batches, before (`raw`) and after (`compressed`) zstd.',
      labelNames: ['encoding'],
    }),
  };
}
