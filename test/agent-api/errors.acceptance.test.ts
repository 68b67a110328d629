// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// the Agent Deployment API as plugins/receivers/agent_api/README.md describes it and the reference
// server's (LangGraph.js's `langgraph-api`) wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).
//
// Errors and status codes: 404s, 422s, malformed bodies, status codes of every kind of answer.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { join } from 'node:path';
import type { Client } from '@langchain/langgraph-sdk';
import { failureOf, request } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import { messagesOf } from '../../plugins/receivers/agent_api/testing/types.ts';
import type { Json } from './support.ts';
import { hello, lastAiText, useSharedServer } from './support.ts';

let server: TestServer;
let client: Client;
let url: string;
useSharedServer((started) => {
  server = started;
  client = started.client;
  url = started.url;
});

describe('errors and status codes', () => {
  test('a run on a missing thread: 404 naming it, or created with if_not_exists create', async () => {
    const missing = crypto.randomUUID();
    assert.match(
      await failureOf(() => client.runs.wait(missing, 'chat', { input: hello() })),
      new RegExp(`^HTTP 404: .*Thread with ID ${missing} not found`),
    );
    const values = (await client.runs.wait(missing, 'chat', {
      input: hello('created'),
      ifNotExists: 'create',
    })) as Json;
    assert.equal(lastAiText(values), 'You said: created');
    assert.equal((await client.threads.get(missing)).thread_id, missing);
  });

  test('404s name what was not found', async () => {
    const missing = crypto.randomUUID();
    const thread = await client.threads.create();
    const unknownAssistant = await failureOf(() => client.runs.create(thread.thread_id, missing, { input: {} }));
    assert.match(unknownAssistant, /^HTTP 404: /);
    assert.ok(unknownAssistant.includes(missing), 'the message names the assistant');
    const unknownThread = await failureOf(() => client.runs.create(missing, 'chat', { input: {} }));
    assert.match(unknownThread, /^HTTP 404: .*thread/i);
    const unknownRun = await failureOf(() => client.runs.get(thread.thread_id, missing));
    assert.match(unknownRun, /^HTTP 404: .*run/i);
    assert.match(await failureOf(() => client.runs.join(thread.thread_id, missing)), /^HTTP 404/);
    const raw = await request(url, 'GET', `/threads/${missing}`);
    assert.equal(raw.status, 404);
    assert.match(raw.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(raw.text, new RegExp(missing));
  });

  test('an invalid body is a 422 naming the field; malformed JSON is a 400', async () => {
    const thread = await client.threads.create();
    const noAssistant = await request(url, 'POST', `/threads/${thread.thread_id}/runs`, { body: { input: {} } });
    assert.equal(noAssistant.status, 422);
    assert.match(noAssistant.text, /assistant_id/);
    const badMode = await request(url, 'POST', `/threads/${thread.thread_id}/runs/stream`, {
      body: { assistant_id: 'chat', input: {}, stream_mode: 'bogus' },
    });
    assert.equal(badMode.status, 422);
    assert.match(badMode.text, /stream_mode/);
    const badStrategy = await request(url, 'POST', `/threads/${thread.thread_id}/runs`, {
      body: { assistant_id: 'chat', input: {}, multitask_strategy: 'sometimes' },
    });
    assert.equal(badStrategy.status, 422);
    assert.match(badStrategy.text, /multitask_strategy/);
    const badMetadata = await request(url, 'POST', '/threads', { body: { metadata: 'not an object' } });
    assert.equal(badMetadata.status, 422);
    assert.match(badMetadata.text, /metadata/);
    const badLimit = await request(url, 'POST', '/assistants/search', { body: { limit: 'ten' } });
    assert.equal(badLimit.status, 422);
    assert.match(badLimit.text, /limit/);
    const malformed = await request(url, 'POST', '/threads', {
      rawBody: '{"metadata":',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(malformed.status, 400);
    assert.ok(malformed.text.length > 0);
    const sdk = await failureOf(() => client.assistants.search({ limit: -1 }));
    assert.match(sdk, /^HTTP 422: .*limit/);
  });

  test('bad state updates, configs, webhooks and checkpoints are client errors, never 500', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello() });
    const unknownNode = await request(url, 'POST', `/threads/${thread.thread_id}/state`, {
      body: { values: { messages: [] }, as_node: 'no_such_node' },
    });
    assert.equal(unknownNode.status, 422);
    assert.match(unknownNode.text, /body\.as_node/);
    assert.match(unknownNode.text, /no_such_node/);
    const badValues = await request(url, 'POST', `/threads/${thread.thread_id}/state`, {
      body: { values: 'not a state' },
    });
    assert.equal(badValues.status, 422);
    assert.match(badValues.text, /body\.values/);
    const badLimit = await request(url, 'POST', `/threads/${thread.thread_id}/runs`, {
      body: { assistant_id: 'chat', input: hello(), config: { recursion_limit: 'many' } },
    });
    assert.equal(badLimit.status, 422);
    assert.match(badLimit.text, /config\.recursion_limit/);
    const badAssistantConfig = await request(url, 'POST', '/assistants', {
      body: { graph_id: 'chat', config: { tags: { not: 'a list' } } },
    });
    assert.equal(badAssistantConfig.status, 422);
    assert.match(badAssistantConfig.text, /config\.tags/);
    const badWebhook = await request(url, 'POST', `/threads/${thread.thread_id}/runs`, {
      body: { assistant_id: 'chat', input: hello(), webhook: 'not a url' },
    });
    assert.equal(badWebhook.status, 422);
    assert.match(badWebhook.text, /webhook/);
    const unknownCheckpoint = crypto.randomUUID();
    const fromNowhere = await failureOf(() =>
      client.runs.wait(thread.thread_id, 'chat', { input: hello(), checkpointId: unknownCheckpoint }),
    );
    assert.match(fromNowhere, new RegExp(`^HTTP 404: .*Checkpoint ${unknownCheckpoint} not found`));
    assert.equal((await client.runs.list(thread.thread_id)).length, 1, 'no run was created');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('unknown body fields are ignored', async () => {
    const thread = await request(url, 'POST', '/threads', { body: { metadata: { a: 1 }, ttl: null, surprise: true } });
    assert.equal(thread.status, 200);
    const threadId = (thread.json as Json).thread_id as string;
    const assistant = await request(url, 'POST', '/assistants', {
      body: { graph_id: 'chat', surprise: { nested: 1 } },
    });
    assert.equal(assistant.status, 200);
    const run = await request(url, 'POST', `/threads/${threadId}/runs/wait`, {
      body: { assistant_id: 'chat', input: hello(), durability: 'async', checkpoint_during: true, surprise: 1 },
    });
    assert.equal(run.status, 200);
    assert.equal(messagesOf(run.json).length, 2);
    // The Python SDK sends null for every option left unset: null means "not given".
    const pythonStyle = await request(url, 'POST', `/threads/${threadId}/runs/wait`, {
      body: {
        assistant_id: 'chat',
        input: hello('nulls'),
        command: null,
        stream_mode: null,
        stream_subgraphs: null,
        metadata: null,
        config: null,
        context: null,
        checkpoint: null,
        checkpoint_id: null,
        interrupt_before: null,
        interrupt_after: null,
        feedback_keys: null,
        webhook: null,
        multitask_strategy: null,
        if_not_exists: null,
        on_completion: null,
        after_seconds: null,
        on_disconnect: null,
      },
    });
    assert.equal(pythonStyle.status, 200);
    assert.equal(lastAiText(pythonStyle.json as Json), 'You said: nulls');
    const nullThread = await request(url, 'POST', '/threads', {
      body: { metadata: null, thread_id: null, if_exists: null, supersteps: null },
    });
    assert.equal(nullThread.status, 200);
    assert.deepEqual((nullThread.json as Json).metadata, {});
  });

  test('JSON responses are 200 application/json (no 201), deletes 204', async () => {
    const created = await request(url, 'POST', '/threads', { body: {} });
    assert.equal(created.status, 200);
    assert.match(created.headers.get('content-type') ?? '', /^application\/json/);
    const assistant = await request(url, 'POST', '/assistants', { body: { graph_id: 'chat' } });
    assert.equal(assistant.status, 200);
    assert.match(assistant.headers.get('content-type') ?? '', /^application\/json/);
    const run = await request(url, 'POST', `/threads/${(created.json as Json).thread_id}/runs`, {
      body: { assistant_id: 'chat', input: hello() },
    });
    assert.equal(run.status, 200);
    assert.match(run.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(
      run.headers.get('content-location'),
      `/threads/${(created.json as Json).thread_id}/runs/${(run.json as Json).run_id}`,
    );
    const ok = await request(url, 'GET', '/ok');
    assert.deepEqual(ok.json, { ok: true });
    const unknownRoute = await request(url, 'GET', '/no/such/route');
    assert.equal(unknownRoute.status, 404);
  });

  test('a non-uuid thread id is refused with 404 or 422, never 500', async () => {
    const raw = await request(url, 'GET', '/threads/not-a-uuid');
    assert.ok(raw.status === 404 || raw.status === 422, `status ${raw.status}`);
    const runs = await request(url, 'GET', '/threads/not-a-uuid/runs/also-not');
    assert.ok(runs.status === 404 || runs.status === 422, `status ${runs.status}`);
  });
});
