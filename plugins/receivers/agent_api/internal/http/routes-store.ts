// Store routes: the same key-value store graphs use (`config.store`), by namespace and key.

import type { FastifyRequest } from 'fastify';
import type { Item } from '@langchain/langgraph';
import { invalid } from '../api/errors.ts';
import { withoutNulls } from './request-body.ts';
import { StoreFilterError, storeConditions } from '../storage/store/filter.ts';
import { storeDelete, storeGetQuery, storeNamespaces, storePut, storeSearch } from '../api/schemas.ts';
import type { AgentApp, AgentServices } from './services.ts';

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

// Namespace rules, as LangGraph's store applies them (`validateNamespace` in
// @langchain/langgraph-checkpoint), so a namespace the store would refuse is a 422 naming the
// field rather than a 500: labels are non-empty strings without `.` (the wire joins labels with
// it), `:` or NUL; a written namespace is not empty and does not start with the reserved
// `langgraph` label. Checked on the body as sent, before the schema, so that a refusal says which
// rule was broken (a number label is `namespace labels must be strings`, not ajv's message).
const RESERVED_ROOT = 'langgraph';

function namespaceProblem(namespace: unknown, options: { write?: boolean } = {}): string | undefined {
  if (!Array.isArray(namespace)) return undefined; // the schema reports it
  if (namespace.length === 0) return options.write ? 'must not be empty' : undefined;
  for (const label of namespace as unknown[]) {
    if (typeof label !== 'string')
      return `namespace labels must be strings (got ${JSON.stringify(label) ?? String(label)})`;
    if (label === '' || label.includes('.') || label.includes(':') || label.includes('\0')) {
      return `namespace labels cannot be empty or contain periods, colons or NUL characters (got ${JSON.stringify(label)})`;
    }
  }
  if (options.write && namespace[0] === RESERVED_ROOT)
    return `the first label cannot be "${RESERVED_ROOT}" (reserved by LangGraph)`;
  return undefined;
}

function checkNamespace(namespace: unknown, field: string, options: { write?: boolean } = {}): void {
  const problem = namespaceProblem(namespace, options);
  if (problem !== undefined) throw invalid(`${field}: ${problem}`);
}

/**
 * A search filter the store cannot apply (an unknown operator, an operand of the wrong type:
 * `storeConditions`) is a 422 naming the key (`body.filter.score: …`), not an empty result.
 */
function checkFilter(filter: unknown): void {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return; // the schema reports it
  try {
    storeConditions(filter as Record<string, unknown>);
  } catch (error) {
    if (error instanceof StoreFilterError) throw invalid(`body.${error.message}`);
    throw error;
  }
}

/** A field of the body as sent: `preValidation` runs before the schema has checked it. */
const sentField = (request: FastifyRequest, name: string): unknown =>
  typeof request.body === 'object' && request.body !== null ? Reflect.get(request.body, name) : undefined;

export function registerStoreRoutes(app: AgentApp, services: AgentServices): void {
  const { storeItems, access } = services;

  app.put(
    '/store/items',
    {
      schema: { body: storePut },
      preValidation: async (request) =>
        checkNamespace(sentField(request, 'namespace'), 'body.namespace', { write: true }),
    },
    async (request, reply) => {
      const body = { ...request.body };
      // The handler may rewrite namespace, key or value; what it leaves is written.
      const filters = await access.authorize(request, 'store:put', body);
      if (access.enabled) checkNamespace(body.namespace, 'body.namespace', { write: true });
      await storeItems.put(body.namespace, body.key, body.value, filters);
      return reply.code(204).send();
    },
  );

  app.get('/store/items', { schema: { querystring: storeGetQuery } }, async (request) => {
    const { query } = request;
    const namespace = query.namespace ? query.namespace.split('.') : [];
    checkNamespace(namespace, 'querystring.namespace');
    const filters = await access.authorize(request, 'store:get', { namespace, key: query.key });
    const item = await storeItems.get(namespace, query.key, filters);
    return item ? itemToWire(item) : null;
  });

  app.delete(
    '/store/items',
    {
      schema: { body: storeDelete },
      preValidation: async (request) => checkNamespace(sentField(request, 'namespace'), 'body.namespace'),
    },
    async (request, reply) => {
      const body = { ...request.body };
      const filters = await access.authorize(request, 'store:delete', body);
      await storeItems.delete(body.namespace ?? [], body.key, filters);
      return reply.code(204).send();
    },
  );

  app.post(
    '/store/items/search',
    {
      schema: { body: storeSearch },
      preValidation: async (request) => {
        checkNamespace(sentField(request, 'namespace_prefix'), 'body.namespace_prefix');
        checkFilter(sentField(request, 'filter'));
      },
    },
    async (request) => {
      const body = withoutNulls(request.body);
      const filters = await access.authorize(request, 'store:search', {
        namespace: body.namespace_prefix,
        filter: body.filter,
        limit: body.limit,
        offset: body.offset,
        query: body.query,
      });
      const items = await storeItems.search(
        body.namespace_prefix ?? [],
        { filter: body.filter, limit: body.limit ?? 10, offset: body.offset ?? 0, query: body.query },
        filters,
      );
      return { items: items.map(itemToWire) };
    },
  );

  app.post(
    '/store/namespaces',
    {
      schema: { body: storeNamespaces },
      preValidation: async (request) => {
        checkNamespace(sentField(request, 'prefix'), 'body.prefix');
        checkNamespace(sentField(request, 'suffix'), 'body.suffix');
      },
    },
    async (request) => {
      const body = withoutNulls(request.body);
      const filters = await access.authorize(request, 'store:list_namespaces', {
        namespace: body.prefix,
        suffix: body.suffix,
        max_depth: body.max_depth,
        limit: body.limit,
        offset: body.offset,
      });
      const options = {
        prefix: body.prefix,
        suffix: body.suffix,
        maxDepth: body.max_depth,
        limit: body.limit ?? 100,
        offset: body.offset ?? 0,
      };
      return { namespaces: await storeItems.listNamespaces(options, filters) };
    },
  );
}
