// Authorization of API operations by the deployment's custom auth handler: which handler runs for
// a route (the `resource:action` events of the SDK's auth types), and the lookups that make a
// resource the user's filter hides answer exactly as a missing one does — 404 with the same
// message — so ids of other users' threads, runs and assistants cannot be probed.
//
// Without a custom handler every method here is a no-op that returns no filter, and the routes
// behave as before. The mechanism is generic: a resource kind is one event name per action, a
// filter from `authorize`, and `matchesAuthFilters` on the resource's metadata wherever it is
// read — in a storage query (search, count) or after a lookup by id (`visible`). Crons, when they
// come, plug in the same way with the `crons:*` events.

import type { FastifyRequest } from 'fastify';
import { v7 as uuid7 } from 'uuid';
import { AuthRefusal } from '../auth/custom.ts';
import type { AuthContext, AuthEvent, AuthEventValue, CustomAuth } from '../auth/custom.ts';
import { matchesAuthFilters } from '../auth/filters.ts';
import type { AuthFilters } from '../auth/filters.ts';
import { notFound } from '../api/errors.ts';
import type { AssistantService } from '../domain/assistants.ts';
import type { RunAccess, RunCreate, RunService } from '../domain/runs.ts';
import type { ThreadService } from '../domain/threads.ts';
import type { Assistant, RunRecord, Thread } from '../storage/storage.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The user the custom auth handler authenticated; null without one (or on public routes). */
    agentAuth: AuthContext | null;
  }
}

export class Access {
  constructor(private readonly custom: CustomAuth | undefined) {}

  /** Whether a custom auth handler is installed. */
  get enabled(): boolean {
    return this.custom !== undefined;
  }

  /** The authenticated user of the request, if any. */
  user(request: FastifyRequest): AuthContext | undefined {
    return request.agentAuth ?? undefined;
  }

  /**
   * Runs the handler for `event` with the request's user. The handler may change `value` in place
   * (callers read their fields back from it). Returns the filter to apply, or undefined.
   */
  async authorize<E extends AuthEvent>(
    request: FastifyRequest,
    event: E,
    value: AuthEventValue<E>,
  ): Promise<AuthFilters | undefined> {
    if (!this.custom) return undefined;
    return this.custom.authorize(request.agentAuth ?? undefined, event, value);
  }
}

/**
 * For a create with an id the client chose: may the user see an existing resource of that id?
 * Only if it passes the create handler's filter and the read handler's (which runs only when
 * the id exists, and whose refusal means no). The reference checks the create filter alone, so
 * a create handler that returns none would hand back anyone's resource with `if_exists: do_nothing`.
 */
export async function visibleForCreate<E extends 'threads:read' | 'assistants:read'>(
  access: Access,
  request: FastifyRequest,
  createFilters: AuthFilters | undefined,
  exists: () => Promise<boolean>,
  readEvent: E,
  readValue: AuthEventValue<E>,
): Promise<((metadata: Record<string, unknown>) => boolean) | undefined> {
  if (!access.enabled) return undefined;
  let readFilters: AuthFilters | undefined;
  let readable = true;
  if (await exists()) {
    try {
      readFilters = await access.authorize(request, readEvent, readValue);
    } catch (error) {
      if (!(error instanceof AuthRefusal) || error.statusCode >= 500) throw error;
      readable = false;
    }
  }
  return (metadata) =>
    readable && matchesAuthFilters(metadata, createFilters) && matchesAuthFilters(metadata, readFilters);
}

/** Throws the not-found error unless the metadata passes the filter. */
export function requireVisible(
  metadata: Readonly<Record<string, unknown>> | null | undefined,
  filters: AuthFilters | undefined,
  message: string,
): void {
  if (!matchesAuthFilters(metadata, filters)) throw notFound(message);
}

export interface AccessServices {
  readonly access: Access;
  readonly threads: ThreadService;
  readonly assistants: AssistantService;
  readonly runs: RunService;
}

export const threadNotFound = (threadId: string): string => `Thread with ID ${threadId} not found`;
/** As the reference server words it, which SDK users' code may match (`HTTP 404: Assistant not found`). */
export const ASSISTANT_NOT_FOUND = 'Assistant not found';

/**
 * Authorizes a thread operation (`threads:read`, `threads:update`, `threads:delete`) and checks
 * that the thread exists and passes the filter; 404 otherwise. Returns the thread when it was
 * read (only under a filter; without one the route's own lookup reports a missing thread).
 */
export async function authorizeThread(
  services: AccessServices,
  request: FastifyRequest,
  event: 'threads:read' | 'threads:update' | 'threads:delete',
  threadId: string,
  value: AuthEventValue<'threads:read' | 'threads:update' | 'threads:delete'> = { thread_id: threadId },
): Promise<{ filters: AuthFilters | undefined; thread?: Thread }> {
  const filters = await services.access.authorize(request, event, value as never);
  if (!filters) return { filters };
  const thread = await services.threads.get(threadId);
  requireVisible(thread.metadata, filters, threadNotFound(threadId));
  return { filters, thread };
}

/** As `authorizeThread`, for assistants (a graph id names its system assistant). */
export async function authorizeAssistant(
  services: AccessServices,
  request: FastifyRequest,
  event: 'assistants:read' | 'assistants:update' | 'assistants:delete',
  idOrGraph: string,
  value?: AuthEventValue<'assistants:read' | 'assistants:update' | 'assistants:delete'>,
): Promise<{ filters: AuthFilters | undefined; assistant?: Assistant }> {
  const assistantId = services.assistants.resolveId(idOrGraph);
  const filters = await services.access.authorize(request, event, (value ?? { assistant_id: assistantId }) as never);
  if (!filters) return { filters };
  const assistant = await services.assistants.get(idOrGraph);
  requireVisible(assistant.metadata, filters, ASSISTANT_NOT_FOUND);
  return { filters, assistant };
}

/**
 * Authorizes an operation on a run through its thread, as the reference server does (a run is
 * visible when its thread is): `threads:read` to read or join it, `threads:update` to cancel it,
 * `threads:delete` to delete it. A run whose thread is gone (a threadless run's temporary thread)
 * is judged by its own metadata, which holds what the handler stamped on its creation.
 */
export async function authorizeRun(
  services: AccessServices,
  request: FastifyRequest,
  event: 'threads:read' | 'threads:update' | 'threads:delete',
  threadId: string | undefined,
  runId: string,
  value?: AuthEventValue<'threads:read' | 'threads:update' | 'threads:delete'>,
): Promise<RunRecord | undefined> {
  const filters = await services.access.authorize(request, event, (value ?? { thread_id: threadId }) as never);
  if (!filters) return undefined;
  const run = await services.runs.get(threadId, runId);
  const thread = await services.threads.find(run.thread_id);
  requireVisible(thread?.metadata ?? run.metadata, filters, `Run ${runId} not found`);
  return run;
}

/**
 * Creates a run after `threads:create_run` (which may stamp the run's metadata — and a new
 * thread's — with an owner, and whose filter must pass an existing thread) and, for an assistant
 * that is not a graph's system assistant, `assistants:read` (so no one runs an assistant hidden
 * from them; the reference server does not check this). The user is stamped into `configurable`.
 */
export async function createRun(
  services: AccessServices,
  request: FastifyRequest,
  threadId: string | undefined,
  body: RunCreate,
  origin: Pick<RunAccess, 'protocol'> = {},
): Promise<RunRecord> {
  const { access, assistants, runs } = services;
  if (!access.enabled) return runs.create(threadId, body, request.headers, origin);
  const assistantId = assistants.resolveId(body.assistant_id);
  const strategy = body.multitask_strategy ?? 'reject';
  const value = {
    thread_id: threadId,
    assistant_id: assistantId,
    run_id: uuid7(),
    status: 'pending' as const,
    metadata: { ...(body.metadata ?? {}) } as Record<string, unknown> | null | undefined,
    prevent_insert_if_inflight: strategy === 'reject',
    multitask_strategy: strategy,
    if_not_exists: body.if_not_exists ?? 'reject',
    after_seconds: body.after_seconds ?? 0,
    kwargs: {
      input: body.input,
      command: body.command,
      config: body.config,
      context: body.context,
      stream_mode: body.stream_mode,
      interrupt_before: body.interrupt_before,
      interrupt_after: body.interrupt_after,
      webhook: body.webhook,
      feedback_keys: body.feedback_keys,
      subgraphs: body.stream_subgraphs ?? false,
      temporary: threadId === undefined && (body.on_completion ?? 'delete') === 'delete',
    } as Record<string, unknown>,
  };
  const threadVisible = await access.authorize(request, 'threads:create_run', value);
  const assistantVisible = assistants.isSystem(assistantId)
    ? undefined
    : await access.authorize(request, 'assistants:read', { assistant_id: assistantId });
  return runs.create(
    threadId,
    { ...body, metadata: (value.metadata ?? undefined) as RunCreate['metadata'] },
    request.headers,
    {
      runId: value.run_id,
      threadVisible,
      assistantVisible,
      auth: access.user(request),
      ...origin,
    },
  );
}
