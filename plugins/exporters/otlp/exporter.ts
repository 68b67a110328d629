// The `otlp` exporter: re-encodes span batches as OTLP/HTTP requests (protobuf or JSON, optionally
// gzip) for another collector, through the same sending queue, retry loop and optional on-disk
// queue as the backend exporter (src/exporterhelper). A 4xx other than 408/425/429 means the
// receiver will never take this body: the batch is dropped, counted and logged.

import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { Logger } from 'pino';
import type { ComponentSettings, Exporter } from '../../../src/pipeline/component.ts';
import type { RequestContext } from '../../../src/pipeline/data.ts';
import { PermanentError, errorMessage } from '../../../src/pipeline/errors.ts';
import type { SpanBatch } from '../../../src/model/spans.ts';
import { countSpans } from '../../../src/model/spans.ts';
import { encodeTraceRequestJson, encodeTraceRequestProtobuf } from '../../../src/otlp/encode.ts';
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
import type { OtlpExporterConfig } from './config.ts';

const gzip = promisify(gzipCallback);

/** A request body ready to send, with what is needed to send it again later. */
interface EncodedRequest {
  readonly body: Buffer;
  readonly spans: number;
  readonly apiKey?: string;
  readonly project: string;
}

/** Stored with a queued body; holds the tenant key when `forward_tenant` is on (files are 0600). */
interface QueuedHeader {
  readonly items: number;
  readonly apiKey?: string;
  readonly project: string;
}

export class OtlpExporter implements Exporter<'spans'> {
  readonly mutatesData = false;
  private readonly logger: Logger;
  private readonly metrics: ExporterMetrics;
  private readonly spansSent: ReturnType<typeof otlpCounter>;
  private readonly componentId: string;
  private readonly queue: SendingQueue<EncodedRequest>;
  private readonly sender: HttpSender;
  private readonly disk?: PersistentQueue<QueuedHeader>;
  private readonly replayer?: Replayer<QueuedHeader>;
  private readonly stopSending = new AbortController();
  private readonly baseHeaders: Record<string, string>;
  private started = false;
  private stopping = false;
  private shutdownPromise?: Promise<void>;

  constructor(
    settings: ComponentSettings,
    private readonly config: OtlpExporterConfig,
  ) {
    this.logger = settings.logger;
    this.componentId = settings.id;
    this.metrics = exporterMetrics(settings.metrics, settings.id, 'spans');
    this.spansSent = otlpCounter(settings);
    this.sender = new HttpSender(config.endpoint.replace(/\/+$/, '') + config.traces_path, config.max_concurrent_uploads + 1);
    this.baseHeaders = {
      ...config.headers,
      'Content-Type': config.encoding === 'json' ? 'application/json' : 'application/x-protobuf',
      ...(config.compression === 'gzip' ? { 'Content-Encoding': 'gzip' } : {}),
    };
    this.queue = new SendingQueue<EncodedRequest>({
      ...config.sending_queue,
      consumers: config.max_concurrent_uploads,
      handle: (request) => this.send(request),
      onHandlerError: (error, request) => this.drop('internal_error', request.spans, 'A send failed unexpectedly; its spans are lost.', error),
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
      if (corrupt.length > 0) this.logger.error({ files: corrupt }, 'Unreadable queue files were set aside as *.corrupt.');
      this.replayer!.start();
    }
  }

  /** Encodes at once (so the queue holds compact bodies, not span objects), then queues. */
  async consume(batch: SpanBatch, context: RequestContext): Promise<void> {
    if (this.stopping) throw new Error('the otlp exporter is shutting down');
    const spans = countSpans(batch);
    if (spans === 0) return;
    let body: Buffer;
    try {
      const encoded =
        this.config.encoding === 'json'
          ? Buffer.from(JSON.stringify(encodeTraceRequestJson(batch)))
          : Buffer.from(encodeTraceRequestProtobuf(batch));
      body = this.config.compression === 'gzip' ? await gzip(encoded) : encoded;
    } catch (error) {
      throw new PermanentError(`the batch cannot be encoded as OTLP: ${errorMessage(error)}`, { cause: error });
    }
    const apiKey = this.config.forward_tenant ? context.apiKey : undefined;
    await this.queue.offer({ body, spans, project: context.project, ...(apiKey ? { apiKey } : {}) });
  }

  shutdown(deadline: number): Promise<void> {
    this.shutdownPromise ??= this.doShutdown(deadline);
    return this.shutdownPromise;
  }

  private async doShutdown(deadline: number): Promise<void> {
    this.stopping = true;
    await drainForShutdown(this.queue, deadline, this.stopSending, (request) => this.hold(request));
    await this.replayer?.stop();
    this.sender.close();
  }

  private async send(request: EncodedRequest): Promise<void> {
    if (this.stopSending.signal.aborted) return this.hold(request);
    const result = await withRetry(() => this.attempt(request), this.config.retry_on_failure, {
      signal: this.stopSending.signal,
      onRetry: () => this.metrics.retry(),
    });
    if (result.status === 'success') {
      this.sent(request.spans);
      this.replayer?.destinationBack();
    } else if (result.status === 'retryable') {
      await this.hold(request, result);
    } else {
      this.reject(request.spans, result);
    }
  }

  private async attempt(request: EncodedRequest): Promise<HttpExportResult> {
    const headers: Record<string, string> = { ...this.baseHeaders };
    if (this.config.forward_tenant) {
      headers['Service-Project'] = request.project;
      if (request.apiKey) headers['X-API-Key'] = request.apiKey;
    }
    const result = await this.sender.post(request.body, headers, this.config.timeout_ms, this.stopSending.signal);
    if (result.status !== 'success') this.metrics.failure(failureLabel(result));
    return result;
  }

  private async replayOne(entry: StoredBatch<QueuedHeader>, body: Buffer): Promise<ReplayVerdict> {
    if (this.stopSending.signal.aborted) return 'stop';
    const { header } = entry;
    const request: EncodedRequest = { body, spans: header.items, project: header.project, ...(header.apiKey ? { apiKey: header.apiKey } : {}) };
    const result = await this.attempt(request);
    if (result.status === 'retryable') return 'stop';
    if (result.status === 'success') this.sent(request.spans);
    else this.reject(request.spans, result);
    await this.disk!.remove(entry);
    this.replayer!.updateGauges();
    return 'continue';
  }

  private sent(spans: number): void {
    this.spansSent.inc({ component_id: this.componentId }, spans);
  }

  private reject(spans: number, result: HttpExportResult): void {
    this.drop('rejected', spans, 'The OTLP receiver rejected a batch; its spans are dropped.', result.error, {
      status: result.httpStatus,
      response: result.responseText,
    });
  }

  private async hold(request: EncodedRequest, result?: HttpExportResult): Promise<void> {
    if (!this.disk) {
      const reason: DropReason = this.stopSending.signal.aborted ? 'shutdown' : 'retries_exhausted';
      this.drop(reason, request.spans, 'A batch could not be sent and no on-disk queue is configured; its spans are lost.', result?.error);
      return;
    }
    const header: QueuedHeader = { items: request.spans, project: request.project, ...(request.apiKey ? { apiKey: request.apiKey } : {}) };
    try {
      const { evicted } = await this.disk.put(header, request.body);
      for (const old of evicted) {
        this.drop('disk_queue_full', old.header.items, 'The on-disk queue is full; its oldest batch was dropped.', undefined, { batch: old.name });
      }
    } catch (error) {
      this.drop('retries_exhausted', request.spans, 'A batch could not be written to the on-disk queue; its spans are lost.', error);
    }
    this.replayer!.updateGauges();
  }

  private drop(reason: DropReason, spans: number, message: string, error?: unknown, fields: Record<string, unknown> = {}): void {
    this.metrics.dropped(reason, spans);
    this.logger.error({ reason, spans, ...(error ? { err: error } : {}), ...fields }, message);
  }
}

function otlpCounter(settings: ComponentSettings) {
  return counter<'component_id'>(settings.metrics, {
    name: 'tracepipe_otlp_exporter_spans_sent_total',
    help: 'Spans the receiving OTLP endpoint accepted.',
    labelNames: ['component_id'],
  });
}
