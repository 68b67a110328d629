// What an error answer looks like to each client. The LangGraph SDKs put the raw body of a failed
// response into their error's message (`HTTP 404: <body>`), and the reference server's bodies
// are the bare message (`Assistant not found`), so that SDK users read `HTTP 404: Assistant not
// found`. Clients that want the machine-readable form ask for it with `Accept: application/json`
// and get `{statusCode, error, code, message}` (the project's error body, codes in docs/errors.md);
// the web interface does. Bad input (400, 413, 415, 422) is always that JSON body, as the
// reference answers validation errors with JSON, so it names the offending field to every client.
// Either way the code also travels in the `x-error-code` header.
//
// Done in one `onSend` hook over the whole server rather than at each place that answers an
// error (the error handler, the not-found handler, the request guard, the auth refusals), so
// that none of them can answer differently.

import type { FastifyInstance } from 'fastify';

const ALWAYS_JSON = new Set([400, 413, 415, 422]);

/** Whether an `Accept` header names `application/json` itself (a wildcard does not count). */
function asksForJson(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  return value.split(',').some((range) => {
    const [name = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    if (name !== 'application/json') return false;
    const quality = params.find((param) => /^q\s*=/.test(param));
    return quality === undefined || Number(quality.replace(/^q\s*=\s*/, '')) > 0;
  });
}

interface ErrorBody {
  statusCode: number;
  code: string;
  message: string;
}

function errorBodyOf(payload: unknown): ErrorBody | undefined {
  if (typeof payload !== 'string' || !payload.startsWith('{"statusCode":')) return undefined;
  try {
    const body = JSON.parse(payload) as Partial<ErrorBody>;
    if (typeof body.code === 'string' && typeof body.message === 'string' && typeof body.statusCode === 'number')
      return body as ErrorBody;
  } catch {
    // Not an error body after all.
  }
  return undefined;
}

export function registerErrorNegotiation(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 400) return payload;
    const body = errorBodyOf(payload);
    if (!body) return payload;
    reply.header('x-error-code', body.code);
    if (ALWAYS_JSON.has(reply.statusCode) || asksForJson(request.headers.accept)) return payload;
    reply.header('content-type', 'text/plain; charset=utf-8');
    return body.message;
  });
}
