// The OTLP/HTTP exporter (the `otlp` exporter, and one per endpoint of the `loadbalancing`
// exporter): re-encodes span batches as OTLP/HTTP requests (protobuf or JSON, optionally
// gzip) for another collector. Its own part is how a batch becomes a body, one attempt to send it
// and how it is stored; the queue, retries, the on-disk queue and delivery holds are
// `newExporter`'s. A 4xx other than 408/425/429 means the receiver will never take this body: the
// batch is dropped, counted and logged.

import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { HttpSender } from '../exporterhelper/http_sender.ts';
import { newExporter } from '../exporterhelper/new_exporter.ts';
import { tenantHeader } from '../exporterhelper/queued_exporter.ts';
import type { ExportRequest, RequestCodec, TenantHeader } from '../exporterhelper/queued_exporter.ts';
import { httpVerdict, reject } from '../exporterhelper/verdict.ts';
import { countSpans } from '../model/spans.ts';
import type { SpanBatch } from '../model/spans.ts';
import type { ComponentSettings, Exporter } from '../pipeline/component.ts';
import { PermanentError, errorMessage } from '../pipeline/errors.ts';
import { encodeTraceRequestJson, encodeTraceRequestProtobuf } from './encode.ts';
import type { OtlpExporterConfig } from './exporter-config.ts';

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

/** An exporter of span batches to the OTLP/HTTP endpoint `config` names, with its queue and retries. */
export function otlpExporter(settings: ComponentSettings, config: OtlpExporterConfig): Exporter<'spans'> {
  const spansSent = settings.telemetry.meter.counter({
    name: 'tracepipe_otlp_exporter_spans_sent_total',
    help: 'Spans the receiving OTLP endpoint accepted.',
  });
  const baseHeaders: Record<string, string> = {
    ...config.headers,
    'Content-Type': config.encoding === 'json' ? 'application/json' : 'application/x-protobuf',
    ...(config.compression === 'gzip' ? { 'Content-Encoding': 'gzip' } : {}),
  };
  const url = config.endpoint.replace(/\/+$/, '') + config.traces_path;
  const sender = new HttpSender(url, config.max_concurrent_uploads + 1); // One socket more for the replayer.

  return newExporter(settings, config, {
    dataType: 'spans',
    endpoint: url,
    codec,
    close: () => sender.close(),

    // Encoded at once, so that the queue holds compact bodies, not span objects.
    async encode(batch: SpanBatch, context) {
      const spans = countSpans(batch);
      if (spans === 0) return {};
      let body: Buffer;
      try {
        const encoded =
          config.encoding === 'json'
            ? Buffer.from(JSON.stringify(encodeTraceRequestJson(batch)))
            : Buffer.from(encodeTraceRequestProtobuf(batch));
        body = config.compression === 'gzip' ? await gzip(encoded) : encoded;
      } catch (error) {
        throw new PermanentError(`the batch cannot be encoded as OTLP: ${errorMessage(error)}`, { cause: error });
      }
      const apiKey = config.forward_tenant ? context.apiKey : undefined;
      const request: OtlpRequest = {
        body,
        items: spans,
        bytes: body.byteLength,
        project: context.project,
        ...(apiKey ? { apiKey } : {}),
        ...(context.apiKey ? { tenant: context.apiKey } : {}),
      };
      return { request };
    },

    async push(request, { signal }) {
      const headers: Record<string, string> = { ...baseHeaders };
      if (config.forward_tenant) {
        headers['Service-Project'] = request.project;
        if (request.apiKey) headers['X-API-Key'] = request.apiKey;
      }
      const result = await sender.post(request.body, headers, config.timeout_ms, signal);
      if (result.status === 'success') spansSent.inc(request.items);
      if (result.status === 'failure')
        return reject(result, { message: 'The OTLP receiver rejected a batch; its spans are dropped.' });
      return httpVerdict(result);
    },
  });
}
