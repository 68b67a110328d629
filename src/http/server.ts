// The HTTP server pieces shared by every HTTP receiver (`otlp`, `agent_api`) and the explorer: a
// Fastify instance with the process's health and metrics routes, connections left clean after
// every answer, the listen/close lifecycle, and the schema fragment for `host`/`port` config keys.

import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import type { Host } from '../pipeline/component.ts';
import { lazyValidatorFactory } from './lazy-validators.ts';
import type { ServerTls } from './tls.ts';

/** Schema fragment for a listener's config: `host` and `port` (0 picks a free port). */
export function listenerSchema(defaultPort: number) {
  return {
    host: { type: 'string', default: '127.0.0.1', description: 'Address to listen on; 0.0.0.0 for all interfaces.' },
    port: {
      type: 'integer',
      minimum: 0,
      maximum: 65535,
      default: defaultPort,
      description: 'TCP port; 0 picks a free one.',
    },
  } as const;
}

export interface HttpServerOptions {
  readonly logger: Logger;
  readonly host: Host;
  /** Largest request body accepted, in bytes (Fastify answers 413 above it). */
  readonly bodyLimit: number;
  /** Serve `GET /metrics` (Prometheus text) on this server. */
  readonly metricsPath?: string | false;
  readonly fastify?: Omit<FastifyServerOptions, 'logger' | 'loggerInstance' | 'bodyLimit'>;
  /** Serve HTTPS with these (`loadServerTls` reads them from a `tls` config block); absent: HTTP. */
  readonly tls?: ServerTls;
  /**
   * Why the receiver cannot serve now although the service runs (its database is unreachable),
   * or undefined when it can: `/ready` answers 503 with the reason meanwhile. Should be cheap.
   */
  readonly notReady?: () => Promise<string | undefined>;
}

/** A Fastify instance with `GET /live`, `GET /ready` and (optionally) the metrics route. */
export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  // Fastify's overloads cannot tell from spread options which server they make (they infer an
  // HTTP/2 one) and type the instance by its pino logger; it is the default HTTP/1 server, and
  // the rest of the code takes it as the default FastifyInstance, which no overload returns.
  const app = Fastify({
    // Each route's schemas compile on its first request, not all of them before listening; a JSON
    // body's validator does not convert types (query strings' do): lazy-validators.ts.
    schemaController: { compilersFactory: { buildValidator: lazyValidatorFactory() } },
    ...(options.fastify as FastifyServerOptions),
    // A child of its own, so that `listen` can quieten Fastify's lines without touching the
    // component's logger. Typed as Fastify's base logger: given as pino's, the options' own
    // function types (rewriteUrl, childLoggerFactory) would ask for pino where Fastify passes its
    // base logger, and no overload matches.
    loggerInstance: options.logger.child({}) as unknown as FastifyBaseLogger,
    // Per-request events are metrics, never log lines.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit,
    // Requests are answered by routes; a client that stops sending should not hold a socket forever.
    requestTimeout: 120_000,
    // Answered by the hook below instead, with the Retry-After that clients need to come back.
    return503OnClosing: false,
    ...(options.tls ? { https: { ...options.tls } } : {}),
  }) as unknown as FastifyInstance;
  refuseWhileStopping(app, options.host, options.metricsPath ?? '/metrics');
  settleUnreadBodies(app);
  registerHealthRoutes(app, options.host, options.metricsPath ?? '/metrics', options.notReady);
  return app;
}

/**
 * Once the service drains, a new request (on a connection still open) is answered 503 with
 * `Retry-After` and `Connection: close`, so that a client retries elsewhere or after the restart;
 * requests already in flight finish. `/live`, `/ready` and the metrics path keep answering.
 */
function refuseWhileStopping(app: FastifyInstance, host: Host, metricsPath: string | false): void {
  app.addHook('onRequest', async (request, reply) => {
    const state = host.state();
    if (state !== 'draining' && state !== 'stopped') return;
    const path = request.url.split('?')[0];
    if (path === '/live' || path === '/ready' || path === metricsPath) return;
    return reply
      .code(503)
      .headers({ 'retry-after': String(STOPPING_RETRY_AFTER_S), connection: 'close' })
      .send({ code: 14, message: 'the server is shutting down; retry later' });
  });
}

/**
 * Once a request is answered, whatever its route left of the body is read and discarded, so that
 * the connection is clean for the client's next request. A route that answers before it has read
 * the whole body (a refused media type, a gzip header on a body that is not gzip, a decoder that
 * failed half-way) leaves the rest on the socket, paused; Node discards it only when no one began
 * reading, so on a kept-alive connection the next request waited behind it, unparsed, forever.
 *
 * Reading the rest is done only where it is cheap, as Go's net/http does (`maxPostHandlerReadBytes`):
 * when the rest may be larger than `DISCARD_ALLOWANCE_BYTES` (its `Content-Length` is, or it has
 * none: a chunked body without end), the answer closes the connection (`Connection: close`) and
 * the rest is never read. Refusals for want of capacity (429) of smaller bodies keep the
 * connection: closing them too was measured under an open overload, and the reconnections cost
 * the proxy more CPU per accepted span than reading the bodies (bench/pipeline/README.md).
 *
 * A 413 is the exception, up to `TOO_LARGE_DISCARD_BYTES` declared: it is the one refusal a
 * client must read to stop resending the body, and a server that closes while the client is still
 * sending leaves unread bytes in its socket, so the kernel answers them with a reset, which can
 * reach the client before the answer does (Node's fetch then fails with EPIPE, and the LangGraph
 * SDK reported "Unable to connect" for a body over `max_body_bytes`). The answer still leaves at
 * once, and the rest of the body is read and discarded after it.
 */
function settleUnreadBodies(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const body = request.raw;
    if (body.complete || body.destroyed) return payload;
    const declared = Number(body.headers['content-length'] ?? Number.NaN);
    if (reply.statusCode === 413 && declared <= TOO_LARGE_DISCARD_BYTES) {
      // Fastify asks to close after a body over its limit; read the rest instead (below).
      reply.removeHeader('connection');
      return payload;
    }
    if (reply.getHeader('connection') === 'close') return payload;
    if (declared <= DISCARD_ALLOWANCE_BYTES) return payload; // false without Content-Length
    // A route may answer from the headers before Node has parsed the body bytes that came with
    // them: one turn of the event loop, and what has arrived is parsed.
    await new Promise(setImmediate);
    if (!body.complete && !body.destroyed) reply.header('connection', 'close');
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const body = request.raw;
    if (body.complete || body.destroyed || reply.getHeader('connection') === 'close') return;
    const allowance = reply.statusCode === 413 ? TOO_LARGE_DISCARD_BYTES : DISCARD_ALLOWANCE_BYTES;
    let discarded = 0;
    body.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      // Only a client sending more than it declared gets here.
      if (discarded > allowance) body.socket.destroy();
    });
    body.resume();
  });
}

/**
 * The most of an unread body the server reads and discards to keep its connection: Go's net/http's
 * figure, about what a socket's buffers hold anyway.
 */
const DISCARD_ALLOWANCE_BYTES = 256 * 1024;

/**
 * The most of a body refused as too large (413) that the server reads and discards after its
 * answer: a few times the limits clients meet (the agent server's 10 MiB `max_body_bytes`), a few
 * milliseconds of loopback, well short of what a body the server should not read at all is.
 */
const TOO_LARGE_DISCARD_BYTES = 64 * 1024 * 1024;

/** Retry-After of requests refused while stopping: about as long as a restart takes. */
const STOPPING_RETRY_AFTER_S = 5;

/**
 * `/live` is 200 while the process runs; `/ready` is 200 only while every pipeline runs (and
 * `notReady` has no objection).
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  host: Host,
  metricsPath: string | false,
  notReady?: () => Promise<string | undefined>,
): void {
  app.get('/live', async () => ({ status: 'alive' }));
  app.get('/ready', async (_request, reply) => {
    const state = host.state();
    if (state !== 'ready') return reply.code(503).send({ status: state });
    const reason = await notReady?.();
    if (reason !== undefined) return reply.code(503).send({ status: 'unavailable', reason });
    return reply.code(200).send({ status: state });
  });
  if (metricsPath) registerMetricsRoute(app, host.metrics, metricsPath);
}

/**
 * `GET <path>`: the process's metrics in the Prometheus text format. A receiver that serves its
 * own routes inside an encapsulated plugin (`agent_api`) registers it there, under its hooks.
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: Host['metrics'], path: string): void {
  app.get(path, { schema: { hide: true } }, async (_request, reply) => {
    reply.header('content-type', metrics.contentType);
    return metrics.metrics();
  });
}

/**
 * A listener could not bind its address. The command line reads `host` and `port` to tell the
 * operator which config key (and environment variable) sets that port.
 */
export class ListenError extends Error {
  override readonly name = 'ListenError';
  constructor(
    message: string,
    readonly host: string,
    readonly port: number,
    /** `EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`, ... */
    readonly code: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The URL a person on this machine opens for `path` on a listener: a wildcard host (all
 * interfaces) is reached through loopback; IPv6 addresses are bracketed. `scheme` is `https` for
 * a listener with TLS.
 */
export function listenerUrl(host: string, port: number, path = '/', scheme: 'http' | 'https' = 'http'): string {
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' || host === '[::]' ? '[::1]' : host;
  const bracketed = reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable;
  return `${scheme}://${bracketed}:${port}${path.startsWith('/') ? path : `/${path}`}`;
}

/**
 * Listens and returns the bound port; turns EADDRINUSE and friends into a one-line reason.
 * Fastify's "Server listening at …" lines (one per local address) appear at debug level only: the
 * receiver logs one line of its own, and the start banner says where everything is.
 */
export async function listen(app: FastifyInstance, host: string, port: number): Promise<number> {
  // Fastify types its logger as the few methods every logger has; the servers made here log
  // through pino (createHttpServer), whose level numbers that type does not name.
  const log = app.log as unknown as { level: string; levelVal?: number; levels?: { values: Record<string, number> } };
  const values = log.levels?.values;
  // Only at info: at debug the lines are wanted, and a stricter level must stay as strict.
  const quiet = values !== undefined && log.levelVal !== undefined && log.levelVal === values.info;
  const level = log.level;
  if (quiet) log.level = 'warn';
  try {
    await app.listen({ host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new ListenError(`port ${port} on ${host} is already in use`, host, port, code, { cause: error });
    if (code === 'EACCES')
      throw new ListenError(`no permission to listen on ${host}:${port}`, host, port, code, { cause: error });
    if (code === 'EADDRNOTAVAIL') {
      throw new ListenError(`cannot listen on ${host}:${port}: no such local address`, host, port, code, {
        cause: error,
      });
    }
    throw error;
  } finally {
    if (quiet) log.level = level;
  }
  const address = app.server.address();
  return typeof address === 'object' && address ? address.port : port;
}

/**
 * Closes a server by a deadline: Fastify stops accepting, answers new requests on open connections
 * with 503 and waits for the requests in flight; at the deadline the connections still open are
 * cut, so that a receiver's shutdown never outlives the service's.
 */
export async function closeBy(app: FastifyInstance, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<void>((resolve) => {
    timer = setTimeout(
      () => {
        app.server.closeAllConnections();
        resolve();
      },
      Math.max(0, deadline - Date.now()),
    );
  });
  try {
    await Promise.race([app.close(), expired]);
  } finally {
    clearTimeout(timer);
  }
}
