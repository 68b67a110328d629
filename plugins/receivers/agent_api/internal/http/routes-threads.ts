// Thread routes: create, get, update metadata, delete, search, count, copy, and state: read (now,
// at a checkpoint), update, history. With a custom auth handler, each route runs the handler of
// its `threads:*` event first, and a thread its filter hides answers 404 (see access.ts).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { v7 as uuid7 } from 'uuid';
import type { CheckpointSelector, HistoryQuery, StateUpdate, ThreadCreate } from '../domain/threads.ts';
import type { JsonObject, ThreadQuery, ThreadStatus } from '../storage/storage.ts';
import { authorizeThread, visibleForCreate } from './access.ts';
import { isTrue, selectFields, setPagination, withoutNulls } from './request-body.ts';
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
} from './schemas.ts';
import type { AgentServices } from './services.ts';

type ThreadParams = { thread_id: string };

export function registerThreadRoutes(app: FastifyInstance, services: AgentServices): void {
  const { threads, access } = services;
  const threadId = (request: FastifyRequest) => (request.params as ThreadParams).thread_id;
  /** `threads:read` on the thread of the path: a thread the user may not see is a 404. */
  const readable = (request: FastifyRequest) => authorizeThread(services, request, 'threads:read', threadId(request));

  app.post('/threads', { schema: { body: threadCreate } }, async (request) => {
    const body = withoutNulls(request.body as ThreadCreate);
    // The handler may set metadata (an owner); the thread is created with what it leaves.
    const value = { thread_id: body.thread_id, metadata: body.metadata, if_exists: body.if_exists };
    const filters = await access.authorize(request, 'threads:create', value);
    const id = body.thread_id;
    const visible = await visibleForCreate(
      access,
      request,
      filters,
      async () => !!id && !!(await services.storage.getThread(id)),
      'threads:read',
      { thread_id: id },
    );
    return threads.create({ ...body, metadata: value.metadata ?? undefined }, { visible });
  });

  app.post('/threads/search', { schema: { body: threadSearch } }, async (request, reply) => {
    const body = withoutNulls(
      request.body as Partial<Omit<ThreadQuery, 'sort_by'>> & {
        sort_by?: ThreadQuery['sort_by'] | 'state_updated_at';
        select?: string[];
      },
    );
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
    const body = withoutNulls(request.body as { metadata?: JsonObject; values?: JsonObject; status?: ThreadStatus });
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
    return (await readable(request)).thread ?? threads.get(threadId(request));
  });

  app.patch('/threads/:thread_id', { schema: { params: threadIdParams, body: threadPatch } }, async (request) => {
    const value = { thread_id: threadId(request), metadata: (request.body as { metadata: JsonObject }).metadata };
    await authorizeThread(services, request, 'threads:update', threadId(request), value);
    return threads.patch(threadId(request), value.metadata ?? {});
  });

  app.delete('/threads/:thread_id', { schema: { params: threadIdParams } }, async (request, reply) => {
    await authorizeThread(services, request, 'threads:delete', threadId(request));
    await threads.delete(threadId(request));
    return reply.code(204).send();
  });

  app.post('/threads/:thread_id/copy', { schema: { params: threadIdParams } }, async (request) => {
    const { thread } = await readable(request);
    // The copy is a new thread: the user must be allowed to create one, and the handler may mark it.
    const source = thread ?? (await threads.get(threadId(request)));
    const value = {
      thread_id: uuid7(),
      metadata: { ...source.metadata } as Record<string, unknown> | null | undefined,
    };
    await access.authorize(request, 'threads:create', value);
    return threads.copy(threadId(request), {
      threadId: value.thread_id,
      metadata: (value.metadata ?? {}) as JsonObject,
    });
  });

  app.get('/threads/:thread_id/state', { schema: { params: threadIdParams } }, async (request) => {
    await readable(request);
    const query = request.query as { subgraphs?: string };
    return threads.state(threadId(request), { subgraphs: isTrue(query.subgraphs) });
  });

  app.post('/threads/:thread_id/state', { schema: { params: threadIdParams, body: stateUpdate } }, async (request) => {
    await authorizeThread(services, request, 'threads:update', threadId(request));
    return threads.updateState(threadId(request), withoutNulls(request.body as StateUpdate));
  });

  app.patch(
    '/threads/:thread_id/state',
    { schema: { params: threadIdParams, body: threadPatch } },
    async (request, reply) => {
      await authorizeThread(services, request, 'threads:update', threadId(request));
      await threads.patchStateMetadata(threadId(request), (request.body as { metadata: JsonObject }).metadata);
      return reply.code(204).send();
    },
  );

  app.get('/threads/:thread_id/state/:checkpoint_id', async (request) => {
    await readable(request);
    const params = request.params as ThreadParams & { checkpoint_id: string };
    const query = request.query as { subgraphs?: string };
    return threads.state(params.thread_id, { checkpoint_id: params.checkpoint_id, subgraphs: isTrue(query.subgraphs) });
  });

  app.post(
    '/threads/:thread_id/state/checkpoint',
    { schema: { params: threadIdParams, body: stateAtCheckpoint } },
    async (request) => {
      await readable(request);
      const body = withoutNulls(request.body as { checkpoint?: CheckpointSelector; subgraphs?: boolean | string });
      return threads.state(threadId(request), { checkpoint: body.checkpoint, subgraphs: isTrue(body.subgraphs) });
    },
  );

  app.get(
    '/threads/:thread_id/history',
    { schema: { params: threadIdParams, querystring: historyQuery } },
    async (request) => {
      await readable(request);
      const query = request.query as { limit?: number; before?: string };
      return threads.history(threadId(request), { limit: query.limit ?? 10, before: query.before });
    },
  );

  app.post(
    '/threads/:thread_id/history',
    { schema: { params: threadIdParams, body: historyBody } },
    async (request) => {
      await readable(request);
      const body = withoutNulls(request.body as Partial<HistoryQuery>);
      return threads.history(threadId(request), { ...body, limit: body.limit ?? 10 });
    },
  );
}
