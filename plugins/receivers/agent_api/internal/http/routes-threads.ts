// Thread routes: create, get, update metadata, delete, search, count, copy, and state: read (now,
// at a checkpoint), update, history. With a custom auth handler, each route runs the handler of
// its `threads:*` event first, and a thread its filter hides answers 404 (see access.ts).

import type { FastifyRequest } from 'fastify';
import { v7 as uuid7 } from 'uuid';
import type { JsonObject, ThreadQuery } from '../storage/storage.ts';
import { requireWritable } from '../auth/filters.ts';
import { authorizeThread, visibleForCreate } from './access.ts';
import { isTrue, pathParameter, requestParameter, selectFields, setPagination, withoutNulls } from './request-body.ts';
import {
  historyBody,
  historyQuery,
  stateAtCheckpoint,
  stateUpdate,
  threadCount,
  threadCreate,
  threadIdParams,
  threadPatch,
  threadSearch,
} from '../api/schemas.ts';
import type { AgentApp, AgentServices } from './services.ts';
import { ApiNotFoundError } from '../../errors.ts';
import { conflict } from '../api/errors.ts';

export function registerThreadRoutes(app: AgentApp, services: AgentServices): void {
  const { threads, access } = services;
  /** `threads:read` on the thread of the path: a thread the user may not see is a 404. */
  const readable = (request: FastifyRequest, threadId: string) =>
    authorizeThread(services, request, 'threads:read', threadId);

  app.post('/threads', { schema: { body: threadCreate } }, async (request) => {
    const body = withoutNulls(request.body);
    // The handler may set metadata (an owner); the thread is created with what it leaves.
    const value = { thread_id: body.thread_id, metadata: body.metadata, if_exists: body.if_exists };
    const filters = await access.authorize(request, 'threads:create', value);
    const id = body.thread_id;
    const visible = await visibleForCreate(
      access,
      request,
      filters,
      async () => !!id && (await threads.exists(id)),
      'threads:read',
      { thread_id: id },
    );
    return threads.create({ ...body, metadata: value.metadata ?? undefined }, { visible });
  });

  app.post('/threads/search', { schema: { body: threadSearch } }, async (request, reply) => {
    const body = withoutNulls(request.body);
    const query: ThreadQuery = {
      ids: body.ids,
      metadata: body.metadata,
      values: body.values,
      status: body.status,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      sort_by: body.sort_by === 'state_updated_at' ? 'updated_at' : (body.sort_by ?? 'created_at'),
      sort_order: body.sort_order ?? 'desc',
    };
    query.auth = await access.authorize(request, 'threads:search', {
      ids: query.ids,
      metadata: query.metadata,
      values: query.values,
      status: query.status,
      limit: query.limit,
      offset: query.offset,
    });
    const page = await threads.search(query);
    setPagination(reply, page.total, query.offset, query.limit);
    return selectFields(page.items, body.select);
  });

  app.post('/threads/count', { schema: { body: threadCount } }, async (request) => {
    const body = withoutNulls(request.body);
    const auth = await access.authorize(request, 'threads:search', { ...body, limit: 0, offset: 0 });
    const page = await threads.search({
      ...body,
      auth,
      limit: 0,
      offset: 0,
      sort_by: 'created_at',
      sort_order: 'desc',
    });
    return page.total;
  });

  app.get('/threads/:thread_id', { schema: { params: threadIdParams } }, async (request) => {
    const { thread_id: threadId } = request.params;
    return (await readable(request, threadId)).thread ?? threads.get(threadId);
  });

  app.patch('/threads/:thread_id', { schema: { params: threadIdParams, body: threadPatch } }, async (request) => {
    const { thread_id: threadId } = request.params;
    const value = { thread_id: threadId, metadata: request.body.metadata };
    const { filters, thread } = await authorizeThread(services, request, 'threads:update', threadId, value);
    if (thread) requireWritable({ ...thread.metadata, ...value.metadata }, filters);
    return threads.patch(threadId, value.metadata ?? {});
  });

  app.delete('/threads/:thread_id', { schema: { params: threadIdParams } }, async (request, reply) => {
    const { thread_id: threadId } = request.params;
    await authorizeThread(services, request, 'threads:delete', threadId);
    await threads.delete(threadId);
    return reply.code(204).send();
  });

  app.post('/threads/:thread_id/copy', { schema: { params: threadIdParams } }, async (request) => {
    const { thread_id: threadId } = request.params;
    // A source that is missing or hidden from the user is a 409, as on the reference server (the
    // same answer for both, so that it tells nothing about other users' threads).
    const source = await asConflict(async () => (await readable(request, threadId)).thread ?? threads.get(threadId));
    // The copy is a new thread: the user must be allowed to create one, and the handler may mark it.
    const value = {
      thread_id: uuid7(),
      metadata: { ...source.metadata } as Record<string, unknown> | null | undefined,
    };
    await access.authorize(request, 'threads:create', value);
    return threads.copy(threadId, {
      threadId: value.thread_id,
      metadata: value.metadata ?? {},
    });
  });

  app.get('/threads/:thread_id/state', { schema: { params: threadIdParams } }, async (request, reply) => {
    const { thread_id: threadId } = request.params;
    await readable(request, threadId);
    const subgraphs = isTrue(requestParameter(request.query, 'subgraphs'));
    if (subgraphs) return threads.state(threadId, { subgraphs });
    // The latest state, often read again unchanged: served as the JSON the thread service keeps.
    return reply.type('application/json; charset=utf-8').send(await threads.latestStateJson(threadId));
  });

  app.post('/threads/:thread_id/state', { schema: { params: threadIdParams, body: stateUpdate } }, async (request) => {
    const { thread_id: threadId } = request.params;
    await authorizeThread(services, request, 'threads:update', threadId);
    return threads.updateState(threadId, withoutNulls(request.body));
  });

  app.patch(
    '/threads/:thread_id/state',
    { schema: { params: threadIdParams, body: threadPatch } },
    async (request, reply) => {
      const { thread_id: threadId } = request.params;
      await authorizeThread(services, request, 'threads:update', threadId);
      await threads.patchStateMetadata(threadId, request.body.metadata);
      return reply.code(204).send();
    },
  );

  // No params schema here (the OpenAPI document has none for this route): both come from the path.
  app.get('/threads/:thread_id/state/:checkpoint_id', async (request) => {
    const threadId = pathParameter(request.params, 'thread_id');
    await readable(request, threadId);
    return threads.state(threadId, {
      checkpoint_id: pathParameter(request.params, 'checkpoint_id'),
      subgraphs: isTrue(requestParameter(request.query, 'subgraphs')),
    });
  });

  app.post(
    '/threads/:thread_id/state/checkpoint',
    { schema: { params: threadIdParams, body: stateAtCheckpoint } },
    async (request) => {
      const { thread_id: threadId } = request.params;
      await readable(request, threadId);
      const body = withoutNulls(request.body);
      return threads.state(threadId, { checkpoint: body.checkpoint, subgraphs: isTrue(body.subgraphs) });
    },
  );

  app.get(
    '/threads/:thread_id/history',
    { schema: { params: threadIdParams, querystring: historyQuery } },
    async (request) => {
      const { thread_id: threadId } = request.params;
      await readable(request, threadId);
      return threads.history(threadId, { limit: request.query.limit ?? 10, before: request.query.before });
    },
  );

  app.post(
    '/threads/:thread_id/history',
    { schema: { params: threadIdParams, body: historyBody } },
    async (request) => {
      const { thread_id: threadId } = request.params;
      await readable(request, threadId);
      const body = withoutNulls(request.body);
      return threads.history(threadId, { ...body, limit: body.limit ?? 10 });
    },
  );
}

/** Runs `lookup`; a not-found it throws becomes a 409 with the same message. */
async function asConflict<T>(lookup: () => Promise<T>): Promise<T> {
  try {
    return await lookup();
  } catch (error) {
    if (error instanceof ApiNotFoundError) throw conflict(error.message);
    throw error;
  }
}
