// Thread routes: create, get, update metadata, delete, search, count, copy, and state: read (now,
// at a checkpoint), update, history.

import type { FastifyInstance } from 'fastify';
import type { CheckpointSelector, HistoryQuery, StateUpdate, ThreadCreate } from '../domain/threads.ts';
import type { JsonObject, ThreadQuery, ThreadStatus } from '../storage/storage.ts';
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
  const { threads } = services;

  app.post('/threads', { schema: { body: threadCreate } }, async (request) => {
    return threads.create(withoutNulls(request.body as ThreadCreate));
  });

  app.post('/threads/search', { schema: { body: threadSearch } }, async (request, reply) => {
    const body = withoutNulls(request.body as Partial<Omit<ThreadQuery, 'sort_by'>> & { sort_by?: ThreadQuery['sort_by'] | 'state_updated_at'; select?: string[] });
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
    const page = await threads.search(query);
    setPagination(reply, page.total, query.offset, query.limit);
    return selectFields(page.items, body.select);
  });

  app.post('/threads/count', { schema: { body: threadCount } }, async (request) => {
    const body = withoutNulls(request.body as { metadata?: JsonObject; values?: JsonObject; status?: ThreadStatus });
    const page = await threads.search({ ...body, limit: 0, offset: 0, sort_by: 'created_at', sort_order: 'desc' });
    return page.total;
  });

  app.get('/threads/:thread_id', { schema: { params: threadIdParams } }, async (request) => {
    return threads.get((request.params as ThreadParams).thread_id);
  });

  app.patch('/threads/:thread_id', { schema: { params: threadIdParams, body: threadPatch } }, async (request) => {
    return threads.patch((request.params as ThreadParams).thread_id, (request.body as { metadata: JsonObject }).metadata);
  });

  app.delete('/threads/:thread_id', { schema: { params: threadIdParams } }, async (request, reply) => {
    await threads.delete((request.params as ThreadParams).thread_id);
    return reply.code(204).send();
  });

  app.post('/threads/:thread_id/copy', { schema: { params: threadIdParams } }, async (request) => {
    return threads.copy((request.params as ThreadParams).thread_id);
  });

  app.get('/threads/:thread_id/state', { schema: { params: threadIdParams } }, async (request) => {
    const query = request.query as { subgraphs?: string };
    return threads.state((request.params as ThreadParams).thread_id, { subgraphs: isTrue(query.subgraphs) });
  });

  app.post('/threads/:thread_id/state', { schema: { params: threadIdParams, body: stateUpdate } }, async (request) => {
    return threads.updateState((request.params as ThreadParams).thread_id, withoutNulls(request.body as StateUpdate));
  });

  app.patch('/threads/:thread_id/state', { schema: { params: threadIdParams, body: threadPatch } }, async (request, reply) => {
    await threads.patchStateMetadata((request.params as ThreadParams).thread_id, (request.body as { metadata: JsonObject }).metadata);
    return reply.code(204).send();
  });

  app.get('/threads/:thread_id/state/:checkpoint_id', async (request) => {
    const params = request.params as ThreadParams & { checkpoint_id: string };
    const query = request.query as { subgraphs?: string };
    return threads.state(params.thread_id, { checkpoint_id: params.checkpoint_id, subgraphs: isTrue(query.subgraphs) });
  });

  app.post('/threads/:thread_id/state/checkpoint', { schema: { params: threadIdParams, body: stateAtCheckpoint } }, async (request) => {
    const body = withoutNulls(request.body as { checkpoint?: CheckpointSelector; subgraphs?: boolean | string });
    return threads.state((request.params as ThreadParams).thread_id, { checkpoint: body.checkpoint, subgraphs: isTrue(body.subgraphs) });
  });

  app.get('/threads/:thread_id/history', { schema: { params: threadIdParams, querystring: historyQuery } }, async (request) => {
    const query = request.query as { limit?: number; before?: string };
    return threads.history((request.params as ThreadParams).thread_id, { limit: query.limit ?? 10, before: query.before });
  });

  app.post('/threads/:thread_id/history', { schema: { params: threadIdParams, body: historyBody } }, async (request) => {
    const body = withoutNulls(request.body as Partial<HistoryQuery>);
    return threads.history((request.params as ThreadParams).thread_id, { ...body, limit: body.limit ?? 10 });
  });
}
