// The `otlp` receiver's gRPC listener: `opentelemetry.proto.collector.trace.v1.TraceService/Export`
// on @grpc/grpc-js. It is transport only. A request's bytes are kept as received — the method is
// declared with pass-through (de)serializers, so no protobuf runtime decodes them here — and handed
// with the call's metadata to the receiver, which journals, decodes and delivers them exactly as it
// does an OTLP/HTTP protobuf body. What comes back is the encoded ExportTraceServiceResponse, or a
// refusal that this module turns into a gRPC status, with google.rpc.RetryInfo in
// `grpc-status-details-bin` when the client may retry (the OTLP specification's "retryable
// RESOURCE_EXHAUSTED" and "UNAVAILABLE"). gzip and deflate request compression, and the size limit
// after decompression, are grpc-js's own. HTTP/2's flow-control windows are raised (`widenWindows`).

import type { IncomingHttpHeaders } from 'node:http';
import type { Http2Server, Http2Session } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import type { ServerTls } from 'tracepipe/confighttp';
import { errorMessage } from 'tracepipe/plugin';
import type { TelemetrySettings } from 'tracepipe/plugin';
import { Refusal } from './internal/refusal.ts';

export const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/**
 * HTTP/2 flow-control windows: how many bytes a client may send on one call, and on one
 * connection, before it waits for this server's WINDOW_UPDATE. HTTP/2's default, which grpc-js's
 * server keeps (it has no option for it), is 64 KiB for both: a 128 KB export waited for two round
 * trips, and on loopback the proxy took 8.6k–9.2k spans/s over gRPC at 87–90 µs of CPU a span
 * against 12.8k–15.0k at 66–71 with these (README, "OTLP/gRPC"). grpc-java's server starts at 1 MiB;
 * grpc-go's grows to 16 MiB. A wider window costs no memory of its own: grpc-js reads every call's
 * bytes as they come, up to `max_message_bytes`, whatever the window.
 */
export const STREAM_WINDOW_BYTES = 4 * 1024 * 1024;
export const CONNECTION_WINDOW_BYTES = 16 * 1024 * 1024;

const identity = (bytes: Buffer): Buffer => bytes;

/**
 * The TraceService with its one method; requests and responses stay encoded protobuf bytes (the
 * tests' raw client, `testing/grpc-client.ts`, speaks it too).
 */
export const traceService: grpc.ServiceDefinition = {
  Export: {
    path: EXPORT_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

export interface GrpcServerOptions {
  readonly host: string;
  readonly port: number;
  /** Largest request message, after decompression; larger ones get RESOURCE_EXHAUSTED from grpc-js. */
  readonly maxMessageBytes: number;
  /** Loaded with `loadServerTls`, as the HTTP listener's; undefined: plaintext. */
  readonly tls?: ServerTls;
  readonly logger: TelemetrySettings['logger'];
  /** Takes one request: resolves with the response bytes, or rejects (a Refusal, or a failure of ours). */
  readonly exportRequest: (body: Buffer, headers: IncomingHttpHeaders) => Promise<Buffer>;
}

export class OtlpGrpcServer {
  private server?: grpc.Server;
  /** The port bound (differs from the configured one when that is 0). */
  port?: number;

  constructor(private readonly options: GrpcServerOptions) {}

  async start(): Promise<number> {
    const { options } = this;
    const server = new grpc.Server({
      'grpc.max_receive_message_length': options.maxMessageBytes,
      // The answers are tiny; this only keeps a bug from sending a huge one.
      'grpc.max_send_message_length': 4 * 1024 * 1024,
    });
    widenWindows(server, options.logger);
    server.addService(traceService, {
      Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
        void this.handle(call, callback),
    });
    const credentials = options.tls ? new TlsServerCredentials(options.tls) : grpc.ServerCredentials.createInsecure();
    const address = `${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`;
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, credentials, (error, port) => (error ? reject(error) : resolve(port))),
    );
    this.server = server;
    return this.port;
  }

  /** Stops taking calls and waits for those in flight until the deadline; then cuts them. */
  async shutdown(deadline: number): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      timer = setTimeout(
        () => {
          server.forceShutdown();
          resolve();
        },
        Math.max(0, deadline - Date.now()),
      );
      server.tryShutdown(() => resolve());
    });
    clearTimeout(timer);
  }

  private async handle(call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) {
    try {
      callback(null, await this.options.exportRequest(call.request, metadataHeaders(call.metadata)));
    } catch (error) {
      if (error instanceof Refusal) {
        callback(grpcStatus(error.grpcCode, error.message, error.retryAfterMs));
        return;
      }
      this.options.logger.error({ err: error, method: EXPORT_PATH }, 'Request failed.');
      callback(grpcStatus(grpc.status.INTERNAL, errorMessage(error)));
    }
  }
}

/**
 * Raises the flow-control windows (STREAM_WINDOW_BYTES, CONNECTION_WINDOW_BYTES) of the HTTP/2
 * servers grpc-js makes for `server`, through Node's public HTTP/2 API: the server's initial
 * SETTINGS, and each session's own window as it starts. grpc-js makes its servers
 * in a private method, `createHttp2Server`, wrapped here on this instance; an open pull request
 * (grpc/grpc-node#3058) would give the server an option instead. Should a grpc-js version lack
 * the method, the windows stay at HTTP/2's default and a warning says so (`grpc.test.ts`
 * checks the windows a client is given).
 */
function widenWindows(server: grpc.Server, logger: TelemetrySettings['logger']): void {
  const internals = server as unknown as { createHttp2Server?: (credentials: unknown) => Http2Server };
  const create = internals.createHttp2Server;
  if (typeof create !== 'function') {
    logger.warn(
      'grpc-js makes its HTTP/2 servers in a way this version does not know: flow-control windows stay at 64 KiB.',
    );
    return;
  }
  internals.createHttp2Server = (credentials) => {
    const http2Server = create.call(server, credentials);
    http2Server.updateSettings({ initialWindowSize: STREAM_WINDOW_BYTES });
    // As Node's documentation does it: at once, so that the first DATA frames find the window.
    http2Server.on('session', (session: Http2Session) => session.setLocalWindowSize(CONNECTION_WINDOW_BYTES));
    return http2Server;
  };
}

/**
 * Server credentials from the same TLS settings as the HTTP listener's. grpc-js's `createSsl` takes
 * no minimum TLS version; its credentials are a pair of option sets that grpc-js spreads into
 * `http2.createSecureServer`, so these hand it Node's own (`minVersion` included) — the form its
 * constructor is public for.
 */
class TlsServerCredentials extends grpc.ServerCredentials {
  constructor(tls: ServerTls) {
    super(
      { requestCert: tls.requestCert, rejectUnauthorized: tls.rejectUnauthorized },
      { cert: tls.cert, key: tls.key, ...(tls.ca ? { ca: tls.ca } : {}), minVersion: tls.minVersion },
    );
  }

  _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }
}

/**
 * The call's metadata as the HTTP headers the receiver reads (`x-api-key`, `service-project`):
 * gRPC metadata keys are lower-case header names already. Binary (`-bin`) entries are left out.
 */
function metadataHeaders(metadata: grpc.Metadata): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === 'string') headers[key] = value;
  }
  return headers;
}

function grpcStatus(code: grpc.status, message: string, retryAfterMs?: number): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  if (retryAfterMs !== undefined)
    metadata.set('grpc-status-details-bin', encodeStatusWithRetryInfo(code, message, retryAfterMs));
  return { code, details: message, metadata };
}

/**
 * google.rpc.Status { code, message, details: [Any(google.rpc.RetryInfo { retry_delay })] }, the
 * `grpc-status-details-bin` trailer that tells OTLP/gRPC clients how long to wait. Written by hand:
 * three nested messages of one to three fields each do not justify a protobuf runtime and its
 * generated code (the request path has none either).
 */
export function encodeStatusWithRetryInfo(code: number, message: string, retryAfterMs: number): Buffer {
  const seconds = Math.floor(retryAfterMs / 1000);
  const nanos = (retryAfterMs % 1000) * 1_000_000;
  const duration = Buffer.concat([
    seconds > 0 ? Buffer.concat([tag(1, 0), varint(seconds)]) : Buffer.alloc(0),
    nanos > 0 ? Buffer.concat([tag(2, 0), varint(nanos)]) : Buffer.alloc(0),
  ]);
  const retryInfo = lengthDelimited(1, duration);
  const any = Buffer.concat([
    lengthDelimited(1, Buffer.from('type.googleapis.com/google.rpc.RetryInfo')),
    lengthDelimited(2, retryInfo),
  ]);
  return Buffer.concat([
    tag(1, 0),
    varint(code),
    lengthDelimited(2, Buffer.from(message, 'utf8')),
    lengthDelimited(3, any),
  ]);
}

function tag(field: number, wireType: number): Buffer {
  return varint((field << 3) | wireType);
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function lengthDelimited(field: number, bytes: Buffer): Buffer {
  return Buffer.concat([tag(field, 2), varint(bytes.length), bytes]);
}
