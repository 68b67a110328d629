// A plain OTLP/HTTP traces endpoint for an exporter's tests: the stand-in for whatever receives
// what the exporter sends (a collector, a second proxy tier), as the OpenTelemetry Collector's
// exporter tests post to a bare HTTP server rather than to another component. It decodes each
// request with the framework's OTLP codecs (protobuf or JSON, gzip or not), records it, and answers
// what the test scripts (default: 200 with an empty ExportTraceServiceResponse).
//
// The batches it accepts go to a Sink with the request's tenant as its context, read from the
// headers the framework's OTLP exporter writes with `forward_tenant` (`X-API-Key`,
// `Service-Project`), so a test can check both what arrived and for whom.

import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import { countSpans } from '../model/spans.ts';
import { Sink } from '../pipeline/testing.ts';
import type { DecodedTraceRequest } from '../otlp/decoded.ts';
import { decodeTraceRequestJson } from '../otlp/decode-json.ts';
import { decodeTraceRequestProtobuf } from '../otlp/decode-protobuf.ts';
import { CONTENT_TYPES, encodeExportResponse, encodeStatus } from '../otlp/response.ts';
import type { OtlpEncoding } from '../otlp/response.ts';

const gunzipAsync = promisify(gunzip);

/** What the server answers a request with. */
export interface OtlpHttpAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
}

/** One request the server was sent, whatever it answered. */
export interface OtlpHttpRequest {
  readonly headers: IncomingHttpHeaders;
  /** Spans in the request; 0 when it did not decode. */
  readonly spans: number;
  /** Why the body did not decode; undefined when it did. */
  readonly error?: string;
}

export interface OtlpHttpServerOptions {
  /** Address to listen on; default `127.0.0.1`. */
  readonly host?: string;
  /** Port to listen on; default 0 (any free port). */
  readonly port?: number;
  /** Path of the traces endpoint; default `/v1/traces`. Other paths get 404. */
  readonly path?: string;
  /** Where accepted batches go; default a new one. Pass one to keep recording across restarts. */
  readonly sink?: Sink<'spans'>;
  /** The answer to the request numbered `index` (from 0); default 200. Settable later as `server.answer`. */
  readonly answer?: (index: number) => OtlpHttpAnswer;
}

/** A listening OTLP/HTTP traces endpoint; `startOtlpHttpServer()` makes one. */
export class OtlpHttpServer {
  /** The batches of the requests answered with a 2xx status, each with its tenant. */
  readonly sink: Sink<'spans'>;
  /** Every request in arrival order, including those answered with an error or that did not decode. */
  readonly requests: OtlpHttpRequest[] = [];
  answer: (index: number) => OtlpHttpAnswer;
  readonly host: string;
  private readonly path: string;
  private server: Server | undefined;
  private boundPort = 0;

  constructor(options: OtlpHttpServerOptions = {}) {
    this.host = options.host ?? '127.0.0.1';
    this.boundPort = options.port ?? 0;
    this.path = options.path ?? '/v1/traces';
    this.sink = options.sink ?? new Sink<'spans'>();
    this.answer = options.answer ?? (() => ({ status: 200 }));
  }

  /** The port it listens on (or last listened on, once closed). */
  get port(): number {
    return this.boundPort;
  }

  /** `host:port`, as a load-balancing resolver lists endpoints. */
  get address(): string {
    return `${this.host}:${this.port}`;
  }

  /** The base URL, an OTLP exporter's `endpoint`; the traces endpoint is this plus the path. */
  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  /** Listens on the configured port, or on `port` (e.g. the one it had, to come back after `close()`). */
  async listen(port = this.boundPort): Promise<this> {
    if (this.server) throw new Error('the OTLP/HTTP server is already listening');
    const server = createServer((req, res) => {
      void this.handle(req).then(({ status, headers, body }) => res.writeHead(status, headers).end(body));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    return this;
  }

  /** Stops listening and drops open connections, as a crashed endpoint would. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(
    req: IncomingMessage,
  ): Promise<{ status: number; headers: Record<string, string>; body: Buffer | string }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://otlp.test');
    if (req.method !== 'POST' || url.pathname !== this.path) {
      return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not the traces endpoint' };
    }
    const encoding: OtlpEncoding = req.headers['content-type']?.startsWith('application/json') ? 'json' : 'protobuf';
    let decoded: DecodedTraceRequest | undefined;
    let error: string | undefined;
    try {
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? await gunzipAsync(raw) : raw;
      decoded = encoding === 'json' ? decodeTraceRequestJson(body) : decodeTraceRequestProtobuf(body);
    } catch (cause) {
      error = cause instanceof Error ? cause.message : String(cause);
    }
    const index = this.requests.length;
    this.requests.push({
      headers: req.headers,
      spans: decoded ? countSpans(decoded.batch) : 0,
      ...(error ? { error } : {}),
    });
    const { status, headers } = decoded ? this.answer(index) : { status: 400, headers: {} };
    const answerHeaders = { 'content-type': CONTENT_TYPES[encoding], ...headers };
    if (status < 200 || status > 299) {
      return { status, headers: answerHeaders, body: encodeStatus(encoding, status, error ?? 'scripted failure') };
    }
    await this.sink.consume(decoded!.batch, tenantOf(req.headers));
    return { status, headers: answerHeaders, body: encodeExportResponse(encoding) };
  }
}

/** Starts an OTLP/HTTP traces endpoint on a loopback port; `close()` it in the test's teardown. */
export async function startOtlpHttpServer(options: OtlpHttpServerOptions = {}): Promise<OtlpHttpServer> {
  return new OtlpHttpServer(options).listen();
}

/** The tenant of a request, from the headers the OTLP exporter forwards (`default` project when none). */
function tenantOf(headers: IncomingHttpHeaders): { apiKey?: string; project: string; receiver: string } {
  const first = (value: string | string[] | undefined) =>
    (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
  const apiKey = first(headers['x-api-key']);
  return { ...(apiKey ? { apiKey } : {}), project: first(headers['service-project']) ?? 'default', receiver: 'otlp' };
}
