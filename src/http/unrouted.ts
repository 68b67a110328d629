// The answer of every tracepipe HTTP server to a request no route takes: 405 with `Allow` when
// the path is one the server serves with other methods (RFC 9110 §15.5.6), 404 when it serves
// the path with none. Fastify answers both with its not-found handler, so each server's handler
// calls `answerUnrouted`, which asks the server's router which methods the path takes.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendHttpError } from './error-body.ts';

/** Writes an error answer; the default is the shared `{statusCode, error, message}` body. */
export type ErrorSender = (
  reply: FastifyReply,
  request: FastifyRequest,
  statusCode: number,
  message: string,
) => unknown;

/** The order `Allow` lists methods in; others (`PROPFIND`, ...) follow in the router's order. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The methods the server serves on the request's path, `HEAD` included where Fastify serves it
 * with `GET`; empty when the path is unknown. A catch-all route (`OPTIONS *`, which @fastify/cors
 * registers for preflights) makes no path known and is left out.
 */
export function allowedMethods(request: FastifyRequest): string[] {
  const server = request.server;
  const path = request.url.split('?')[0] ?? '/';
  const methods = server.supportedMethods.filter((method) => {
    if (method === request.method) return false;
    const route = server.findRoute({ method: method as 'GET', url: path });
    return route !== null && !isCatchAll(route.params as Record<string, string | undefined>, path);
  });
  const rank = (method: string) => {
    const index = METHOD_ORDER.indexOf(method);
    return index === -1 ? METHOD_ORDER.length : index;
  };
  return methods.sort((a, b) => rank(a) - rank(b));
}

/** Whether a route matched `path` only through a wildcard that takes the whole path. */
function isCatchAll(params: Record<string, string | undefined>, path: string): boolean {
  const rest = params['*'];
  if (rest === undefined) return false;
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // Left as it came: the router could not have decoded it either.
  }
  // `*` matches the path with its slash, `/*` without it.
  const whole = rest.startsWith('/') ? rest : `/${rest}`;
  return whole === decoded || whole === path;
}

export interface UnroutedOptions {
  /** Writes the server's own error body; default the shared `{statusCode, error, message}`. */
  readonly send?: ErrorSender;
  /** The 404 message (say, where the server's routes are); default `no route for GET /x`. */
  readonly notFoundMessage?: (request: FastifyRequest) => string;
}

/**
 * A not-found handler's answer: 405 with `Allow` listing the path's methods when the server has
 * the path, else 404.
 */
export function answerUnrouted(request: FastifyRequest, reply: FastifyReply, options: UnroutedOptions = {}): unknown {
  const send: ErrorSender =
    options.send ?? ((reply, _request, statusCode, message) => sendHttpError(reply, statusCode, message));
  const path = request.url.split('?')[0];
  const allowed = allowedMethods(request);
  if (allowed.length > 0) {
    reply.header('allow', allowed.join(', '));
    return send(reply, request, 405, `method ${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}`);
  }
  return send(reply, request, 404, options.notFoundMessage?.(request) ?? `no route for ${request.method} ${path}`);
}
