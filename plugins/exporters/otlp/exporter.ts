// The `otlp` exporter: re-encodes span batches as OTLP/HTTP requests (protobuf or JSON, optionally
// gzip) for another collector. Its own part is one attempt (`push`) and how a request is stored;
// the queue, retries, the optional on-disk queue and delivery holds are src/exporterhelper's. A 4xx
// other than 408/425/429 means the receiver will never take this body: the batch is dropped,
// counted and logged.

import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { ComponentSettings, Exporter } from '../../../src/pipeline/component.ts';
import type { RequestContext } from '../../../src/pipeline/data.ts';
import { PermanentError, errorMessage } from '../../../src/pipeline/errors.ts';
import type { SpanBatch } from '../../../src/model/spans.ts';
import { countSpans } from '../../../src/model/spans.ts';
import { encodeTraceRequestJson, encodeTraceRequestProtobuf } from '../../../src/otlp/encode.ts';
import { HttpSender } from '../../../src/exporterhelper/http_sender.ts';
import { QueuedExporter, tenantHeader } from '../../../src/exporterhelper/queued_exporter.ts';
import type {
  ExportRequest,
  PushContext,
  RequestCodec,
  TenantHeader,
} from '../../../src/exporterhelper/queued_exporter.ts';
import { httpVerdict, reject } from '../../../src/exporterhelper/verdict.ts';
import type { Verdict } from '../../../src/exporterhelper/verdict.ts';
import type { ComponentMeter } from '../../../src/telemetry/component.ts';
import type { OtlpExporterConfig } from './config.ts';

const gzip = promisify(gzipCallback);

/** A request body ready to send, with what is needed to send it again later. */
interface OtlpRequest extends ExportRequest {
  readonly body: Buffer;
  /** Sent as `X-API-Key` with `forward_tenant`. */
  readonly apiKey?: string;
  readonly project: string;
}

/** Stored: the body as is, the tenant in the header (the key only with `forward_tenant`; files are 0600). */
const codec: RequestCodec<OtlpRequest, TenantHeader> = {
  encode: (request) => ({ header: tenantHeader(request.project, request.apiKey), body: request.body }),
  decode: (header, body) => ({
    body,
    items: header.items,
    bytes: body.byteLength,
    project: header.project,
    ...(header.apiKey ? { apiKey: header.apiKey, tenant: header.apiKey } : {}),
  }),
};

export class OtlpExporter implements Exporter<'spans'> {
  readonly mutatesData = false;
  private readonly spansSent: ReturnType<typeof otlpCounter>;
  private readonly pipeline: QueuedExporter<OtlpRequest, TenantHeader>;
  private readonly sender: HttpSender;
  private readonly baseHeaders: Record<string, string>;

  constructor(
    settings: ComponentSettings,
    private readonly config: OtlpExporterConfig,
  ) {
    this.spansSent = otlpCounter(settings.telemetry.meter);
    this.baseHeaders = {
      ...config.headers,
      'Content-Type': config.encoding === 'json' ? 'application/json' : 'application/x-protobuf',
      ...(config.compression === 'gzip' ? { 'Content-Encoding': 'gzip' } : {}),
    };
    const url = config.endpoint.replace(/\/+$/, '') + config.traces_path;
    this.sender = new HttpSender(url, config.max_concurrent_uploads + 1); // One socket more for the replayer.
    this.pipeline = new QueuedExporter<OtlpRequest, TenantHeader>({
      settings,
      dataType: 'spans',
      endpoint: url,
      consumers: config.max_concurrent_uploads,
      sendingQueue: config.sending_queue,
      persistentQueue: config.persistent_queue,
      retry: config.retry_on_failure,
      push: (request, context) => this.push(request, context),
      codec,
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
    const request: OtlpRequest = {
      body,
      items: spans,
      bytes: body.byteLength,
      project: context.project,
      ...(apiKey ? { apiKey } : {}),
      ...(context.apiKey ? { tenant: context.apiKey } : {}),
    };
    await this.pipeline.offer(request, context);
  }

  async shutdown(deadline: number): Promise<void> {
    await this.pipeline.shutdown(deadline);
    this.sender.close();
  }

  private async push(request: OtlpRequest, { signal }: PushContext): Promise<Verdict<OtlpRequest>> {
    const headers: Record<string, string> = { ...this.baseHeaders };
    if (this.config.forward_tenant) {
      headers['Service-Project'] = request.project;
      if (request.apiKey) headers['X-API-Key'] = request.apiKey;
    }
    const result = await this.sender.post(request.body, headers, this.config.timeout_ms, signal);
    if (result.status === 'success') this.spansSent.inc(request.items);
    if (result.status === 'failure')
      return reject(result, { message: 'The OTLP receiver rejected a batch; its spans are dropped.' });
    return httpVerdict(result);
  }
}

function otlpCounter(meter: ComponentMeter) {
  return meter.counter({
    name: 'tracepipe_otlp_exporter_spans_sent_total',
    help: 'Spans the receiving OTLP endpoint accepted.',
  });
}
