// Resolves who a request is for: the key from the
// `X-API-Key` header, else the configured default; the project from `Service-Project`, else the
// configured default (which itself defaults to `default`).

import type { IncomingHttpHeaders } from 'node:http';
import type { RequestContext } from 'tracepipe/plugin';

export interface ContextDefaults {
  /** Empty string: no default key. */
  readonly apiKey: string;
  readonly project: string;
  readonly receiver: string;
}

/** The request's context; `apiKey` is undefined when neither the header nor the default has one. */
export function resolveRequestContext(headers: IncomingHttpHeaders, defaults: ContextDefaults): RequestContext {
  // The header wins over the default: it is how one proxy serves several tenants.
  const apiKey = headerValue(headers['x-api-key']) || defaults.apiKey || undefined;
  const project = headerValue(headers['service-project']) || defaults.project;
  return { apiKey, project, receiver: defaults.receiver };
}

/** A header's trimmed value; a repeated header counts as its first value. */
function headerValue(value: string | string[] | undefined): string {
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() ?? '';
}
