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
