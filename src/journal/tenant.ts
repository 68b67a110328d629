// The part of a request's context a journaled receiver keeps beside the body: the tenant it was
// sent for. Written when the request is journaled and read back when it is replayed, so that a
// replayed request reaches the backend under the project and key it was acknowledged for.

import type { RequestContext } from '../pipeline/data.ts';

/** The tenant of a journaled request: its project and, when it had one, its API key. */
export interface JournaledTenant {
  readonly project: string;
  readonly apiKey?: string;
}

/** What the journal keeps of `context` (no empty key: a request without one replays without one). */
export function journaledTenant(context: RequestContext): JournaledTenant {
  return { project: context.project, ...(context.apiKey ? { apiKey: context.apiKey } : {}) };
}

/** The context a replayed request is delivered with, for the receiver `receiver`. */
export function replayedContext(tenant: JournaledTenant, receiver: string): RequestContext {
  return { project: tenant.project, receiver, ...(tenant.apiKey ? { apiKey: tenant.apiKey } : {}) };
}
