// The error body every tracepipe HTTP server answers with (the OTLP routes excepted, whose
// protocol prescribes a `google.rpc.Status`): `{statusCode, error, code?, message, ...}` — the
// status, its reason phrase, a stable code when there is one (docs/errors.md), and a message
// that says what to change. Fastify's own errors have the same shape, so a client reads one kind.

import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';

/** The body of an error answer; `fields` adds a `code` or details (a refused part's name, ...). */
export interface HttpErrorBody {
  readonly statusCode: number;
  /** The status's reason phrase (`Forbidden`). */
  readonly error: string;
  readonly code?: string;
  readonly message: string;
  readonly [field: string]: unknown;
}

export function httpErrorBody(
  statusCode: number,
  message: string,
  fields: Readonly<Record<string, unknown>> = {},
): HttpErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', ...fields, message };
}

/** Answers `statusCode` with an error body (and `headers`, such as `Retry-After`). */
export function sendHttpError(
  reply: FastifyReply,
  statusCode: number,
  message: string,
  options: { readonly fields?: Readonly<Record<string, unknown>>; readonly headers?: Record<string, string> } = {},
): FastifyReply {
  return reply
    .code(statusCode)
    .headers(options.headers ?? {})
    .send(httpErrorBody(statusCode, message, options.fields));
}
