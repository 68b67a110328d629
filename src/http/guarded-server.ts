// A tracepipe HTTP server with its guards, set up the one way every server does it (the Collector's
// confighttp `ToServer`): the shared server (src/http/server.ts: health routes, 503 while stopping,
// unread bodies settled), TLS from the `tls` config block, the DNS-rebinding Host guard, CORS for the configured origins only, and
// error answers — Fastify's own errors (an unparsable Content-Type, a body over the limit, a
// timeout), unknown routes (404) and other methods than a path takes (405 with `Allow`) — in one
// body shape.

import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { registerCors } from './cors.ts';
import type { CorsConfig, CorsRequirements, OriginCheck } from './cors.ts';
import { sendHttpError } from './error-body.ts';
import { registerHostGuard } from './host-guard.ts';
import { createHttpServer } from './server.ts';
import type { HttpServerOptions } from './server.ts';
import { loadServerTls } from './tls.ts';
import type { TlsConfig } from './tls.ts';
import { answerUnrouted } from './unrouted.ts';
import type { ErrorSender } from './unrouted.ts';

export type { ErrorSender } from './unrouted.ts';

export interface GuardedServerOptions extends Omit<HttpServerOptions, 'tls'> {
  /**
   * The component's `tls` block (`tlsSchema`); absent: plaintext HTTP. Its paths are resolved with
   * `host.resolvePath` and its files read here, so a bad one fails the start naming its key.
   */
  readonly tls?: TlsConfig;
  /** The address the server will listen on: the Host guard is on while it is a loopback one. */
  readonly listenHost: string;
  /** Host names accepted on loopback besides the loopback ones (`allowed_hosts`). */
  readonly allowedHosts?: string | readonly string[];
  /** The `cors` block and what the server's routes need of it; no CORS without it. */
  readonly cors?: { readonly config: CorsConfig; readonly requirements: CorsRequirements };
  /** How errors are answered, for a protocol that prescribes its own body (OTLP's Status). */
  readonly sendError?: ErrorSender;
  /** The 404 message of a request no route serves (say, where the server's routes are). */
  readonly notFoundMessage?: (request: FastifyRequest) => string;
  /** The `code` of the default body's 405 (another method than the path takes), if it has one. */
  readonly methodNotAllowedCode?: string;
}

export interface GuardedServer {
  readonly app: FastifyInstance;
  /** Whether a request's `Origin` is an allowed CORS origin (never, without CORS). */
  readonly originAllowed: OriginCheck;
}

export async function createGuardedServer(options: GuardedServerOptions): Promise<GuardedServer> {
  const tls = options.tls && (await loadServerTls(options.tls, options.host.resolvePath));
  const app = createHttpServer({ ...options, tls });
  registerHostGuard(app, { listenHost: options.listenHost, allowedHosts: options.allowedHosts ?? [] });
  const originAllowed = options.cors
    ? await registerCors(app, options.cors.config, options.cors.requirements)
    : () => false;
  const send: ErrorSender =
    options.sendError ??
    ((reply, _request, statusCode, message) =>
      sendHttpError(reply, statusCode, message, {
        fields: statusCode === 405 && options.methodNotAllowedCode ? { code: options.methodNotAllowedCode } : {},
      }));
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) options.logger.error({ err: error, path: request.url }, 'Request failed.');
    if (options.sendError) return options.sendError(reply, request, status, error.message);
    // Fastify's own code (FST_ERR_VALIDATION, ...) names the kind of problem; a bug of ours has none to show.
    const code = status < 500 && typeof error.code === 'string' ? { code: error.code } : {};
    return sendHttpError(reply, status, error.message, { fields: code });
  });
  app.setNotFoundHandler((request, reply) =>
    answerUnrouted(request, reply, { send, notFoundMessage: options.notFoundMessage }),
  );
  return { app, originAllowed };
}

/**
 * Leaves request bodies unparsed in `scope`, for handlers that read them themselves (`readBody`:
 * under the size limit, decompressed in bounded steps).
 */
export function takeRawBodies(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
}
