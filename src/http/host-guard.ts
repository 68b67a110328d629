// The DNS-rebinding guard of every tracepipe HTTP server. While a server listens on a loopback
// address, a request whose `Host` is neither a loopback name (`localhost`, `*.localhost`,
// `127.x.y.z`, `[::1]`) nor a configured name is refused with 403: a web page on a domain its owner
// re-points at 127.0.0.1 would otherwise be same-origin with the server (Vite and Jupyter guard the
// same way). A server listening beyond loopback is reached by names it cannot know; it is
// protected by its keys, not by this guard.

import type { FastifyInstance } from 'fastify';
import { sendHttpError } from './error-body.ts';
import { splitList } from './cors.ts';

/** The code of the 403 answer (docs/errors.md). */
export const HOST_NOT_ALLOWED = 'TP_ERR_API_HOST_NOT_ALLOWED';

/** The `allowed_hosts` key of a server's schema. */
export function allowedHostsSchema() {
  return {
    type: ['array', 'string'],
    items: { type: 'string', minLength: 1 },
    default: [],
    description:
      'While listening on a loopback address, requests whose `Host` is not a loopback name (`localhost`, `*.localhost`, `127.x.y.z`, `[::1]`) are refused with 403 (DNS-rebinding guard); these host names are accepted too (a list or a comma-separated string). `*` turns the guard off.',
  } as const;
}

/** The host name of a `Host` header, lower-cased, without port, brackets or a trailing dot. */
export function hostName(header: string): string {
  let host = header.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    host = end === -1 ? host.slice(1) : host.slice(1, end);
  } else {
    const colon = host.lastIndexOf(':');
    if (colon !== -1 && host.indexOf(':') === colon) host = host.slice(0, colon);
  }
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

const IPV4_LOOPBACK = /^127\.(?:\d{1,3})\.(?:\d{1,3})\.(?:\d{1,3})$/;

/** `localhost`, `*.localhost`, `127.0.0.0/8`, `::1` (also written out or IPv4-mapped). */
export function isLoopbackName(name: string): boolean {
  const host = hostName(name);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (IPV4_LOOPBACK.test(host)) return true;
  if (host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^::ffff:(.+)$/.exec(host);
  return mapped !== null && IPV4_LOOPBACK.test(mapped[1]!);
}

export interface HostGuardOptions {
  /** The address the server listens on: the guard is on when it is a loopback one. */
  readonly listenHost: string;
  /** Host names accepted besides the loopback ones: a list or a comma-separated string; `*` turns the guard off. */
  readonly allowedHosts: string | readonly string[];
}

/** Whether the guard is on for these options. */
export function hostGuardActive(options: HostGuardOptions): boolean {
  return isLoopbackName(options.listenHost) && !splitList(options.allowedHosts).includes('*');
}

/**
 * Adds the guard to `app` as a root `onRequest` hook (every route, whichever plugin adds it), when
 * the server listens on loopback; a 403 `{statusCode, error, code, message}` answers a refused Host.
 */
export function registerHostGuard(app: FastifyInstance, options: HostGuardOptions): void {
  if (!hostGuardActive(options)) return;
  const allowed = new Set(splitList(options.allowedHosts).map((host) => hostName(host)));
  app.addHook('onRequest', async (request, reply) => {
    const raw = request.headers.host;
    const host = Array.isArray(raw) ? raw[0] : raw;
    // No Host header at all is no browser (every browser sends one), hence no rebinding.
    if (host === undefined || isLoopbackName(host) || allowed.has(hostName(host))) return;
    return sendHttpError(
      reply,
      403,
      `Host "${host}" is not allowed: this server listens on ${options.listenHost} and answers only loopback names (localhost, 127.0.0.1, [::1]) and the names in allowed_hosts`,
      { fields: { code: HOST_NOT_ALLOWED } },
    );
  });
}
