// The example `ndjson` receiver: `POST /v1/spans` with one span per line (spans.ts), answered 202
// only once the request is in the journal and the pipeline has taken it. Everything that makes
// "accepted" mean "kept" is `DurableIntake`'s (tracepipe/receiverhelper): the memory limit, the
// journal, settlement through the request's delivery and the replay after a crash. The receiver's
// own part is the contract docs/writing-a-plugin.md states ("A receiver that journals"): admit
// before reading, read bounded, journal what it decodes from, answer after `accept`, shut down in
// order.

import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { closeBy, createGuardedServer, listen, sendHttpError, takeRawBodies } from 'tracepipe/confighttp';
import type { GuardedServer } from 'tracepipe/confighttp';
import type {
  ComponentDescription,
  ComponentSettings,
  Consumer,
  Receiver,
  RequestContext,
  SpanBatch,
} from 'tracepipe/plugin';
import { CodedError, countSpans, errorMessage, isPermanent, isThrottle } from 'tracepipe/plugin';
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
import type { Admission, JournaledTenant } from 'tracepipe/receiverhelper';
import type { NdjsonReceiverConfig } from './config.ts';
import {
  BodyTooLargeAnswer,
  InvalidSpansError,
  ThrottledError,
  UnavailableError,
  UnsupportedMediaError,
} from './errors.ts';
import { decodeSpans } from './spans.ts';

/**
 * What the journal keeps beside a request's body: its tenant, and the service name its spans are
 * decoded under — everything `restore` needs to rebuild the same batch after a restart.
 */
interface JournalHeader extends JournaledTenant {
  readonly serviceName: string;
}

/** Retry-After of a 503 whose cause names no delay (the pipeline failed to take the request). */
const RETRY_AFTER_DEFAULT_MS = 1000;

/** A refusal with the headers it is answered with (Retry-After). */
interface Refusal {
  readonly error: CodedError;
  readonly headers?: Record<string, string>;
}

export class NdjsonReceiver implements Receiver {
  private readonly intake: DurableIntake<'spans', JournalHeader>;
  private app?: GuardedServer['app'];
  /** The port listened on once started (the configured one, or the one picked for port 0). */
  port?: number;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: NdjsonReceiverConfig,
    next: Consumer<'spans'>,
  ) {
    this.intake = new DurableIntake({
      settings,
      dataType: 'spans',
      journal: config.journal,
      memoryLimitBytes: config.memory_limit_bytes,
      next,
      // The same bytes and header give the same batch: decoding reads nothing else.
      restore: (header, body) => ({
        data: decodeSpans(body, header.serviceName),
        context: replayedContext(header, settings.id),
      }),
    });
  }

  async start(): Promise<void> {
    const { config, settings } = this;
    // Before listening: what an earlier run acknowledged but did not deliver is replayed first.
    await this.intake.start();
    const { app } = await createGuardedServer({
      logger: settings.telemetry.logger,
      host: settings.host,
      bodyLimit: config.max_body_bytes,
      metricsPath: false,
      listenHost: config.host,
      allowedHosts: config.allowed_hosts,
    });
    this.app = app;
    await app.register(async (scope) => {
      // The handler reads the body itself, bounded as sent and decompressed.
      takeRawBodies(scope);
      scope.post('/v1/spans', async (request, reply) => {
        try {
          const spans = await this.receive(request.headers, request.raw);
          return await reply.code(202).send({ message: 'accepted', spans });
        } catch (error) {
          const { error: coded, headers } = this.refusal(error);
          return sendHttpError(reply, coded.statusCode, coded.message, { fields: { code: coded.code }, headers });
        }
      });
    });
    this.port = await listen(app, config.host, config.port);
    settings.telemetry.logger.info({ address: `${config.host}:${this.port}` }, 'Receiving NDJSON spans.');
  }

  describe(): ComponentDescription {
    if (this.port === undefined) return {};
    const host = ['0.0.0.0', '::', ''].includes(this.config.host) ? '127.0.0.1' : this.config.host;
    return {
      endpoints: [
        { url: `http://${host.includes(':') ? `[${host}]` : host}:${this.port}/v1/spans`, purpose: 'NDJSON spans' },
      ],
    };
  }

  /** Stops accepting first, then closes the intake: what is undelivered stays in the journal. */
  async shutdown(deadline: number): Promise<void> {
    const app = this.app;
    this.app = undefined;
    try {
      if (app) await closeBy(app, deadline);
    } finally {
      await this.intake.shutdown();
    }
  }

  /** Takes one request; resolves with its span count once it may be acknowledged. */
  private async receive(headers: IncomingHttpHeaders, raw: IncomingMessage): Promise<number> {
    const context = this.requestContext(headers);
    const mediaType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (mediaType !== '' && mediaType !== 'application/x-ndjson')
      throw new UnsupportedMediaError([`expected Content-Type application/x-ndjson, not ${JSON.stringify(mediaType)}`]);
    const coding = codingOf(headers['content-encoding']);
    if (coding === undefined)
      throw new UnsupportedMediaError([
        `unsupported Content-Encoding ${JSON.stringify(headers['content-encoding'])}; use one of ${SUPPORTED_CODINGS.join(', ')}`,
      ]);
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > this.config.max_body_bytes)
      throw new BodyTooLargeAnswer([
        `a body of ${declared} bytes exceeds the ${this.config.max_body_bytes}-byte limit`,
      ]);
    // Admitted before the body is read: an overloaded process refuses for the cost of the headers.
    const admission: Admission = this.intake.admit(declared);
    let body: Buffer;
    try {
      body = await readBody(raw, coding, this.config.max_body_bytes, {
        onGrow: (bytes) => admission.reserveForBody(bytes),
      });
    } catch (error) {
      admission.abandon();
      throw error;
    }
    const header: JournalHeader = { ...journaledTenant(context), serviceName: this.serviceName(headers) };
    let spans = 0;
    const decode = (): SpanBatch | undefined => {
      const batch = decodeSpans(body, header.serviceName);
      spans = countSpans(batch);
      return spans > 0 ? batch : undefined;
    };
    // Journaled, then decoded and handed on; resolves once the pipeline has taken it.
    await this.intake.accept(header, body, decode, context, admission);
    return spans;
  }

  private requestContext(headers: IncomingHttpHeaders): RequestContext {
    const apiKey = first(headers['x-api-key']);
    return {
      project: first(headers['x-project']) || this.config.project,
      receiver: this.settings.id,
      ...(apiKey ? { apiKey } : {}),
    };
  }

  private serviceName(headers: IncomingHttpHeaders): string {
    return first(headers['x-service-name']) || this.config.service_name;
  }

  /** The answer to what `receive` threw, by the contract's table. */
  private refusal(error: unknown): Refusal {
    const message = errorMessage(error);
    if (error instanceof CodedError) return { error };
    if (error instanceof BodyTooLargeError || error instanceof JournalRecordTooLargeError)
      return { error: new BodyTooLargeAnswer([message]), headers: { connection: 'close' } };
    if (error instanceof BodyCodingError || error instanceof BodyAbortedError)
      return { error: new InvalidSpansError([message]) };
    if (error instanceof IntakeUnavailableError)
      return { error: new UnavailableError([message]), headers: retryAfter(error.retryAfterMs) };
    if (isThrottle(error)) return { error: new ThrottledError([message]), headers: retryAfter(error.retryAfterMs) };
    if (isPermanent(error)) return { error: new InvalidSpansError([`the pipeline refused the spans: ${message}`]) };
    this.settings.telemetry.logger.warn(
      { err: error },
      'The pipeline failed to take a request; the client was asked to retry.',
    );
    return { error: new UnavailableError([message]), headers: retryAfter(RETRY_AFTER_DEFAULT_MS) };
  }
}

function retryAfter(ms: number): Record<string, string> {
  return { 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))) };
}

function first(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value)?.trim() ?? '';
}
