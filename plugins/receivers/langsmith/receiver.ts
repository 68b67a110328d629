// The `langsmith` receiver: the tracing backend's ingest API, as the LangSmith SDKs (JS and Python)
// call it when LANGSMITH_ENDPOINT points here — `POST /runs/multipart`, `POST /runs/batch`,
// `POST /runs`, `PATCH /runs/{id}` and `GET /info`. Runs enter the pipeline as runs. Each request
// is read under a size limit that also bounds its decompression (gzip, zstd), turned into runs,
// journaled and handed to the pipeline; it is answered 202 only once that is done. A bad part or
// run is answered 4xx, named, while the other runs of the request are still taken.

import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {
  ComponentDescription,
  ComponentSettings,
  Consumer,
  Receiver,
  RequestContext,
  Run,
} from 'tracepipe/plugin';
import { closeBy, createGuardedServer, listen, listenerUrl, sendHttpError, takeRawBodies } from 'tracepipe/confighttp';
import { errorMessage, isPermanent, isThrottle } from 'tracepipe/plugin';
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
  utf8Text,
} from 'tracepipe/receiverhelper';
import type { Admission, JournaledTenant } from 'tracepipe/receiverhelper';
import type { LangSmithReceiverConfig } from './config.ts';
import { MultipartError, boundaryOf, splitMultipart } from './internal/multipart.ts';
import type { Assembled, Operation, Problem } from './internal/runs.ts';
import { runsFromJson, runsFromParts } from './internal/runs.ts';

/** An answer other than 202, with its status and JSON body. */
class Answer extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const RETRY_AFTER_DEFAULT_MS = 1000;

export class LangSmithReceiver implements Receiver {
  private app?: FastifyInstance;
  private readonly intake: DurableIntake<'runs', JournaledTenant>;
  port?: number;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: LangSmithReceiverConfig,
    next: Consumer<'runs'>,
  ) {
    this.intake = new DurableIntake({
      settings,
      dataType: 'runs',
      journal: config.journal,
      memoryLimitBytes: config.memory_limit_bytes,
      next,
      restore: (header, body) => ({
        data: { runs: (JSON.parse(utf8Text(body)) as { runs: Run[] }).runs },
        context: replayedContext(header, settings.id),
      }),
    });
  }

  async start(_signal?: AbortSignal): Promise<void> {
    const { config } = this;
    await this.intake.start();
    const { app } = await createGuardedServer({
      logger: this.settings.telemetry.logger,
      host: this.settings.host,
      bodyLimit: config.max_body_bytes,
      metricsPath: false,
      listenHost: config.host,
      allowedHosts: config.allowed_hosts,
      tls: config.tls,
    });
    this.app = app;
    app.get('/info', async () => this.info());
    await app.register(async (scope) => {
      // Bodies are read by the handlers, under the size and decompression limits.
      takeRawBodies(scope);
      scope.post('/runs/multipart', (request, reply) =>
        this.handle(request, reply, 'multipart', (body, project) => {
          const boundary = boundaryOf(request.headers['content-type'])!;
          try {
            return runsFromParts(splitMultipart(body, boundary), config.max_part_bytes, project);
          } catch (error) {
            if (error instanceof MultipartError) throw new Answer(400, `malformed multipart body: ${error.message}`);
            throw error;
          }
        }),
      );
      scope.post('/runs/batch', (request, reply) =>
        this.handle(request, reply, 'json', (body, project) => {
          const value = parseJson(body);
          if (typeof value !== 'object' || value === null || Array.isArray(value))
            throw new Answer(400, 'expected a JSON object {"post": [...], "patch": [...]}');
          const items: { operation: Operation; where: string; value: unknown }[] = [];
          for (const operation of ['post', 'patch'] as const) {
            const list = (value as Record<string, unknown>)[operation] ?? [];
            if (!Array.isArray(list)) throw new Answer(400, `"${operation}" must be an array of runs`);
            list.forEach((item, index) => items.push({ operation, where: `${operation}[${index}]`, value: item }));
          }
          return runsFromJson(items, project);
        }),
      );
      scope.post('/runs', (request, reply) =>
        this.handle(request, reply, 'json', (body, project) =>
          runsFromJson([{ operation: 'post', where: 'body', value: parseJson(body) }], project),
        ),
      );
      scope.patch('/runs/:id', (request, reply) =>
        this.handle(request, reply, 'json', (body, project) => {
          const value = parseJson(body);
          const id = (request.params as { id: string }).id;
          const withId = typeof value === 'object' && value !== null ? { ...value, id } : value;
          return runsFromJson([{ operation: 'patch', where: `run ${id}`, value: withId }], project);
        }),
      );
    });
    this.port = await listen(app, config.host, config.port);
    this.settings.telemetry.logger.info({ address: `${config.host}:${this.port}` }, 'Receiving LangSmith SDK runs.');
  }

  describe(): ComponentDescription {
    if (this.port === undefined) return {};
    const url = listenerUrl(this.config.host, this.port, '', this.config.tls ? 'https' : 'http').replace(/\/$/, '');
    return {
      endpoints: [{ url, purpose: 'LangSmith SDK ingest (LANGSMITH_ENDPOINT)' }],
      details: this.config.journal.enabled
        ? { journal: this.settings.host.resolvePath(this.config.journal.directory) }
        : {},
    };
  }

  async shutdown(deadline: number): Promise<void> {
    const app = this.app;
    this.app = undefined;
    try {
      if (app) await closeBy(app, deadline);
    } finally {
      await this.intake.shutdown();
    }
  }

  /** What the SDKs read before they batch: the batch limits, and the compressions this server takes. */
  private info() {
    return {
      version: 'tracepipe',
      instance_flags: { gzip_body_enabled: true, zstd_compression_enabled: true },
      batch_ingest_config: {
        use_multipart_endpoint: true,
        size_limit: this.config.batch_size_limit,
        size_limit_bytes: this.config.batch_size_limit_bytes,
        scale_up_qsize_trigger: 1000,
        scale_up_nthreads_limit: 16,
        scale_down_nempty_trigger: 4,
      },
    };
  }

  private async handle(
    request: FastifyRequest,
    reply: FastifyReply,
    expected: 'json' | 'multipart',
    assemble: (body: Buffer, project: string) => Assembled,
  ): Promise<FastifyReply> {
    try {
      const context = this.requestContext(request.headers);
      // Checked before the body is read: a client that sends the wrong kind learns it at once.
      checkContentType(request.headers['content-type'], expected);
      const contentEncoding = request.headers['content-encoding'];
      const coding = codingOf(contentEncoding);
      if (coding === undefined)
        throw new Answer(
          415,
          `unsupported Content-Encoding ${JSON.stringify(contentEncoding)}; use one of ${SUPPORTED_CODINGS.join(', ')}`,
        );
      const declared = Number(request.headers['content-length'] ?? 0);
      if (declared > this.config.max_body_bytes)
        throw new Answer(
          413,
          `request body of ${declared} bytes exceeds the ${this.config.max_body_bytes}-byte limit`,
          {},
          { connection: 'close' },
        );
      const admission = this.admit(declared);
      let assembled: Assembled;
      try {
        const body = await this.readBody(request, coding, admission);
        assembled = assemble(body, context.project);
        if (assembled.runs.length > 0) await this.deliver(assembled.runs, context, admission);
        else admission.abandon();
      } catch (error) {
        admission.abandon();
        throw error;
      }
      if (assembled.problems.length > 0) throw refusedParts(assembled.problems, assembled.runs.length);
      return reply.code(202).send({ message: 'accepted', runs: assembled.runs.length });
    } catch (error) {
      if (error instanceof Answer) return this.send(reply, error);
      throw error;
    }
  }

  private requestContext(headers: IncomingHttpHeaders): RequestContext {
    const apiKey = header(headers['x-api-key']) || this.config.api_key || undefined;
    if (apiKey === undefined && this.config.require_api_key)
      throw new Answer(
        401,
        'missing API key: send it in the X-API-Key header (LANGSMITH_API_KEY), or configure a default api_key',
      );
    const project = header(headers['langsmith-project']) || this.config.project;
    return { project, receiver: this.settings.id, ...(apiKey ? { apiKey } : {}) };
  }

  private admit(declared: number): Admission {
    try {
      return this.intake.admit(declared);
    } catch (error) {
      if (isThrottle(error)) throw throttled(error.retryAfterMs, errorMessage(error));
      throw error;
    }
  }

  private async readBody(
    request: FastifyRequest,
    coding: Parameters<typeof readBody>[1],
    admission: Admission,
  ): Promise<Buffer> {
    try {
      return await readBody(request.raw, coding, this.config.max_body_bytes, {
        onGrow: (bytes) => admission.reserveForBody(bytes),
      });
    } catch (error) {
      if (isThrottle(error)) throw throttled(error.retryAfterMs, errorMessage(error));
      if (error instanceof BodyTooLargeError) throw new Answer(413, error.message, {}, { connection: 'close' });
      if (error instanceof BodyCodingError) throw new Answer(400, error.message);
      if (error instanceof BodyAbortedError) throw new Answer(400, error.message, {}, { connection: 'close' });
      throw error;
    }
  }

  /** Journals the runs (as JSON) and hands them to the pipeline; resolves once both are done. */
  private async deliver(runs: Run[], context: RequestContext, admission: Admission): Promise<void> {
    // What the journal keeps of a request besides its runs (as JSON).
    const journaled = journaledTenant(context);
    const body = Buffer.from(JSON.stringify({ runs }));
    try {
      await this.intake.accept(journaled, body, () => ({ runs }), context, admission);
    } catch (error) {
      const message = errorMessage(error);
      if (error instanceof IntakeUnavailableError)
        throw new Answer(
          503,
          `cannot store the request now, retry later: ${message}`,
          {},
          retryAfter(error.retryAfterMs),
        );
      if (error instanceof JournalRecordTooLargeError) throw new Answer(413, message);
      if (isPermanent(error)) throw new Answer(422, `the pipeline refused the runs: ${message}`);
      if (isThrottle(error)) throw throttled(error.retryAfterMs, message);
      this.settings.telemetry.logger.warn(
        { err: error },
        'The pipeline failed to take a request; the client was asked to retry.',
      );
      throw new Answer(
        503,
        `the pipeline is unavailable, retry later: ${message}`,
        {},
        retryAfter(RETRY_AFTER_DEFAULT_MS),
      );
    }
  }

  private send(reply: FastifyReply, answer: Answer): FastifyReply {
    return sendHttpError(reply, answer.statusCode, answer.message, { fields: answer.extra, headers: answer.headers });
  }
}

/** 413 when every refused part was too large, else 422; the body names each part and counts what was kept. */
function refusedParts(problems: Problem[], acceptedRuns: number): Answer {
  const status = problems.every((problem) => problem.tooLarge) ? 413 : 422;
  const list = problems.map((problem) => `${problem.part}: ${problem.message}`).join('; ');
  return new Answer(
    status,
    `${problems.length} part(s) refused (${list}); the other ${acceptedRuns} run(s) were accepted`,
    {
      refused: problems.map(({ part, message }) => ({ part, message })),
      accepted_runs: acceptedRuns,
    },
  );
}

/**
 * The JSON endpoints take `application/json` (or any `+json` type, or none: a body is JSON by
 * default); `/runs/multipart` needs `multipart/form-data` with its boundary.
 */
function checkContentType(contentType: string | undefined, expected: 'json' | 'multipart'): void {
  if (expected === 'multipart') {
    if (!boundaryOf(contentType))
      throw new Answer(
        415,
        `expected Content-Type multipart/form-data with a boundary, not ${JSON.stringify(contentType ?? '')}`,
      );
    return;
  }
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== '' && mediaType !== 'application/json' && !mediaType.endsWith('+json'))
    throw new Answer(415, `expected Content-Type application/json, not ${JSON.stringify(contentType)}`);
}

function throttled(retryAfterMs: number, message: string): Answer {
  return new Answer(429, `the pipeline is full, retry later: ${message}`, {}, retryAfter(retryAfterMs));
}

function retryAfter(ms: number): Record<string, string> {
  return { 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))) };
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(utf8Text(body));
  } catch (error) {
    throw new Answer(400, `malformed JSON body: ${errorMessage(error)}`);
  }
}

function header(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value)?.trim() ?? '';
}
