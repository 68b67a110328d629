// Assistant routes: create, get, search, count, update (a new active version), set latest,
// versions, delete, and the graph introspection endpoints (graph, schemas, subgraphs). With a
// custom auth handler, each route runs the handler of its `assistants:*` event first, and an
// assistant its filter hides answers 404 (see access.ts).

import type { FastifyRequest } from 'fastify';
import type { AssistantQuery, JsonObject } from '../storage/storage.ts';
import { authorizeAssistant, visibleForCreate } from './access.ts';
import { isTrue, pathParameter, requestParameter, selectFields, setPagination, withoutNulls } from './request-body.ts';
import {
  assistantCount,
  assistantCreate,
  assistantIdParams,
  assistantPatch,
  assistantSearch,
  setLatest,
  versionsQuery,
} from '../api/schemas.ts';
import type { AgentApp, AgentServices } from './services.ts';

export function registerAssistantRoutes(app: AgentApp, services: AgentServices): void {
  const { assistants, graphs, access } = services;
  /** The assistant of the path, after `assistants:read`: one the user may not see is a 404. */
  const readable = async (request: FastifyRequest, assistantId: string) =>
    (await authorizeAssistant(services, request, 'assistants:read', assistantId)).assistant ??
    assistants.get(assistantId);

  app.post('/assistants', { schema: { body: assistantCreate } }, async (request) => {
    const body = withoutNulls(request.body);
    // The handler may set metadata (an owner); the assistant is created with what it leaves.
    const value = { ...body, assistant_id: body.assistant_id, metadata: body.metadata };
    const filters = await access.authorize(request, 'assistants:create', value);
    const id = body.assistant_id;
    const visible = await visibleForCreate(
      access,
      request,
      filters,
      async () => !!id && (await assistants.exists(id)),
      'assistants:read',
      { assistant_id: id ?? '' },
    );
    return assistants.create({ ...body, metadata: value.metadata ?? undefined }, { visible });
  });

  app.post('/assistants/search', { schema: { body: assistantSearch } }, async (request, reply) => {
    const body = withoutNulls(request.body);
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
    const body = withoutNulls(request.body);
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

  app.get('/assistants/:assistant_id', { schema: { params: assistantIdParams } }, async (request) =>
    readable(request, request.params.assistant_id),
  );

  app.patch(
    '/assistants/:assistant_id',
    { schema: { params: assistantIdParams, body: assistantPatch } },
    async (request) => {
      const { assistant_id: assistantId } = request.params;
      const patch = withoutNulls(request.body);
      const value = { ...patch, assistant_id: assistants.resolveId(assistantId) };
      const visible = await access.authorize(request, 'assistants:update', value);
      return assistants.update(assistantId, { ...patch, metadata: value.metadata ?? undefined }, { visible });
    },
  );

  app.delete('/assistants/:assistant_id', { schema: { params: assistantIdParams } }, async (request) => {
    const { assistant_id: assistantId } = request.params;
    const deleteThreads = isTrue(requestParameter(request.query, 'delete_threads'));
    const visible = await access.authorize(request, 'assistants:delete', {
      assistant_id: assistants.resolveId(assistantId),
    });
    // Deleting its threads deletes threads: only those the user could delete one by one.
    const threadsVisible = deleteThreads ? await access.authorize(request, 'threads:delete', {}) : undefined;
    return assistants.delete(assistantId, deleteThreads, { visible, threadsVisible });
  });

  app.post(
    '/assistants/:assistant_id/latest',
    { schema: { params: assistantIdParams, body: setLatest } },
    async (request) => {
      const { assistant_id: assistantId } = request.params;
      const { version } = request.body;
      await authorizeAssistant(services, request, 'assistants:update', assistantId, {
        assistant_id: assistants.resolveId(assistantId),
        version,
      });
      return assistants.setLatest(assistantId, version);
    },
  );

  app.post(
    '/assistants/:assistant_id/versions',
    { schema: { params: assistantIdParams, body: versionsQuery } },
    async (request) => {
      await readable(request, request.params.assistant_id);
      const body = withoutNulls(request.body);
      return assistants.versions(request.params.assistant_id, {
        metadata: body.metadata,
        limit: body.limit ?? 10,
        offset: body.offset ?? 0,
      });
    },
  );

  app.get('/assistants/:assistant_id/graph', { schema: { params: assistantIdParams } }, async (request) => {
    const assistant = await readable(request, request.params.assistant_id);
    const xray = requestParameter(request.query, 'xray');
    // A repeated parameter is an array, which is no depth (and not true).
    const depth = typeof xray === 'string' && /^\d+$/.test(xray) ? Number(xray) : isTrue(xray);
    return graphs.drawable(assistant.graph_id, {
      xray: depth,
      config: { configurable: (assistant.config.configurable as JsonObject) ?? {} },
    });
  });

  app.get('/assistants/:assistant_id/schemas', { schema: { params: assistantIdParams } }, async (request) => {
    const assistant = await readable(request, request.params.assistant_id);
    const schemas = await graphs.schemas(assistant.graph_id, {
      config: { configurable: (assistant.config.configurable as JsonObject) ?? {} },
    });
    return { graph_id: assistant.graph_id, ...schemas };
  });

  const subgraphs = async (request: FastifyRequest, assistantId: string, namespace: string | undefined) => {
    const assistant = await readable(request, assistantId);
    const recurse = requestParameter(request.query, 'recurse');
    return graphs.subgraphs(assistant.graph_id, namespace, isTrue(recurse), {
      configurable: (assistant.config.configurable as JsonObject) ?? {},
    });
  };
  app.get('/assistants/:assistant_id/subgraphs', { schema: { params: assistantIdParams } }, async (request) =>
    subgraphs(request, request.params.assistant_id, undefined),
  );
  // No params schema here (the OpenAPI document has none for this route): both come from the path.
  app.get('/assistants/:assistant_id/subgraphs/:namespace', async (request) =>
    subgraphs(request, pathParameter(request.params, 'assistant_id'), pathParameter(request.params, 'namespace')),
  );
}
