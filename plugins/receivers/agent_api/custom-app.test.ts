// langgraph.json `http.app`: the deployment's Hono app in front of the API (routes of its own,
// middleware around the API's routes), behind the same guards, and webhooks that are a path of it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from 'tracepipe/testing';
import { startTestServer, useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

const HTTP_APP_LANGGRAPH_JSON = fileURLToPath(new URL('./testing/graphs/http-app/langgraph.json', import.meta.url));

describe('agent_api http.app', () => {
  let server: TestServer;
  useTestServer((started) => (server = started), { langgraph_config: HTTP_APP_LANGGRAPH_JSON });

  it("serves the app's routes beside the API, with its errors and streamed bodies", async () => {
    const hello = await fetch(`${server.url}/custom/hello`, { headers: { 'x-name': 'ada' } });
    assert.equal(hello.status, 200);
    assert.deepEqual(await hello.json(), { hello: 'ada' });
    assert.equal(hello.headers.get('x-deployment-app'), 'seen');

    assert.equal((await fetch(`${server.url}/custom/refused`)).status, 400);

    const counted = await fetch(`${server.url}/custom/count`);
    assert.equal(await counted.text(), 'line 0\nline 1\nline 2\n');

    // Paths neither the app nor the API has are the API's 404.
    const missing = await fetch(`${server.url}/nowhere`, { headers: { accept: 'application/json' } });
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { message: string }).message, /Route GET \/nowhere not found/);
  });

  it('sends each write of a streamed answer as it is made', async () => {
    // The app writes the next line only when told to, so each read can only hold one line: a
    // server that held writes back (buffered, or corked until the stream ends) would hang here.
    const response = await fetch(`${server.url}/custom/lockstep`);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    for (let i = 0; i < 4; i++) {
      const { value } = await reader.read();
      assert.equal(decoder.decode(value), `step ${i}\n`);
      await (await fetch(`${server.url}/custom/next`)).json();
    }
    assert.equal((await reader.read()).done, true);
  });

  it("wraps the API's routes: headers after next(), answers instead of it, reads the body before it", async () => {
    const info = await fetch(`${server.url}/info`);
    assert.equal(info.status, 200);
    assert.equal(((await info.json()) as { context: string }).context, 'js');
    assert.equal(info.headers.get('x-deployment-app'), 'seen');

    const stopped = await fetch(`${server.url}/info?maintenance`);
    assert.equal(stopped.status, 503);
    assert.deepEqual(await stopped.json(), { status: 'maintenance' });

    const thread = await server.client.threads.create({ metadata: { owner: 'ada' } });
    assert.equal(thread.metadata?.owner, 'ada');
    const refused = await fetch(`${server.url}/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { owner: 'mallory' } }),
    });
    assert.equal(refused.status, 403);
    assert.deepEqual(await refused.json(), { refused: 'mallory' });
  });

  it('gives an SDK client without apiUrl this server, and delivers a webhook that is a path to the app', async () => {
    const listed = await fetch(`${server.url}/custom/assistants`);
    assert.deepEqual(await listed.json(), { graphs: ['chat'] });

    const thread = await server.client.threads.create();
    await server.client.runs.wait(thread.thread_id, 'chat', {
      input: { messages: [{ role: 'human', content: 'hello' }] },
      webhook: '/custom/webhook',
    });
    const payloads = await eventually(async () => {
      const received = (await (await fetch(`${server.url}/custom/webhook`)).json()) as {
        thread_id: string;
        status: string;
      }[];
      assert.equal(received.length, 1);
      return received;
    });
    assert.equal(payloads[0]?.thread_id, thread.thread_id);
    assert.equal(payloads[0]?.status, 'success');

    const refused = await fetch(`${server.url}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ assistant_id: 'chat', input: {}, webhook: '//elsewhere.example/hook' }),
    });
    assert.equal(refused.status, 422);
  });
});

describe('agent_api http.app behind API keys', () => {
  it("refuses the app's routes without a key, as the API's", async () => {
    const server = await startTestServer({
      langgraph_config: HTTP_APP_LANGGRAPH_JSON,
      auth: { api_keys: 'app-key' },
    } as Parameters<typeof startTestServer>[0]);
    try {
      assert.equal((await fetch(`${server.url}/custom/hello`)).status, 401);
      const allowed = await fetch(`${server.url}/custom/hello`, { headers: { 'x-api-key': 'app-key' } });
      assert.deepEqual(await allowed.json(), { hello: 'anonymous' });
      // The route's own SDK client passes the key on, and reaches this server.
      const listed = await fetch(`${server.url}/custom/assistants`, { headers: { 'x-api-key': 'app-key' } });
      assert.deepEqual(await listed.json(), { graphs: ['chat'] });
    } finally {
      await server.stop();
    }
  });
});
