// The `otlp` receiver: an OTLP/HTTP server for traces. It decodes each export request (protobuf or
// JSON, optionally compressed), attaches the request's key and project, hands the spans to the
// pipeline, and answers only once the pipeline has accepted them — so that a full pipeline turns
// into 429/503 answers that OTLP clients retry, instead of memory that grows.

import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { closeBy, createGuardedServer, listen, listenerUrl, loadServerTls, takeRawBodies } from 'tracepipe/confighttp';
import { countSpans, errorMessage, isPermanent, isThrottle } from 'tracepipe/plugin';
import {
  decodeTraceRequestJson,
  decodeTraceRequestProtobuf,
  OtlpDecodeError,
  CONTENT_TYPES,
  encodeExportResponse,
  encodeStatus,
} from 'tracepipe/otlp';
import type { DecodedTraceRequest, OtlpEncoding, PartialSuccess } from 'tracepipe/otlp';
import {
  BodyAbortedError,
  BodyCodingError,
  BodyTooLargeError,
  DurableIntake,
  IntakeUnavailableError,
  JournalRecordTooLargeError,
  SUPPORTED_CODINGS,
  codingOf,
  journaledTenant,
  readBody,
  replayedContext,
} from 'tracepipe/receiverhelper';
import type { Admission, BodyCoding, JournaledTenant } from 'tracepipe/receiverhelper';
import type {
  ComponentDescription,
  ComponentSettings,
  Consumer,
  Receiver,
  RequestContext,
  ThrottleError,
} from 'tracepipe/plugin';
import type { OtlpReceiverConfig } from './config.ts';
import { OtlpGrpcServer } from './grpc-server.ts';
import { GRPC_RESOURCE_EXHAUSTED, GRPC_UNAVAILABLE, Refusal } from './internal/refusal.ts';
import { BodyBuffers } from './internal/body-buffers.ts';
import { SUPPORTED_CONTENT_TYPES, encodingOf } from './internal/media.ts';
import type { ReceiverMetrics } from './internal/metrics.ts';
import { receiverMetrics } from './internal/metrics.ts';
import { resolveRequestContext } from './internal/request-context.ts';

/** Retry delay for retryable failures that carry no delay of their own, in ms. */
const DEFAULT_RETRY_AFTER_MS = 1000;
/** At most one log line per this interval about refused spans; the metric counts every one. */
const REJECTION_LOG_INTERVAL_MS = 10_000;

/** What the journal keeps of a request besides its (decompressed) body. */
interface JournaledRequest extends JournaledTenant {
  readonly encoding: OtlpEncoding;
}

export class OtlpReceiver implements Receiver {
  private app?: FastifyInstance;
  private readonly intake: DurableIntake<'spans', JournaledRequest>;
  private readonly metrics: ReceiverMetrics;
  private rejectionLog = { at: 0, spans: 0, requests: 0 };
  private grpc?: OtlpGrpcServer;
  private readonly bodyBuffers = new BodyBuffers();
  /** The port actually bound (differs from the config's when it is 0). */
  port?: number;
  /** The OTLP/gRPC port actually bound, when gRPC is enabled. */
  grpcPort?: number;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: OtlpReceiverConfig,
    next: Consumer<'spans'>,
  ) {
    this.metrics = receiverMetrics(settings.telemetry.meter);
    this.intake = new DurableIntake({
      settings,
      dataType: 'spans',
      journal: config.journal,
      memoryLimitBytes: config.memory_limit_bytes,
      next,
      restore: (header, body) => ({
        data: this.decode(header.encoding, body).batch,
        context: replayedContext(header, settings.id),
      }),
    });
  }

  async start(_signal?: AbortSignal): Promise<void> {
    const { config } = this;
    const grpc = config.protocols.grpc;
    // Read before anything opens, so that unusable files fail the start with nothing to undo.
    const grpcTls =
      grpc.enabled && grpc.tls
        ? await loadServerTls(grpc.tls, this.settings.host.resolvePath, 'protocols.grpc.tls')
        : undefined;
    // Before listening: replayed requests are older than anything new.
    await this.intake.start();
    const { app } = await createGuardedServer({
      logger: this.settings.telemetry.logger,
      host: this.settings.host,
      bodyLimit: config.max_body_bytes,
      metricsPath: config.metrics.enabled ? config.metrics.path : false,
      listenHost: config.host,
      allowedHosts: config.allowed_hosts,
      tls: config.tls,
      cors: {
        config: config.cors,
        requirements: {
          methods: ['POST'],
          headers: ['Content-Type', 'Content-Encoding', 'X-API-Key', 'Service-Project'],
        },
      },
      // OTLP answers errors with a Status, encoded as the request was (JSON for a route nobody
      // serves, and for another method than POST on the traces path: 405 with `Allow: POST`).
      sendError: (reply, request, status, message) =>
        this.sendStatus(
          reply,
          status === 404 || status === 405 ? 'json' : (encodingOf(request.headers['content-type']) ?? 'json'),
          status,
          message,
        ),
      notFoundMessage: (request) =>
        `no route for ${request.method} ${request.url.split('?')[0]}; OTLP traces go to POST ${config.traces_path}`,
    });
    this.app = app;
    await app.register(async (scope) => {
      // The body is read by the handler itself, so that it can decompress under a size limit.
      takeRawBodies(scope);
      scope.post(config.traces_path, (request, reply) => this.handleExport(request, reply));
    });
    this.port = await listen(app, config.host, config.port);
    this.settings.telemetry.logger.info(
      { address: `${config.host}:${this.port}`, path: config.traces_path },
      'Receiving OTLP traces.',
    );
    if (grpc.enabled) {
      this.grpc = new OtlpGrpcServer({
        host: grpc.host,
        port: grpc.port,
        maxMessageBytes: grpc.max_message_bytes,
        tls: grpcTls,
        logger: this.settings.telemetry.logger,
        exportRequest: (body, headers) => this.exportGrpc(body, headers),
      });
      try {
        this.grpcPort = await this.grpc.start();
      } catch (error) {
        throw new Error(`cannot listen for OTLP/gRPC on ${grpc.host}:${grpc.port}: ${errorMessage(error)}`, {
          cause: error,
        });
      }
      this.settings.telemetry.logger.info(
        { address: `${grpc.host}:${this.grpcPort}`, tls: grpc.tls !== undefined },
        'Receiving OTLP traces over gRPC.',
      );
    }
  }

  describe(): ComponentDescription {
    const { config } = this;
    if (this.port === undefined) return {};
    const scheme = config.tls ? 'https' : 'http';
    const endpoints = [
      { url: listenerUrl(config.host, this.port, config.traces_path, scheme), purpose: 'OTLP/HTTP traces' },
    ];
    if (this.grpcPort !== undefined) {
      const grpc = config.protocols.grpc;
      const url = listenerUrl(grpc.host, this.grpcPort, '', grpc.tls ? 'https' : 'http').replace(/\/$/, '');
      endpoints.push({ url, purpose: 'OTLP/gRPC traces' });
    }
    if (config.metrics.enabled) {
      endpoints.push({
        url: listenerUrl(config.host, this.port, config.metrics.path, scheme),
        purpose: 'Prometheus metrics',
      });
    }
    return {
      endpoints,
      details: config.journal.enabled ? { journal: this.settings.host.resolvePath(config.journal.directory) } : {},
    };
  }

  async shutdown(deadline: number): Promise<void> {
    const app = this.app;
    this.app = undefined;
    const grpc = this.grpc;
    this.grpc = undefined;
    // Calls in flight finish (until the deadline) before the journal closes.
    await grpc?.shutdown(deadline);
    try {
      if (app) await closeBy(app, deadline);
    } finally {
      await this.intake.shutdown();
    }
  }

  private async handleExport(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const contentType = request.headers['content-type'];
    const encoding = encodingOf(contentType);
    // Errors are answered in the request's encoding when it has a supported one, else in JSON.
    const answerEncoding = encoding ?? 'json';
    try {
      const context = this.requestContext(request.headers, 'X-API-Key header');
      if (encoding === undefined) {
        const got = contentType === undefined ? 'no Content-Type' : `Content-Type ${JSON.stringify(contentType)}`;
        throw new Refusal(415, `unsupported media type: got ${got}; use one of ${SUPPORTED_CONTENT_TYPES.join(', ')}`);
      }
      const contentEncoding = request.headers['content-encoding'];
      const coding = codingOf(contentEncoding);
      if (coding === undefined) {
        throw new Refusal(
          415,
          `unsupported Content-Encoding ${JSON.stringify(contentEncoding)}; use one of ${SUPPORTED_CODINGS.join(', ')}`,
        );
      }
      const declaredLength = Number(request.headers['content-length'] ?? 0);
      if (declaredLength > this.config.max_body_bytes) {
        // Answer before reading: the connection is closed rather than drained.
        throw new Refusal(
          413,
          `request body of ${declaredLength} bytes exceeds the ${this.config.max_body_bytes}-byte limit`,
          { closeConnection: true },
        );
      }
      // Room in the memory bound is taken before the body is read: under overload a request is
      // refused for the cost of reading its headers, instead of piling up decoded in memory.
      const admission = this.admit(declaredLength);
      let decoded: DecodedTraceRequest;
      try {
        const body = await this.readBody(request, coding, admission);
        try {
          // The intake takes the admission over, and releases it once the request is delivered.
          decoded = await this.deliver(encoding, body, context, admission);
        } finally {
          // Journaled and decoded (or refused): nothing reads the body any more.
          this.bodyBuffers.release(body);
        }
      } catch (error) {
        admission.abandon();
        throw error;
      }
      this.metrics.request(encoding, 200);
      return reply
        .code(200)
        .header('content-type', CONTENT_TYPES[encoding])
        .send(encodeExportResponse(encoding, partialSuccess(decoded)));
    } catch (error) {
      if (error instanceof Refusal)
        return this.sendStatus(reply, answerEncoding, error.statusCode, error.message, error.httpHeaders());
      throw error;
    }
  }

  /**
   * One OTLP/gRPC `TraceService/Export` call: its protobuf request as received (gRPC has already
   * decompressed it within `max_message_bytes`) and its metadata as headers. Resolves with the
   * ExportTraceServiceResponse once the pipeline has the spans; throws a Refusal otherwise.
   */
  async exportGrpc(body: Buffer, headers: IncomingHttpHeaders): Promise<Buffer> {
    try {
      const state = this.settings.host.state();
      if (state === 'draining' || state === 'stopped') {
        throw new Refusal(503, 'the service is shutting down, retry later', { retryAfterMs: DEFAULT_RETRY_AFTER_MS });
      }
      const context = this.requestContext(headers, 'x-api-key metadata');
      const admission = this.admit(body.length);
      let decoded: DecodedTraceRequest;
      try {
        decoded = await this.deliver('protobuf', body, context, admission);
      } catch (error) {
        admission.abandon();
        throw error;
      }
      this.metrics.request('grpc', 200);
      return encodeExportResponse('protobuf', partialSuccess(decoded));
    } catch (error) {
      this.metrics.request('grpc', error instanceof Refusal ? error.statusCode : 500);
      throw error;
    }
  }

  /** Who a request is for (its headers, else the defaults); a Refusal (401) when a key is required and missing. */
  private requestContext(headers: IncomingHttpHeaders, keyCarrier: string): RequestContext {
    const context = resolveRequestContext(headers, {
      apiKey: this.config.api_key,
      project: this.config.project,
      receiver: this.settings.id,
    });
    if (context.apiKey === undefined && this.config.require_api_key) {
      throw new Refusal(401, `missing API key: send it in the ${keyCarrier} (or configure a default api_key)`);
    }
    return context;
  }

  private async readBody(request: FastifyRequest, coding: BodyCoding, admission: Admission): Promise<Buffer> {
    try {
      // The memory bound grows with the body as it is read and inflated: a body that will not fit
      // (a gzip bomb under max_body_bytes, a chunked body without Content-Length) is refused with
      // 429 once its decompressed size passes what the bound has room for, not after inflating it.
      return await readBody(request.raw, coding, this.config.max_body_bytes, {
        onGrow: (bytes) => admission.reserveForBody(bytes),
        allocate: (bytes) => this.bodyBuffers.acquire(bytes),
      });
    } catch (error) {
      if (isThrottle(error)) throw pipelineFull(error);
      if (error instanceof BodyTooLargeError) throw new Refusal(413, error.message, { closeConnection: true });
      if (error instanceof BodyCodingError) throw new Refusal(400, error.message);
      if (error instanceof BodyAbortedError) throw new Refusal(400, error.message, { closeConnection: true });
      throw error;
    }
  }

  private decode(encoding: OtlpEncoding, body: Buffer): DecodedTraceRequest {
    try {
      return encoding === 'json' ? decodeTraceRequestJson(body) : decodeTraceRequestProtobuf(body);
    } catch (error) {
      const what = encoding === 'json' ? 'JSON' : 'protobuf';
      if (error instanceof OtlpDecodeError)
        throw new Refusal(400, `malformed ${what} ExportTraceServiceRequest: ${error.message}`);
      // JSON.parse nests by recursion: absurdly deep input overflows the stack, which is still bad input.
      if (error instanceof RangeError)
        throw new Refusal(400, `malformed ${what} ExportTraceServiceRequest: nested too deeply`);
      throw error;
    }
  }

  /** Room for a request in the intake's memory bound, or a 429 answer. */
  private admit(declaredLength: number): Admission {
    try {
      return this.intake.admit(declaredLength);
    } catch (error) {
      if (!isThrottle(error)) throw error;
      throw pipelineFull(error);
    }
  }

  private async deliver(
    encoding: OtlpEncoding,
    body: Buffer,
    context: ReturnType<typeof resolveRequestContext>,
    admission: Admission,
  ): Promise<DecodedTraceRequest> {
    const journaled: JournaledRequest = { encoding, ...journaledTenant(context) };
    let decoded: DecodedTraceRequest | undefined;
    // Called by the intake once the body is journaled; a request without spans is not delivered.
    const decode = () => {
      decoded = this.decode(encoding, body);
      if (decoded.rejected > 0) this.noteRejections(decoded);
      return countSpans(decoded.batch) === 0 ? undefined : decoded.batch;
    };
    try {
      await this.intake.accept(journaled, body, decode, context, admission);
      // accept resolves only after calling decode.
      return decoded!;
    } catch (error) {
      // A malformed body (400) or an unsupported field.
      if (error instanceof Refusal) throw error;
      const message = errorMessage(error);
      if (error instanceof IntakeUnavailableError) {
        throw new Refusal(503, `the proxy cannot store the request now, retry later: ${message}`, {
          retryAfterMs: error.retryAfterMs,
          // At its cap the journal is a resource used up (OTLP/gRPC: RESOURCE_EXHAUSTED, retryable
          // because retry info comes with it); a failing disk is the service being unavailable.
          grpcCode: error.reason === 'journal_full' ? GRPC_RESOURCE_EXHAUSTED : GRPC_UNAVAILABLE,
        });
      }
      if (error instanceof JournalRecordTooLargeError) throw new Refusal(413, message);
      if (isPermanent(error)) throw new Refusal(400, `the pipeline refused the data: ${message}`);
      if (isThrottle(error)) throw pipelineFull(error);
      // Anything unclassified counts as retryable: only PermanentError is a refusal of the data
      // (docs/writing-a-plugin.md, "consume(batch, context)").
      this.settings.telemetry.logger.warn(
        { err: error },
        'The pipeline failed to take a request; the client was asked to retry.',
      );
      throw new Refusal(503, `the pipeline is unavailable, retry later: ${message}`, {
        retryAfterMs: DEFAULT_RETRY_AFTER_MS,
      });
    }
  }

  private noteRejections(decoded: DecodedTraceRequest): void {
    this.metrics.rejectedSpans(decoded.rejected);
    const log = this.rejectionLog;
    log.spans += decoded.rejected;
    log.requests += 1;
    const now = Date.now();
    if (now - log.at < REJECTION_LOG_INTERVAL_MS) return;
    this.settings.telemetry.logger.warn(
      { rejected_spans: log.spans, requests: log.requests, example: decoded.errorMessage },
      'Rejected spans with invalid ids; the clients were told by partial success.',
    );
    this.rejectionLog = { at: now, spans: 0, requests: 0 };
  }

  private sendStatus(
    reply: FastifyReply,
    encoding: OtlpEncoding,
    statusCode: number,
    message: string,
    headers: Record<string, string> = {},
  ): FastifyReply {
    this.metrics.request(encodingOf(reply.request.headers['content-type']) ?? 'other', statusCode);
    return reply
      .code(statusCode)
      .headers(headers)
      .header('content-type', CONTENT_TYPES[encoding])
      .send(encodeStatus(encoding, statusCode, message));
  }
}

/** The partial success an export answer reports, when spans were rejected. */
function partialSuccess(decoded: DecodedTraceRequest): PartialSuccess | undefined {
  return decoded.rejected > 0
    ? { rejectedSpans: decoded.rejected, errorMessage: decoded.errorMessage ?? '' }
    : undefined;
}

/** The 429 answer to a ThrottleError: the client retries after the error's delay. */
function pipelineFull(error: ThrottleError): Refusal {
  return new Refusal(429, `the pipeline is full, retry later: ${errorMessage(error)}`, {
    retryAfterMs: error.retryAfterMs,
  });
}
