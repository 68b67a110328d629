// Assistant routes: create, get, search, count, update (a new active version), set latest,
// versions, delete, and the graph introspection endpoints (graph, schemas, subgraphs). With a
// custom auth handler, each route runs the handler of its `assistants:*` event first, and an
// assistant its filter hides answers 404 (see access.ts).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AssistantCreate, AssistantPatch } from '../domain/assistants.ts';
import type { AssistantQuery, JsonObject } from '../storage/storage.ts';
import { authorizeAssistant, visibleForCreate } from './access.ts';
import { isTrue, selectFields, setPagination, withoutNulls } from './request-body.ts';
import {
  assistantCount,
  assistantCreate,
  assistantIdParams,
  assistantPatch,
  assistantSearch,
  setLatest,
  versionsQuery,
} from './schemas.ts';
import type { AgentServices } from './services.ts';

type IdParams = { assistant_id: string };

export function registerAssistantRoutes(app: FastifyInstance, services: AgentServices): void {
  const { assistants, graphs, access } = services;
  const assistantId = (request: FastifyRequest) => (request.params as IdParams).assistant_id;
  /** The assistant of the path, after `assistants:read`: one the user may not see is a 404. */
  const readable = async (request: FastifyRequest) =>
    (await authorizeAssistant(services, request, 'assistants:read', assistantId(request))).assistant ??
    assistants.get(assistantId(request));

  app.post('/assistants', { schema: { body: assistantCreate } }, async (request) => {
    const body = withoutNulls(request.body as AssistantCreate) as AssistantCreate;
    // The handler may set metadata (an owner); the assistant is created with what it leaves.
    const value = { ...body, assistant_id: body.assistant_id, metadata: body.metadata };
    const filters = await access.authorize(request, 'assistants:create', value);
    const id = body.assistant_id;
    const visible = await visibleForCreate(
      access,
      request,
      filters,
      async () => !!id && !!(await services.storage.getAssistant(id)),
      'assistants:read',
      { assistant_id: id ?? '' },
    );
    return assistants.create({ ...body, metadata: value.metadata ?? undefined }, { visible });
  });

  app.post('/assistants/search', { schema: { body: assistantSearch } }, async (request, reply) => {
    const body = withoutNulls(request.body as Partial<AssistantQuery> & { select?: string[] });
    const query: AssistantQuery = {
      graph_id: body.graph_id,
      name: body.name,
      metadata: body.metadata,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      sort_by: body.sort_by ?? 'created_at',
      sort_order: body.sort_order ?? 'desc',
    };
    query.auth = await access.authorize(request, 'assistants:search', {
      graph_id: query.graph_id,
      metadata: query.metadata,
      limit: query.limit,
      offset: query.offset,
    });
    const page = await assistants.search(query);
    setPagination(reply, page.total, query.offset, query.limit);
    return selectFields(page.items, body.select);
  });

  app.post('/assistants/count', { schema: { body: assistantCount } }, async (request) => {
    const body = withoutNulls(request.body as { graph_id?: string; name?: string; metadata?: JsonObject });
    const auth = await access.authorize(request, 'assistants:search', {
      graph_id: body.graph_id,
      metadata: body.metadata,
      limit: 0,
      offset: 0,
    });
    const page = await assistants.search({
      ...body,
      auth,
      limit: 0,
      offset: 0,
      sort_by: 'created_at',
      sort_order: 'desc',
    });
    return page.total;
  });

  app.get('/assistants/:assistant_id', { schema: { params: assistantIdParams } }, async (request) => readable(request));

  app.patch(
    '/assistants/:assistant_id',
    { schema: { params: assistantIdParams, body: assistantPatch } },
    async (request) => {
      const patch = withoutNulls(request.body as AssistantPatch);
      const value = { ...patch, assistant_id: assistants.resolveId(assistantId(request)) };
      const visible = await access.authorize(request, 'assistants:update', value);
      return assistants.update(assistantId(request), { ...patch, metadata: value.metadata ?? undefined }, { visible });
    },
  );

  app.delete('/assistants/:assistant_id', { schema: { params: assistantIdParams } }, async (request) => {
    const deleteThreads = isTrue((request.query as { delete_threads?: string }).delete_threads);
    const visible = await access.authorize(request, 'assistants:delete', {
      assistant_id: assistants.resolveId(assistantId(request)),
    });
    // Deleting its threads deletes threads: only those the user could delete one by one.
    const threadsVisible = deleteThreads ? await access.authorize(request, 'threads:delete', {}) : undefined;
    return assistants.delete(assistantId(request), deleteThreads, { visible, threadsVisible });
  });

  app.post(
    '/assistants/:assistant_id/latest',
    { schema: { params: assistantIdParams, body: setLatest } },
    async (request) => {
      const version = (request.body as { version: number }).version;
      await authorizeAssistant(services, request, 'assistants:update', assistantId(request), {
        assistant_id: assistants.resolveId(assistantId(request)),
        version,
      });
      return assistants.setLatest(assistantId(request), version);
    },
  );

  app.post(
    '/assistants/:assistant_id/versions',
    { schema: { params: assistantIdParams, body: versionsQuery } },
    async (request) => {
      await readable(request);
      const body = withoutNulls(request.body as { metadata?: JsonObject; limit?: number; offset?: number });
      return assistants.versions((request.params as IdParams).assistant_id, {
        metadata: body.metadata,
        limit: body.limit ?? 10,
        offset: body.offset ?? 0,
      });
    },
  );

  app.get('/assistants/:assistant_id/graph', { schema: { params: assistantIdParams } }, async (request) => {
    const assistant = await readable(request);
    const xray = (request.query as { xray?: string }).xray;
    const depth = xray !== undefined && /^\d+$/.test(xray) ? Number(xray) : isTrue(xray);
    return graphs.drawable(assistant.graph_id, {
      xray: depth,
      config: { configurable: (assistant.config.configurable as JsonObject) ?? {} },
    });
  });

  app.get('/assistants/:assistant_id/schemas', { schema: { params: assistantIdParams } }, async (request) => {
    const assistant = await readable(request);
    const schemas = await graphs.schemas(assistant.graph_id, {
      config: { configurable: (assistant.config.configurable as JsonObject) ?? {} },
    });
    return { graph_id: assistant.graph_id, ...schemas };
  });

  const subgraphs = async (request: FastifyRequest, namespace: string | undefined) => {
    const assistant = await readable(request);
    const recurse = (request.query as { recurse?: string }).recurse;
    return graphs.subgraphs(assistant.graph_id, namespace, isTrue(recurse), {
      configurable: (assistant.config.configurable as JsonObject) ?? {},
    });
  };
  app.get('/assistants/:assistant_id/subgraphs', { schema: { params: assistantIdParams } }, async (request) =>
    subgraphs(request, undefined),
  );
  app.get('/assistants/:assistant_id/subgraphs/:namespace', async (request) =>
    subgraphs(request, (request.params as { namespace: string }).namespace),
  );
}
