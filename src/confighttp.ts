// `tracepipe/confighttp`: the guards every tracepipe HTTP server shares (the Collector's
// confighttp) — the server set-up (`createGuardedServer`: health routes, 503 while stopping,
// error answers: 404 for an unknown path, 405 with `Allow` for another method than a path takes), TLS and mutual TLS (`tls`), the DNS-rebinding Host guard (`allowed_hosts`), CORS (`cors`), body limits and
// bounded decompression (`readBody`), and the error body `{statusCode, error, code?, message}`.
// The `otlp` and `langsmith` receivers, the agent server and the trace explorer are built on it;
// docs/writing-a-plugin.md ("An HTTP server") shows how.
//
// Everything exported here is public API under semantic versioning; api/tracepipe.api.md lists
// it, and a test fails when it changes without that file being updated.

export type { ErrorSender, GuardedServer, GuardedServerOptions } from './http/guarded-server.ts';
export { createGuardedServer, takeRawBodies } from './http/guarded-server.ts';
export type { UnroutedOptions } from './http/unrouted.ts';
export { allowedMethods, answerUnrouted } from './http/unrouted.ts';
export type { ServerTls, TlsConfig, TlsVersion } from './http/tls.ts';
export { TLS_VERSIONS, TlsConfigError, loadServerTls, tlsSchema } from './http/tls.ts';
export type { HostGuardOptions } from './http/host-guard.ts';
export {
  HOST_NOT_ALLOWED,
  allowedHostsSchema,
  hostGuardActive,
  hostName,
  isLoopbackName,
  registerHostGuard,
} from './http/host-guard.ts';
export type { CorsConfig, CorsRequirements, OriginCheck } from './http/cors.ts';
export { corsEnabled, corsSchema, registerCors, splitList } from './http/cors.ts';
export type { HttpErrorBody } from './http/error-body.ts';
export { httpErrorBody, sendHttpError } from './http/error-body.ts';
export type { BodyCoding } from './http/body.ts';
export {
  BodyAbortedError,
  BodyCodingError,
  BodyTooLargeError,
  SUPPORTED_CODINGS,
  codingOf,
  readBody,
} from './http/body.ts';
export type { HttpServerOptions } from './http/server.ts';
export { closeBy, createHttpServer, listen, listenerSchema, listenerUrl, registerMetricsRoute } from './http/server.ts';
