// What every request to the agent server passes before a route sees it, in this order:
//
// 1. DNS-rebinding guard (tracepipe/confighttp's, as every tracepipe server has it). While the
//    server listens on a loopback address, a request whose `Host` is not a loopback name
//    (`localhost`, `*.localhost`, `127.x.y.z`, `[::1]`) or a name in `allowed_hosts` is refused
//    with 403.
// 2. CORS, only for the configured origins (`cors.allowed_origins`); with none, no CORS header is
//    ever sent and browsers keep other sites from reading or calling the API.
// 3. Cross-site guard. A state-changing request (anything but GET, HEAD and OPTIONS) or a
//    WebSocket upgrade that a browser marks as coming from another site (`Sec-Fetch-Site:
//    cross-site|same-site`, or, from browsers that do not send it, an `Origin` whose host is not
//    the `Host`) is refused with 403 unless its origin is an allowed CORS origin. This covers the
//    requests CORS does not stop: form posts, `no-cors` fetches and WebSockets, which a browser
//    opens without asking.
// 4. JSON only. A POST, PUT, PATCH or DELETE that carries a body must say `Content-Type:
//    application/json` (415 otherwise), so the "simple" content types of cross-site forms
//    (`text/plain`, `application/x-www-form-urlencoded`, `multipart/form-data`) never parse.
// 5. Authentication, except on the public routes (`/ok`, `/info`, `/live`, `/ready`, the web
//    interface's static files, the generative UI bundles a `<script src>` loads): a valid `X-Api-Key` when `auth.api_keys` is set (401 otherwise),
//    then the custom auth handler's `authenticate(request)`, whose user the request carries on.
//
// These are root-level hooks, so they cover every route of the server, whichever plugin adds it
// (`/metrics` and `/docs` included).

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { registerCors, registerHostGuard } from 'tracepipe/confighttp';
import type { CorsConfig } from 'tracepipe/confighttp';
import { ApiCrossSiteError, ApiUnauthorizedError, ApiUnsupportedMediaTypeError } from '../../errors.ts';
import { ApiKeys } from '../auth/api-keys.ts';
import { AuthRefusal } from '../auth/custom.ts';
import type { CustomAuth } from '../auth/custom.ts';
import { errorBody } from './app.ts';

export interface RequestGuardOptions {
  /** The address the server listens on; the DNS-rebinding guard is on when it is a loopback one. */
  readonly listenHost: string;
  /** Host names accepted besides the loopback ones (`*` turns the guard off). */
  readonly allowedHosts: readonly string[];
  /** The `cors` block: origins allowed to call the API from a browser; none: no CORS at all. */
  readonly cors: CorsConfig;
  readonly apiKeys: readonly string[];
  readonly customAuth?: CustomAuth;
  /** Path of the web interface, when it is served (its static files are public). */
  readonly uiPath?: string;
  /** Names of the generative UIs: their bundles (`GET /ui/{name}/{file}`) are public too. */
  readonly generativeUis?: readonly string[];
  readonly logger: Logger;
}

/** Headers the API sets that browser clients read (the SDK reads `Content-Location`). */
export const EXPOSED_HEADERS = ['content-location', 'location', 'x-pagination-total', 'x-pagination-next'];
/** Every method the API uses. */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const PUBLIC_ROUTES = new Set(['/ok', '/info', '/live', '/ready']);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export { hostName, isLoopbackName } from 'tracepipe/confighttp';

function isWebSocketUpgrade(request: FastifyRequest): boolean {
  return (headerValue(request.headers.upgrade) ?? '').toLowerCase() === 'websocket';
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** What `toFetchRequest` reads of a request (a Fastify request has it). */
export interface RequestHead {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** A WHATWG Request with the method, URL and headers of the incoming one (no body), for `authenticate`. */
export function toFetchRequest(request: RequestHead): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      try {
        headers.append(name, item);
      } catch {
        // A header value fetch cannot carry; the handler never sees it.
      }
    }
  }
  let url: string;
  try {
    url = new URL(request.url, `http://${headerValue(request.headers.host) ?? 'localhost'}`).href;
  } catch {
    url = new URL(request.url, 'http://localhost').href;
  }
  return new Request(url, { method: request.method, headers });
}

export async function registerRequestGuard(app: FastifyInstance, options: RequestGuardOptions): Promise<void> {
  const refuse = (reply: FastifyReply, status: number, code: string, message: string) =>
    reply.code(status).send(errorBody(status, code, message));

  // 1. DNS rebinding.
  registerHostGuard(app, { listenHost: options.listenHost, allowedHosts: options.allowedHosts });

  // 2. CORS for the configured origins only.
  const originAllowed = await registerCors(app, options.cors, {
    methods: CORS_METHODS,
    // Request headers are reflected (the SDK's `x-api-key`, `content-type`, `last-event-id`, any
    // `defaultHeaders` such as `authorization`): the origin is one the operator trusts.
    headers: undefined,
    exposedHeaders: EXPOSED_HEADERS,
  });

  const apiKeys = new ApiKeys(options.apiKeys);
  const uiPath = options.uiPath?.replace(/\/+$/, '');
  const generativeUiRoutes = new Set((options.generativeUis ?? []).map((name) => `/ui/${name}/:basename`));
  const isPublic = (request: FastifyRequest): boolean => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    const route = request.routeOptions.url;
    if (route === undefined) return false;
    if (PUBLIC_ROUTES.has(route)) return true;
    if (generativeUiRoutes.has(route)) return true;
    // The interface's files (and the redirect of `/` to it) hold no data; what they load does.
    return (
      uiPath !== undefined && uiPath !== '' && (route === '/' || route === uiPath || route.startsWith(`${uiPath}/`))
    );
  };

  if (!app.hasRequestDecorator('agentAuth')) app.decorateRequest('agentAuth', null);

  // A WebSocket upgrade refused with an HTTP answer (by any guard here, a missing route, a route's
  // own check) leaves a socket the HTTP server no longer tracks: it is closed once the answer is
  // out, or it would hold the server open at shutdown. An accepted upgrade never gets here.
  app.addHook('onResponse', async (request) => {
    if (isWebSocketUpgrade(request)) request.raw.socket?.destroy();
  });

  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS') return; // preflights: answered by CORS, or 404

    // 3. Cross-site requests that change state. A WebSocket's upgrade is a GET, but the socket
    // it opens starts runs, and CORS never applies to it: it is judged as a state change.
    if (!SAFE_METHODS.has(request.method) || isWebSocketUpgrade(request)) {
      const origin = headerValue(request.headers.origin);
      const site = headerValue(request.headers['sec-fetch-site']);
      let crossSite = site === 'cross-site' || site === 'same-site';
      if (site === undefined && origin !== undefined) {
        let originHost: string | undefined;
        try {
          originHost = new URL(origin).host;
        } catch {
          originHost = undefined; // `Origin: null` (sandboxed pages, files) included
        }
        crossSite =
          originHost === undefined ||
          originHost.toLowerCase() !== (headerValue(request.headers.host) ?? '').toLowerCase();
      }
      if (crossSite && !originAllowed(origin)) {
        return refuse(
          reply,
          403,
          ApiCrossSiteError.code,
          `Cross-site ${request.method} request from origin ${origin ?? '(none)'} refused; allow the origin in cors.allowed_origins to call this API from that site`,
        );
      }
    }

    // 4. Bodies are JSON.
    if (BODY_METHODS.has(request.method)) {
      const length = headerValue(request.headers['content-length']);
      const hasBody =
        request.headers['transfer-encoding'] !== undefined || (length !== undefined && length.trim() !== '0');
      if (hasBody) {
        const type = (headerValue(request.headers['content-type']) ?? '').split(';')[0]!.trim().toLowerCase();
        if (type !== 'application/json') {
          return refuse(
            reply,
            415,
            ApiUnsupportedMediaTypeError.code,
            `A ${request.method} body must be JSON with Content-Type: application/json (got ${type === '' ? 'no Content-Type' : `"${type}"`})`,
          );
        }
      }
    }

    // 5. Authentication.
    if (isPublic(request)) return;
    if (apiKeys.enabled && !apiKeys.accepts(request.headers['x-api-key'])) {
      return refuse(reply, 401, ApiUnauthorizedError.code, 'Missing or invalid X-Api-Key header');
    }
    if (options.customAuth) {
      try {
        request.agentAuth = (await options.customAuth.authenticate(toFetchRequest(request))) ?? null;
      } catch (error) {
        const refusal =
          error instanceof AuthRefusal
            ? error
            : new AuthRefusal(500, `The custom auth handler failed: ${(error as Error).message}`);
        if (refusal.statusCode >= 500)
          options.logger.error({ err: refusal.cause ?? refusal, url: request.url }, 'The custom auth handler failed.');
        reply.headers(refusal.headers);
        return refuse(reply, refusal.statusCode, refusal.code, refusal.message);
      }
    }
  });
}
