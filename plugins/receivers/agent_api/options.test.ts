// The server's options and edges: API-key authentication, run time limits, CORS headers, the
// OpenAPI document, /ok and /info, webhooks, batches, and /internal/truncate.

import assert from 'node:assert/strict';
import { fetchAcceptingJson } from './testing/agent-wire.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Client } from '@langchain/langgraph-sdk';
import type { Assistant, Run, Thread } from '@langchain/langgraph-sdk';
import { useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import type { ErrorBody, JsonObject, MessagesValues } from './testing/types.ts';
import { asObject, messagesOf } from './testing/types.ts';

const ask = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('agent_api with API keys and a run time limit', () => {
  let server: TestServer;
  useTestServer(
    (started) => {
      server = started;
    },
    { auth: { api_keys: ['secret-key'] }, run_timeout_ms: 150, max_body_bytes: 2048 } as never,
  );

  it('answers 401 without a valid X-Api-Key, except for /ok and /info', async () => {
    await assert.rejects(server.client.assistants.get('agent'), /HTTP 401: .*X-Api-Key/);
    const wrong = new Client({ apiUrl: server.url, apiKey: 'wrong', callerOptions: { maxRetries: 0 } });
    await assert.rejects(wrong.threads.create(), /HTTP 401/);
    assert.equal((await fetchAcceptingJson(`${server.url}/ok`)).status, 200);
    assert.equal((await fetchAcceptingJson(`${server.url}/info`)).status, 200);
    const right = new Client({ apiUrl: server.url, apiKey: 'secret-key', callerOptions: { maxRetries: 0 } });
    assert.equal((await right.assistants.get('agent')).graph_id, 'agent');
  });

  it('answers 413 for a body over max_body_bytes', async () => {
    const response = await fetchAcceptingJson(`${server.url}/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'secret-key' },
      body: JSON.stringify({ metadata: { padding: 'x'.repeat(4096) } }),
    });
    assert.equal(response.status, 413);
    assert.equal(((await response.json()) as ErrorBody).statusCode, 413);
  });

  it('stops a run that exceeds the time limit with status timeout and an error event', async () => {
    const client = new Client({ apiUrl: server.url, apiKey: 'secret-key', callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    const events: { event: string; data: unknown }[] = [];
    for await (const chunk of client.runs.stream(thread.thread_id, 'sleep', {
      input: { delay_ms: 5000, steps: 50 },
      streamMode: 'custom',
    })) {
      events.push(chunk);
    }
    assert.equal(events.at(-1)!.event, 'error');
    assert.equal(asObject(events.at(-1)!.data).error, 'TimeoutError');
    const [run] = await client.runs.list(thread.thread_id);
    assert.equal(run.status, 'timeout');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'error');
  });
});

describe('agent_api meta routes, CORS, webhooks, batches and truncate', () => {
  let server: TestServer;
  // The webhook receiver below listens on loopback, which webhooks may only reach when allowed.
  useTestServer(
    (started) => {
      server = started;
    },
    {
      webhooks: { allow: ['loopback'] },
      cors: { allowed_origins: ['http://studio.example'] },
      test_routes: true,
    } as never,
  );

  it('serves /ok, /info and the OpenAPI document', async () => {
    assert.deepEqual(await (await fetchAcceptingJson(`${server.url}/ok`)).json(), { ok: true });
    const info = asObject(await (await fetchAcceptingJson(`${server.url}/info`)).json());
    assert.equal(asObject(info.flags).assistants, true);
    assert.ok(Array.isArray(info.graphs) && info.graphs.includes('agent'));
    const paths = asObject(asObject(await (await fetchAcceptingJson(`${server.url}/openapi.json`)).json()).paths);
    assert.ok(paths['/threads/{thread_id}/runs/stream']);
    assert.ok(paths['/assistants/{assistant_id}/latest']);
    const missing = await fetchAcceptingJson(`${server.url}/no/such/route`);
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as ErrorBody).message, /Route GET \/no\/such\/route not found/);
  });

  it('answers CORS requests from a configured origin and exposes Content-Location', async () => {
    const preflight = await fetchAcceptingJson(`${server.url}/threads`, {
      method: 'OPTIONS',
      headers: { origin: 'http://studio.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'http://studio.example');
    const response = await fetchAcceptingJson(`${server.url}/runs`, {
      method: 'POST',
      headers: { origin: 'http://studio.example', 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', input: ask('cors'), on_completion: 'keep' }),
    });
    assert.match(response.headers.get('access-control-expose-headers')!, /content-location/);
    const run = (await response.json()) as Run;
    assert.equal(response.headers.get('content-location'), `/runs/${run.run_id}`);
    await server.client.runs.join(run.thread_id, run.run_id);
    // `on_completion: keep` keeps the thread of a threadless run.
    assert.equal((await server.client.threads.getState<MessagesValues>(run.thread_id)).values.messages.length, 2);
  });

  it('posts the finished run to its webhook', async () => {
    let received!: (body: JsonObject) => void;
    const delivered = new Promise<JsonObject>((resolve) => (received = resolve));
    const hook = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        response.end();
        received(asObject(JSON.parse(text), 'the webhook body'));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      const thread = await server.client.threads.create();
      const run = await server.client.runs.create(thread.thread_id, 'agent', {
        input: ask('hook'),
        webhook: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
      });
      const body = await delivered;
      assert.equal(body.run_id, run.run_id);
      assert.equal(body.status, 'success');
      assert.equal(messagesOf(body.values).at(-1)?.content, 'You said: hook');
      assert.equal(typeof body.run_started_at, 'string');
    } finally {
      await new Promise<void>((resolve) => hook.close(() => resolve()));
    }
  });

  it('creates a batch of threadless runs, and validates each item', async () => {
    const runs = await server.client.runs.createBatch([
      { assistantId: 'agent', input: ask('one') },
      { assistantId: 'sleep', input: { delay_ms: 1 } },
    ]);
    assert.equal(runs.length, 2);
    assert.ok(runs.every((run) => run.status === 'pending'));
    const bad = await fetchAcceptingJson(`${server.url}/runs/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ input: {} }]),
    });
    assert.equal(bad.status, 422);
    assert.match(((await bad.json()) as ErrorBody).message, /body\.0\.assistant_id: is required/);
    const empty = await fetchAcceptingJson(`${server.url}/runs/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[]',
    });
    assert.equal(empty.status, 422);
  });

  it('rejects invalid run bodies with 422 naming the field', async () => {
    const thread = await server.client.threads.create();
    const post = (body: unknown) =>
      fetch(`${server.url}/threads/${thread.thread_id}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const cases: [unknown, RegExp][] = [
      [{ input: {} }, /body\.assistant_id: is required/],
      [
        { assistant_id: 'agent', multitask_strategy: 'later' },
        /body\.multitask_strategy: must be one of "reject", "interrupt", "rollback", "enqueue"/,
      ],
      [{ assistant_id: 'agent', stream_mode: 'everything' }, /body\.stream_mode/],
      [{ assistant_id: 'agent', after_seconds: -1 }, /body\.after_seconds: must be >= 0/],
      [{ assistant_id: 'agent', config: 'x' }, /body\.config: must be object,null/],
    ];
    for (const [body, message] of cases) {
      const response = await post(body);
      assert.equal(response.status, 422, JSON.stringify(body));
      assert.match(((await response.json()) as ErrorBody).message, message);
    }
    const cancel = await fetchAcceptingJson(
      `${server.url}/threads/${thread.thread_id}/runs/00000000-0000-4000-8000-000000000000/cancel`,
      { method: 'POST' },
    );
    assert.equal(cancel.status, 404);
    const badAction = await fetchAcceptingJson(
      `${server.url}/threads/${thread.thread_id}/runs/00000000-0000-4000-8000-000000000000/cancel?action=explode`,
      { method: 'POST' },
    );
    assert.equal(badAction.status, 422);
  });

  it('accepts the bodies the Python SDK sends, with null for every unset option', async () => {
    const post = async (path: string, body: unknown) => {
      const response = await fetchAcceptingJson(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200, `${path}: ${await response.clone().text()}`);
      return (await response.json()) as unknown;
    };
    const thread = (await post('/threads', {
      thread_id: null,
      metadata: null,
      if_exists: null,
      supersteps: null,
      graph_id: null,
      ttl: null,
    })) as Thread;
    const values = await post(`/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: 'agent',
      input: ask('from python'),
      command: null,
      stream_mode: ['values'],
      stream_subgraphs: false,
      stream_resumable: false,
      metadata: null,
      config: null,
      context: null,
      checkpoint: null,
      checkpoint_id: null,
      checkpoint_during: null,
      interrupt_before: null,
      interrupt_after: null,
      feedback_keys: null,
      webhook: null,
      multitask_strategy: null,
      if_not_exists: null,
      on_disconnect: null,
      on_completion: null,
      after_seconds: null,
      durability: null,
    });
    assert.equal(messagesOf(values).at(-1)?.content, 'You said: from python');
    const found = (await post('/threads/search', {
      metadata: null,
      values: null,
      ids: null,
      status: null,
      limit: 10,
      offset: 0,
      sort_by: null,
      sort_order: null,
      select: null,
      extract: null,
    })) as Thread[];
    assert.ok(found.some((t) => t.thread_id === thread.thread_id));
    const assistants = (await post('/assistants/search', {
      metadata: null,
      graph_id: 'agent',
      name: null,
      limit: 10,
      offset: 0,
      sort_by: null,
      sort_order: null,
      select: null,
    })) as Assistant[];
    assert.equal(assistants[0]?.graph_id, 'agent');
  });

  it('truncates runs, threads and user assistants, keeping the system assistants', async () => {
    await server.client.assistants.create({ graphId: 'chat', name: 'gone soon' });
    await server.client.threads.create();
    const response = await fetchAcceptingJson(`${server.url}/internal/truncate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ runs: true, threads: true, assistants: true, checkpointer: true }),
    });
    assert.deepEqual(await response.json(), { ok: true });
    assert.equal(await server.client.threads.count(), 0);
    assert.equal(await server.client.assistants.count(), 8, 'one system assistant per graph');
  });
});
