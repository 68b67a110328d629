// Store routes: the same key-value store graphs use (`config.store`), by namespace and key.

import type { FastifyInstance } from 'fastify';
import type { Item } from '@langchain/langgraph';
import { invalid } from '../domain/api-errors.ts';
import { withoutNulls } from './request-body.ts';
import { storeDelete, storeGetQuery, storeNamespaces, storePut, storeSearch } from './schemas.ts';
import type { AgentServices } from './services.ts';

/** The store's camelCase timestamps as the API's snake_case fields. */
function itemToWire(item: Item) {
  return {
    namespace: item.namespace,
    key: item.key,
    value: item.value,
    created_at: new Date(item.createdAt).toISOString(),
    updated_at: new Date(item.updatedAt).toISOString(),
  };
}

function checkNamespace(namespace: readonly string[], field: string): void {
  const bad = namespace.find((label) => label === '' || label.includes('.'));
  if (bad !== undefined) throw invalid(`${field}: namespace labels cannot be empty or contain periods (got '${bad}')`);
}

export function registerStoreRoutes(app: FastifyInstance, services: AgentServices): void {
  const { store } = services;

  app.put('/store/items', { schema: { body: storePut } }, async (request, reply) => {
    const body = request.body as { namespace: string[]; key: string; value: Record<string, unknown> };
    if (body.namespace.length === 0) throw invalid('body.namespace: must not be empty');
    checkNamespace(body.namespace, 'body.namespace');
    await store.put(body.namespace, body.key, body.value);
    return reply.code(204).send();
  });

  app.get('/store/items', { schema: { querystring: storeGetQuery } }, async (request) => {
    const query = request.query as { namespace?: string; key: string };
    const namespace = query.namespace ? query.namespace.split('.') : [];
    const item = await store.get(namespace, query.key);
    return item ? itemToWire(item) : null;
  });

  app.delete('/store/items', { schema: { body: storeDelete } }, async (request, reply) => {
    const body = request.body as { namespace?: string[]; key: string };
    checkNamespace(body.namespace ?? [], 'body.namespace');
    await store.delete(body.namespace ?? [], body.key);
    return reply.code(204).send();
  });

  app.post('/store/items/search', { schema: { body: storeSearch } }, async (request) => {
    const body = withoutNulls(request.body as { namespace_prefix?: string[]; filter?: Record<string, unknown>; limit?: number; offset?: number; query?: string });
    const items = await store.search(body.namespace_prefix ?? [], {
      filter: body.filter,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      query: body.query,
    });
    return { items: items.map(itemToWire) };
  });

  app.post('/store/namespaces', { schema: { body: storeNamespaces } }, async (request) => {
    const body = withoutNulls(request.body as { prefix?: string[]; suffix?: string[]; max_depth?: number; limit?: number; offset?: number });
    const namespaces = await store.listNamespaces({
      prefix: body.prefix,
      suffix: body.suffix,
      maxDepth: body.max_depth,
      limit: body.limit ?? 100,
      offset: body.offset ?? 0,
    });
    return { namespaces };
  });
}
