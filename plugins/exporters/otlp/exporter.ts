// The `otlp` exporter: re-encodes span batches as OTLP/HTTP requests (protobuf or JSON, optionally
// gzip) for another collector, through the same sending queue, retry loop and optional on-disk
// queue as the backend exporter (src/exporterhelper). A 4xx other than 408/425/429 means the
// receiver will never take this body: the batch is dropped, counted and logged.

import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { ComponentSettings, Exporter } from '../../../src/pipeline/component.ts';
import type { RequestContext } from '../../../src/pipeline/data.ts';
import { PermanentError, errorMessage } from '../../../src/pipeline/errors.ts';
import type { SpanBatch } from '../../../src/model/spans.ts';
import { countSpans } from '../../../src/model/spans.ts';
import { encodeTraceRequestJson, encodeTraceRequestProtobuf } from '../../../src/otlp/encode.ts';
import type { HttpExportResult } from '../../../src/exporterhelper/http_sender.ts';
import type { StoredBatch } from '../../../src/exporterhelper/persistent_queue.ts';
import { QueuedExporter, tenantBatchHeader } from '../../../src/exporterhelper/queued_exporter.ts';
import type { TenantBatchHeader } from '../../../src/exporterhelper/queued_exporter.ts';
import type { ReplayVerdict } from '../../../src/exporterhelper/replayer.ts';
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
type QueuedHeader = TenantBatchHeader;

export class OtlpExporter implements Exporter<'spans'> {
  readonly mutatesData = false;
  private readonly spansSent: ReturnType<typeof otlpCounter>;
  private readonly componentId: string;
  private readonly pipeline: QueuedExporter<EncodedRequest, QueuedHeader>;
  private readonly baseHeaders: Record<string, string>;

  constructor(
    settings: ComponentSettings,
    private readonly config: OtlpExporterConfig,
  ) {
    this.componentId = settings.id;
    this.spansSent = otlpCounter(settings);
    this.baseHeaders = {
      ...config.headers,
      'Content-Type': config.encoding === 'json' ? 'application/json' : 'application/x-protobuf',
      ...(config.compression === 'gzip' ? { 'Content-Encoding': 'gzip' } : {}),
    };
    this.pipeline = new QueuedExporter<EncodedRequest, QueuedHeader>({
      settings,
      dataType: 'spans',
      url: config.endpoint.replace(/\/+$/, '') + config.traces_path,
      consumers: config.max_concurrent_uploads,
      sendingQueue: config.sending_queue,
      persistentQueue: config.persistent_queue,
      retry: config.retry_on_failure,
      timeoutMs: config.timeout_ms,
      itemCount: (request) => request.spans,
      send: (request) => this.send(request),
      keepUnsent: (request) => this.hold(request),
      replay: (entry, body) => this.replayOne(entry, body),
    });
  }

  start(_signal?: AbortSignal): Promise<void> {
    return this.pipeline.start();
  }

  /** Encodes at once (so the queue holds compact bodies, not span objects), then queues. */
  async consume(batch: SpanBatch, context: RequestContext): Promise<void> {
    if (this.pipeline.stopping) throw new Error('the otlp exporter is shutting down');
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
    await this.pipeline.offer({ body, spans, project: context.project, ...(apiKey ? { apiKey } : {}) });
  }

  shutdown(deadline: number): Promise<void> {
    return this.pipeline.shutdown(deadline);
  }

  private async send(request: EncodedRequest): Promise<void> {
    const result = await this.pipeline.withRetry(() => this.attempt(request));
    if (result.status === 'success') {
      this.sent(request.spans);
      this.pipeline.destinationBack();
    } else if (result.status === 'retryable') {
      await this.hold(request, result);
    } else {
      this.reject(request.spans, result);
    }
  }

  private attempt(request: EncodedRequest): Promise<HttpExportResult> {
    const headers: Record<string, string> = { ...this.baseHeaders };
    if (this.config.forward_tenant) {
      headers['Service-Project'] = request.project;
      if (request.apiKey) headers['X-API-Key'] = request.apiKey;
    }
    return this.pipeline.attempt(request.body, headers);
  }

  private async replayOne(entry: StoredBatch<QueuedHeader>, body: Buffer): Promise<ReplayVerdict> {
    const { header } = entry;
    const request: EncodedRequest = { body, spans: header.items, project: header.project, ...(header.apiKey ? { apiKey: header.apiKey } : {}) };
    const result = await this.attempt(request);
    if (result.status === 'retryable') return 'stop';
    if (result.status === 'success') this.sent(request.spans);
    else this.reject(request.spans, result);
    await this.pipeline.removeStored(entry);
    return 'continue';
  }

  private sent(spans: number): void {
    this.spansSent.inc({ component_id: this.componentId }, spans);
  }

  private reject(spans: number, result: HttpExportResult): void {
    this.pipeline.drop('rejected', spans, 'The OTLP receiver rejected a batch; its spans are dropped.', result.error, {
      status: result.httpStatus,
      response: result.responseText,
    });
  }

  /** Persists a batch that could not be sent now; without a disk queue, counts it as lost. */
  private hold(request: EncodedRequest, result?: HttpExportResult): Promise<void> {
    return this.pipeline.hold(tenantBatchHeader(request.spans, request.project, request.apiKey), request.body, result);
  }
}

function otlpCounter(settings: ComponentSettings) {
  return counter<'component_id'>(settings.metrics, {
    name: 'tracepipe_otlp_exporter_spans_sent_total',
    help: 'Spans the receiving OTLP endpoint accepted.',
    labelNames: ['component_id'],
  });
}
