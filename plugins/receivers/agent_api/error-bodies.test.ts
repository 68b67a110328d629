// What a failed request answers: SDK users read the reference server's words (the SDK puts the
// raw body in its error: `HTTP 404: Assistant not found`), clients that ask for JSON get the
// coded body, bad input is JSON for everyone, and the code is in `x-error-code` either way.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Client } from '@langchain/langgraph-sdk';
import { failureOf } from './testing/agent-wire.ts';
import { useTestServer } from './testing/test-server.ts';

describe('agent_api error bodies', () => {
  let url: string;
  let client: Client;
  useTestServer((started) => {
    url = started.url;
    client = started.client;
  });

  it('SDK users read the message itself, as from the reference server', async () => {
    assert.equal(await failureOf(() => client.assistants.get(randomUUID())), 'HTTP 404: Assistant not found');
    const threadId = randomUUID();
    assert.equal(await failureOf(() => client.threads.get(threadId)), `HTTP 404: Thread with ID ${threadId} not found`);
  });

  it('a client without an Accept for JSON gets text with the code in x-error-code', async () => {
    const answer = await fetch(`${url}/assistants/${randomUUID()}`);
    assert.equal(answer.status, 404);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(answer.headers.get('x-error-code'), 'TP_ERR_API_NOT_FOUND');
    assert.equal(await answer.text(), 'Assistant not found');
  });

  it('a client that asks for JSON gets the coded body', async () => {
    const answer = await fetch(`${url}/assistants/${randomUUID()}`, { headers: { accept: 'application/json' } });
    assert.equal(answer.status, 404);
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(answer.headers.get('x-error-code'), 'TP_ERR_API_NOT_FOUND');
    assert.deepEqual(await answer.json(), {
      statusCode: 404,
      error: 'Not Found',
      code: 'TP_ERR_API_NOT_FOUND',
      message: 'Assistant not found',
    });
  });

  it('bad input is the JSON body naming the field, whatever the client accepts', async () => {
    const answer = await fetch(`${url}/assistants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: '*/*' },
      body: JSON.stringify({ graph_id: 'agent', metadata: 'not an object' }),
    });
    assert.equal(answer.status, 422);
    assert.equal(answer.headers.get('x-error-code'), 'TP_ERR_API_INVALID');
    const body = (await answer.json()) as { code: string; message: string };
    assert.equal(body.code, 'TP_ERR_API_INVALID');
    assert.match(body.message, /metadata/);
  });
});

describe('agent_api: a method a path does not take', () => {
  let url: string;
  useTestServer((started) => {
    url = started.url;
  });

  it('405 with Allow and the coded body, on static, parametric and meta routes', async () => {
    const assistant = randomUUID();
    for (const [method, path, allow] of [
      ['PUT', '/assistants', 'POST'],
      ['PUT', `/assistants/${assistant}`, 'GET, HEAD, PATCH, DELETE'],
      ['POST', `/assistants/${assistant}/graph`, 'GET, HEAD'],
      ['DELETE', '/ok', 'GET, HEAD'],
    ] as const) {
      const answer = await fetch(`${url}${path}`, { method, headers: { accept: 'application/json' } });
      assert.equal(answer.status, 405, `${method} ${path}`);
      assert.equal(answer.headers.get('allow'), allow, `${method} ${path}`);
      assert.equal(answer.headers.get('x-error-code'), 'TP_ERR_API_METHOD_NOT_ALLOWED');
      assert.deepEqual(await answer.json(), {
        statusCode: 405,
        error: 'Method Not Allowed',
        code: 'TP_ERR_API_METHOD_NOT_ALLOWED',
        message: `method ${method} is not allowed on ${path}; use ${allow.split(', ').join(' or ')}`,
      });
    }
  });

  it('a client without an Accept for JSON reads the message, as for every other error', async () => {
    const answer = await fetch(`${url}/assistants`, { method: 'PUT' });
    assert.equal(answer.status, 405);
    assert.equal(answer.headers.get('allow'), 'POST');
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(await answer.text(), 'method PUT is not allowed on /assistants; use POST');
  });

  it('an unknown path is still 404', async () => {
    const answer = await fetch(`${url}/nowhere/at/all`, { method: 'POST', headers: { accept: 'application/json' } });
    assert.equal(answer.status, 404);
    assert.equal(answer.headers.get('allow'), null);
    assert.deepEqual(await answer.json(), {
      statusCode: 404,
      error: 'Not Found',
      code: 'TP_ERR_API_NOT_FOUND',
      message: 'Route POST /nowhere/at/all not found',
    });
  });
});

describe('agent_api with CORS: a method a path does not take', () => {
  const origin = 'http://localhost:3000';
  let url: string;
  useTestServer(
    (started) => {
      url = started.url;
    },
    { cors: { allowed_origins: [origin], allowed_headers: [], max_age: 600 } },
  );

  it('a preflight is still answered, another method is 405 and an unknown path 404', async () => {
    const preflight = await fetch(`${url}/assistants/search`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), origin);
    const wrong = await fetch(`${url}/assistants`, { method: 'PUT', headers: { origin, accept: 'application/json' } });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'POST');
    assert.equal(wrong.headers.get('access-control-allow-origin'), origin);
    assert.equal(((await wrong.json()) as { code: string }).code, 'TP_ERR_API_METHOD_NOT_ALLOWED');
    const unknown = await fetch(`${url}/nowhere`, { method: 'DELETE', headers: { origin } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('allow'), null);
  });
});
