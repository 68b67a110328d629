// Assistant routes: create, get, search, count, update (a new active version), set latest,
// versions, delete, and the graph introspection endpoints (graph, schemas, subgraphs).

import type { FastifyInstance } from 'fastify';
import type { AssistantCreate, AssistantPatch } from '../domain/assistants.ts';
import type { AssistantQuery, JsonObject } from '../storage/storage.ts';
import { isTrue, selectFields, setPagination, withoutNulls } from './request-body.ts';
import { assistantCount, assistantCreate, assistantIdParams, assistantPatch, assistantSearch, setLatest, versionsQuery } from './schemas.ts';
import type { AgentServices } from './services.ts';

type IdParams = { assistant_id: string };

export function registerAssistantRoutes(app: FastifyInstance, services: AgentServices): void {
  const { assistants, graphs } = services;

  app.post('/assistants', { schema: { body: assistantCreate } }, async (request) => {
    return assistants.create(withoutNulls(request.body as AssistantCreate) as AssistantCreate);
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
    const page = await assistants.search(query);
    setPagination(reply, page.total, query.offset, query.limit);
    return selectFields(page.items, body.select);
  });

  app.post('/assistants/count', { schema: { body: assistantCount } }, async (request) => {
    const body = withoutNulls(request.body as { graph_id?: string; name?: string; metadata?: JsonObject });
    const page = await assistants.search({ ...body, limit: 0, offset: 0, sort_by: 'created_at', sort_order: 'desc' });
    return page.total;
  });

  app.get('/assistants/:assistant_id', { schema: { params: assistantIdParams } }, async (request) => {
    return assistants.get((request.params as IdParams).assistant_id);
  });

  app.patch('/assistants/:assistant_id', { schema: { params: assistantIdParams, body: assistantPatch } }, async (request) => {
    return assistants.update((request.params as IdParams).assistant_id, withoutNulls(request.body as AssistantPatch));
  });

  app.delete('/assistants/:assistant_id', { schema: { params: assistantIdParams } }, async (request) => {
    const query = request.query as { delete_threads?: string };
    return assistants.delete((request.params as IdParams).assistant_id, isTrue(query.delete_threads));
  });

  app.post('/assistants/:assistant_id/latest', { schema: { params: assistantIdParams, body: setLatest } }, async (request) => {
    return assistants.setLatest((request.params as IdParams).assistant_id, (request.body as { version: number }).version);
  });

  app.post('/assistants/:assistant_id/versions', { schema: { params: assistantIdParams, body: versionsQuery } }, async (request) => {
    const body = withoutNulls(request.body as { metadata?: JsonObject; limit?: number; offset?: number });
    return assistants.versions((request.params as IdParams).assistant_id, {
      metadata: body.metadata,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
    });
  });

  app.get('/assistants/:assistant_id/graph', { schema: { params: assistantIdParams } }, async (request) => {
    const assistant = await assistants.get((request.params as IdParams).assistant_id);
    const xray = (request.query as { xray?: string }).xray;
    const depth = xray !== undefined && /^\d+$/.test(xray) ? Number(xray) : isTrue(xray);
    return graphs.drawable(assistant.graph_id, { xray: depth, config: { configurable: (assistant.config.configurable as JsonObject) ?? {} } });
  });

  app.get('/assistants/:assistant_id/schemas', { schema: { params: assistantIdParams } }, async (request) => {
    const assistant = await assistants.get((request.params as IdParams).assistant_id);
    const schemas = await graphs.schemas(assistant.graph_id, { config: { configurable: (assistant.config.configurable as JsonObject) ?? {} } });
    return { graph_id: assistant.graph_id, ...schemas };
  });

  const subgraphs = async (assistantId: string, namespace: string | undefined, recurse: unknown) => {
    const assistant = await assistants.get(assistantId);
    return graphs.subgraphs(assistant.graph_id, namespace, isTrue(recurse), { configurable: (assistant.config.configurable as JsonObject) ?? {} });
  };
  app.get('/assistants/:assistant_id/subgraphs', { schema: { params: assistantIdParams } }, async (request) => {
    return subgraphs((request.params as IdParams).assistant_id, undefined, (request.query as { recurse?: string }).recurse);
  });
  app.get('/assistants/:assistant_id/subgraphs/:namespace', async (request) => {
    const params = request.params as IdParams & { namespace: string };
    return subgraphs(params.assistant_id, params.namespace, (request.query as { recurse?: string }).recurse);
  });
}
