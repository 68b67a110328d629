// The trace explorer's coded errors. Where its answers mean what the agent server's do (a bad query
// parameter, an unknown trace, not ready yet) they carry the same API codes, so a client of both
// matches one set; a plugin imports no other plugin, so each defines the codes it sends. The codes
// are wire values: they never change.

import { createCodedError } from 'tracepipe/plugin';
import type { CodedError } from 'tracepipe/plugin';
import { sendHttpError } from 'tracepipe/confighttp';
import type { FastifyReply } from 'fastify';

/** A query parameter or cursor that cannot be read (422, the body names the `field`). */
export const ExplorerInvalidError = createCodedError('TP_ERR_API_INVALID', '%s', 422);
/** No such trace or thread. */
export const ExplorerNotFoundError = createCodedError('TP_ERR_API_NOT_FOUND', '%s', 404);
/** Another method than the path takes (405, with `Allow` naming the ones it does). */
export const ExplorerMethodNotAllowedError = createCodedError('TP_ERR_API_METHOD_NOT_ALLOWED', '%s', 405);
/** The explorer is starting: retry after `Retry-After`. */
export const ExplorerUnavailableError = createCodedError('TP_ERR_API_UNAVAILABLE', '%s', 503);

/** Answers with a coded error: its status, and its code beside `fields` in the shared error body. */
export function sendCodedError(
  reply: FastifyReply,
  error: CodedError,
  options: { readonly fields?: Readonly<Record<string, unknown>>; readonly headers?: Record<string, string> } = {},
): FastifyReply {
  return sendHttpError(reply, error.statusCode, error.message, {
    fields: { code: error.code, ...options.fields },
    ...(options.headers ? { headers: options.headers } : {}),
  });
}
