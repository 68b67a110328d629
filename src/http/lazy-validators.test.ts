// The validators of every server made by createHttpServer: a JSON body is validated as sent (a
// value of the wrong JSON type is refused, never converted), while query strings, path parameters
// and headers, which are text, are converted to the types their schemas name. Defaults and the
// removal of unknown keys apply to bodies as before.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { nopHost } from '../pipeline/testing.ts';
import { createHttpServer, listen } from './server.ts';

describe('request validators', () => {
  let app: FastifyInstance;
  let url: string;
  before(async () => {
    app = createHttpServer({ logger: pino({ level: 'silent' }), host: nopHost(), bodyLimit: 1024 * 1024 });
    const echo = async (request: { body?: unknown; query?: unknown; params?: unknown; headers: unknown }) => ({
      body: request.body ?? null,
      query: request.query,
      params: request.params,
      count: (request.headers as Record<string, unknown>)['x-count'] ?? null,
    });
    app.post(
      '/items/:id',
      {
        schema: {
          params: { type: 'object', properties: { id: { type: 'integer' } } },
          querystring: {
            type: 'object',
            properties: { limit: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
          },
          headers: { type: 'object', properties: { 'x-count': { type: 'integer' } } },
          body: {
            type: 'object',
            additionalProperties: false,
            properties: {
              limit: { type: 'integer' },
              tags: { type: 'array', items: { type: 'string' } },
              name: { type: 'string' },
              flag: { type: 'boolean' },
              mode: { type: 'string', default: 'plain' },
            },
          },
        },
      },
      echo,
    );
    const port = await listen(app, '127.0.0.1', 0);
    url = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await app.close();
  });

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  it('refuses body values of the wrong JSON type instead of converting them, naming the field', async () => {
    for (const [body, message] of [
      [{ limit: '10' }, 'body/limit must be integer'],
      [{ tags: 'x' }, 'body/tags must be array'],
      [{ name: 1 }, 'body/name must be string'],
      [{ flag: 'true' }, 'body/flag must be boolean'],
      [{ flag: null }, 'body/flag must be boolean'],
    ] as const) {
      const response = await post('/items/1', body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.json.message, message, JSON.stringify(body));
    }
  });

  it('applies defaults and removes unknown keys in a body, as before', async () => {
    const response = await post('/items/1', { limit: 3, tags: ['a'], extra: true });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json.body, { limit: 3, tags: ['a'], mode: 'plain' });
  });

  it('converts query strings, path parameters and headers to their schemas’ types', async () => {
    const response = await post('/items/7?limit=10&tags=x', {}, { 'x-count': '5' });
    assert.equal(response.status, 200, JSON.stringify(response.json));
    assert.deepEqual(response.json, {
      body: { mode: 'plain' },
      query: { limit: 10, tags: ['x'] },
      params: { id: 7 },
      count: 5,
    });
  });
});
