// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// spec/agent-deployment-api.md and the reference server's wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as SdkClient } from '@langchain/langgraph-sdk';
import type { Client } from '@langchain/langgraph-sdk';
import { RemoteGraph } from '@langchain/langgraph/remote';
import { startTestServer } from '../plugins/receivers/agent_api/testing/test-server.ts';
import type { TestServer } from '../plugins/receivers/agent_api/testing/test-server.ts';
import {
  collect,
  eventually,
  failureOf,
  request,
  requestStream,
} from '../plugins/receivers/agent_api/testing/agent-wire.ts';
import { anyObject, anyString, assertMatches, matching } from './support/match-object.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// ISO 8601 with a UTC offset, as the spec's resource tables require.
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

type Json = Record<string, any>;

const WEATHER_LANGGRAPH_JSON = fileURLToPath(new URL('./fixtures/graphs/langgraph.json', import.meta.url));

let server: TestServer;
let client: Client;
let url: string;

before(async () => {
  // The webhook test's receiver listens on loopback, which webhooks may only reach when allowed.
  server = await startTestServer({ webhooks: { allow: ['loopback'] } } as never);
  client = server.client;
  url = server.url;
});

after(async () => {
  await server.stop();
});

const hello = (content = 'hello') => ({ messages: [{ role: 'user', content }] });

/** A run on `sleep` that stays in flight until it is cancelled or replaced. */
const longSleep = { delay_ms: 60_000, steps: 600 };

async function waitForStatus(threadId: string, runId: string, status: string): Promise<void> {
  await eventually(
    () => client.runs.get(threadId, runId),
    (run) => run.status === status,
  );
}

function lastAiText(values: Json): string {
  const messages = values.messages as Json[];
  const last = messages[messages.length - 1]!;
  return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
}

describe('the spec example flow', () => {
  test('assistant with context → background run on a thread → state → PATCH v2 → latest v1 → delete', async () => {
    const assistant = await client.assistants.create({
      graphId: 'chat',
      name: 'Pirate',
      context: { model_name: 'local-echo', system_prompt: 'Answer like a pirate.' },
      metadata: { team: 'qa' },
    });
    assert.match(assistant.assistant_id, UUID);
    assert.equal(assistant.graph_id, 'chat');
    assert.equal(assistant.name, 'Pirate');
    assert.deepEqual(assistant.context, { model_name: 'local-echo', system_prompt: 'Answer like a pirate.' });
    assert.deepEqual(assistant.metadata, { team: 'qa' });
    assert.match(assistant.created_at, ISO);
    assert.match(assistant.updated_at, ISO);
    assert.equal(assistant.version, 1);

    // The thread record as the spec lists it, read off the wire.
    const created = await request(url, 'POST', '/threads', { body: {} });
    assert.equal(created.status, 200);
    const thread = created.json as Json;
    assert.match(thread.thread_id, UUID);
    assert.match(thread.created_at, ISO);
    assert.match(thread.updated_at, ISO);
    assert.deepEqual(thread.metadata, {});
    assert.equal(thread.status, 'idle');
    assert.deepEqual(thread.config, {});
    assert.ok('values' in thread, 'a new thread carries `values`');
    assert.equal(thread.values, null);

    const runsBefore = await client.runs.list(thread.thread_id);
    assert.deepEqual(runsBefore, []);

    let announced: { run_id: string; thread_id?: string } | undefined;
    const run = await client.runs.create(thread.thread_id, assistant.assistant_id, {
      input: hello(),
      onRunCreated: (meta) => {
        announced = meta;
      },
    });
    assert.equal(run.status, 'pending');
    assert.match(run.run_id, UUID);
    assert.equal(run.thread_id, thread.thread_id);
    assert.equal(run.assistant_id, assistant.assistant_id);
    assert.equal(run.multitask_strategy, 'reject');
    assert.match(run.created_at, ISO);
    assert.match(run.updated_at, ISO);
    assert.equal(typeof run.metadata, 'object');
    assert.deepEqual(announced, { run_id: run.run_id, thread_id: thread.thread_id });

    const kwargs = (run as unknown as { kwargs: Json }).kwargs;
    assert.deepEqual(kwargs.input, hello());
    assert.deepEqual(kwargs.stream_mode, ['values']);
    assert.equal(kwargs.webhook, null);
    assert.equal(kwargs.temporary, false);
    assert.equal(kwargs.feedback_keys, null);
    assert.equal(kwargs.interrupt_before, null);
    assert.equal(kwargs.interrupt_after, null);
    assert.equal(typeof kwargs.config.metadata, 'object');
    const configurable = kwargs.config.configurable as Json;
    assert.equal(configurable.run_id, run.run_id);
    assert.equal(configurable.thread_id, thread.thread_id);
    assert.equal(configurable.graph_id, 'chat');
    assert.equal(configurable.assistant_id, assistant.assistant_id);
    assert.ok('user_id' in configurable, 'configurable holds user_id');
    assert.ok('checkpoint_id' in configurable, 'configurable holds checkpoint_id');
    assert.equal(configurable.checkpoint_id, null);

    const joined = (await client.runs.join(thread.thread_id, run.run_id)) as Json;
    assert.equal(joined.messages.length, 2);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'success');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
    const listed = await client.runs.list(thread.thread_id);
    assert.deepEqual(
      listed.map((r) => r.run_id),
      [run.run_id],
    );

    const state = (await request(url, 'GET', `/threads/${thread.thread_id}/state`)).json as Json;
    const [human, ai] = state.values.messages as Json[];
    for (const message of [human!, ai!]) {
      for (const key of ['type', 'content', 'additional_kwargs', 'response_metadata', 'name', 'id', 'example']) {
        assert.ok(key in message, `message ${message.type} has \`${key}\``);
      }
      assert.equal(typeof message.id, 'string');
      assert.equal(message.example, false);
      assert.deepEqual(message.additional_kwargs, message.additional_kwargs ?? {});
      assert.equal(typeof message.response_metadata, 'object');
      assert.ok(message.name === null || typeof message.name === 'string');
    }
    assert.equal(human!.type, 'human');
    assert.equal(human!.content, 'hello');
    assert.equal(ai!.type, 'ai');
    assert.equal(ai!.content, '(Answer like a pirate.) You said: hello');
    assert.deepEqual(ai!.tool_calls, []);
    assert.deepEqual(ai!.invalid_tool_calls, []);
    for (const key of ['input_tokens', 'output_tokens', 'total_tokens']) {
      assert.ok(Number.isInteger(ai!.usage_metadata[key]), `usage_metadata.${key} is an integer`);
    }
    assert.deepEqual(state.next, []);
    assert.deepEqual(state.tasks, []);
    assert.ok(Number.isInteger(state.metadata.step));
    assert.equal(state.metadata.run_id, run.run_id);
    assert.equal(typeof state.metadata.source, 'string');
    assert.equal(state.metadata.graph_id, 'chat');
    assert.equal(state.metadata.thread_id, thread.thread_id);
    assert.equal(state.metadata.assistant_id, assistant.assistant_id);
    for (const key of ['user_id', 'created_by']) assert.ok(key in state.metadata, `state metadata holds ${key}`);
    assert.equal(typeof state.metadata.writes, 'object');
    assert.equal(
      state.metadata.writes.call_model.messages[0].content,
      '(Answer like a pirate.) You said: hello',
      'writes are keyed by node name',
    );
    assert.match(state.created_at, ISO);
    assert.equal(typeof state.checkpoint_id, 'string');
    assert.equal(typeof state.parent_checkpoint_id, 'string');

    // PATCH: version 2 from the supplied data alone, active at once.
    const patched = await request(url, 'PATCH', `/assistants/${assistant.assistant_id}`, {
      body: { context: { model_name: 'local-echo', system_prompt: 'Answer like a robot.' } },
    });
    assert.equal(patched.status, 200);
    const v2 = patched.json as Json;
    assert.equal(v2.version, 2);
    assert.deepEqual(v2.context, { model_name: 'local-echo', system_prompt: 'Answer like a robot.' });
    assert.deepEqual(v2.metadata, {}, 'metadata is not inherited from version 1');
    assert.equal((await client.assistants.get(assistant.assistant_id)).version, 2);
    const versions = await client.assistants.getVersions(assistant.assistant_id);
    assert.deepEqual(
      versions.map((v) => v.version),
      [2, 1],
    );
    const robot = await client.runs.wait(null, assistant.assistant_id, { input: hello() });
    assert.equal(lastAiText(robot as Json), '(Answer like a robot.) You said: hello');

    // POST /latest back to version 1.
    const latest = await request(url, 'POST', `/assistants/${assistant.assistant_id}/latest`, { body: { version: 1 } });
    assert.equal(latest.status, 200);
    assert.equal((latest.json as Json).version, 1);
    const v1 = await client.assistants.get(assistant.assistant_id);
    assert.equal(v1.version, 1);
    assert.deepEqual(v1.context, { model_name: 'local-echo', system_prompt: 'Answer like a pirate.' });
    assert.deepEqual(v1.metadata, { team: 'qa' });
    const thread2 = await client.threads.create();
    const pirate = await client.runs.wait(thread2.thread_id, assistant.assistant_id, { input: hello() });
    assert.equal(lastAiText(pirate as Json), '(Answer like a pirate.) You said: hello');

    await client.assistants.delete(assistant.assistant_id);
    const gone = await failureOf(() => client.assistants.get(assistant.assistant_id));
    assert.match(gone, /^HTTP 404: .*not found/i);
    assert.match(await failureOf(() => client.assistants.getVersions(assistant.assistant_id)), /^HTTP 404/);
    assert.match(
      await failureOf(() => client.runs.wait(null, assistant.assistant_id, { input: hello() })),
      /^HTTP 404: .*not found/i,
    );
  });

  test('a streamed run with stream_mode updates: metadata first, then one event per node with its messages', async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'chat', { input: hello(), streamMode: 'updates' }),
    );
    assert.equal(parts[0]!.event, 'metadata');
    assert.match((parts[0]!.data as Json).run_id, UUID);
    const updates = parts.slice(1);
    assert.ok(updates.length >= 1);
    assert.ok(updates.every((p) => p.event === 'updates'));
    const node = (updates.find((p) => 'call_model' in (p.data as Json))!.data as Json).call_model;
    assert.equal(node.messages[0].type, 'ai');
    assert.equal(node.messages[0].content, 'You said: hello');
  });
});

describe('the spec message fields on a tool-calling run', () => {
  test('human, ai (with tool_calls and integer usage), tool (tool_call_id, artifact, status)', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'tools', {
      input: { messages: [{ role: 'user', content: 'Weather in Paris?' }] },
    });
    const messages = (await request(url, 'GET', `/threads/${thread.thread_id}/state`)).json as Json;
    const [human, call, tool, answer] = messages.values.messages as Json[];
    assert.deepEqual(
      [human, call, tool, answer].map((m) => m!.type),
      ['human', 'ai', 'tool', 'ai'],
    );
    for (const message of [human!, call!, tool!, answer!]) {
      for (const key of ['content', 'additional_kwargs', 'response_metadata', 'name', 'id', 'example'])
        assert.ok(key in message, `${message.type} has ${key}`);
    }
    for (const ai of [call!, answer!]) {
      assert.ok(Array.isArray(ai.tool_calls) && Array.isArray(ai.invalid_tool_calls));
      for (const key of ['input_tokens', 'output_tokens', 'total_tokens'])
        assert.ok(Number.isInteger(ai.usage_metadata[key]));
    }
    assertMatches(call!.tool_calls, [{ id: anyString, name: 'get_weather', args: { city: 'Paris' } }]);
    assert.equal(tool!.tool_call_id, call!.tool_calls[0].id);
    assert.ok('artifact' in tool!, 'tool message has artifact');
    assert.equal(tool!.status, 'success');
    assert.equal(tool!.content, "It's always sunny in Paris.");
  });
});

describe('assistants', () => {
  test('a graph id works wherever an assistant id does, naming the system assistant (uuid5)', async () => {
    const system = await client.assistants.get('agent');
    assert.equal(system.assistant_id, 'fe096781-5601-53d2-b2f6-0d3403f7e9ca');
    assert.equal(system.graph_id, 'agent');
    assert.equal(system.name, 'agent');
    assert.equal(system.metadata?.created_by, 'system');
    const byId = await client.assistants.get(system.assistant_id);
    assert.equal(byId.assistant_id, system.assistant_id);
    const values = (await client.runs.wait(null, 'agent', { input: hello('hi') })) as Json;
    assert.equal(lastAiText(values), 'You said: hi');
  });

  test('context: absent keys fall back to the graph defaults; a run context overrides key by key', async () => {
    const bare = await client.assistants.create({ graphId: 'chat' });
    assert.deepEqual(bare.context, {});
    assert.equal(
      lastAiText((await client.runs.wait(null, bare.assistant_id, { input: hello() })) as Json),
      'You said: hello',
    );
    const partial = await client.assistants.create({ graphId: 'chat', context: { model_name: 'local-echo' } });
    assert.equal(
      lastAiText((await client.runs.wait(null, partial.assistant_id, { input: hello() })) as Json),
      'You said: hello',
    );
    const pirate = await client.assistants.create({
      graphId: 'chat',
      context: { model_name: 'local-echo', system_prompt: 'Answer like a pirate.' },
    });
    const overridden = await client.runs.wait(null, pirate.assistant_id, {
      input: hello(),
      context: { system_prompt: 'Answer like a poet.' },
    });
    assert.equal(lastAiText(overridden as Json), '(Answer like a poet.) You said: hello');
    assert.equal(
      lastAiText((await client.runs.wait(null, pirate.assistant_id, { input: hello() })) as Json),
      '(Answer like a pirate.) You said: hello',
    );
  });

  test('create, read, update (name, description, metadata), delete', async () => {
    const created = await client.assistants.create({
      graphId: 'chat',
      name: 'Crud',
      description: 'first',
      metadata: { a: 1 },
    });
    assert.equal((created as Json).description, 'first');
    const read = await client.assistants.get(created.assistant_id);
    assert.deepEqual(read, created);
    const updated = await client.assistants.update(created.assistant_id, {
      name: 'Crud 2',
      description: 'second',
      metadata: { b: 2 },
    });
    assert.equal(updated.name, 'Crud 2');
    assert.equal((updated as Json).description, 'second');
    assert.deepEqual(updated.metadata, { b: 2 });
    assert.equal(updated.version, 2);
    assert.equal(updated.graph_id, 'chat');
    const deleted = await request(url, 'DELETE', `/assistants/${created.assistant_id}`);
    assert.ok(deleted.status === 200 || deleted.status === 204, `delete answers ${deleted.status}`);
    assert.match(await failureOf(() => client.assistants.get(created.assistant_id)), /^HTTP 404: .*not found/i);
    assert.match(await failureOf(() => client.assistants.delete(created.assistant_id)), /^HTTP 404/);
    assert.match(await failureOf(() => client.assistants.update(created.assistant_id, { name: 'x' })), /^HTTP 404/);
    assert.match(await failureOf(() => client.assistants.setLatest(created.assistant_id, 1)), /^HTTP 404/);
  });

  test('an explicit assistant id: if_exists raise → 409, do_nothing → the existing one', async () => {
    const assistantId = crypto.randomUUID();
    const first = await client.assistants.create({ graphId: 'chat', assistantId, name: 'Original' });
    assert.equal(first.assistant_id, assistantId);
    const conflict = await failureOf(() => client.assistants.create({ graphId: 'chat', assistantId, name: 'Again' }));
    assert.match(conflict, /^HTTP 409: .*exists/i);
    const same = await client.assistants.create({
      graphId: 'chat',
      assistantId,
      name: 'Again',
      ifExists: 'do_nothing',
    });
    assert.equal(same.name, 'Original');
  });

  test('an unknown or missing graph_id is a 422 naming the field', async () => {
    const unknown = await request(url, 'POST', '/assistants', { body: { graph_id: 'no_such_graph' } });
    assert.equal(unknown.status, 422);
    assert.match(unknown.text, /graph_id/);
    assert.match(unknown.text, /no_such_graph/);
    const missing = await request(url, 'POST', '/assistants', { body: { name: 'x' } });
    assert.equal(missing.status, 422);
    assert.match(missing.text, /graph_id/);
    const badType = await request(url, 'POST', '/assistants', { body: { graph_id: 'chat', metadata: 'x' } });
    assert.equal(badType.status, 422);
    assert.match(badType.text, /metadata/);
  });

  test('search filters, pagination, sorting and count', async () => {
    const suite = crypto.randomUUID();
    const made = [];
    for (const name of ['Alpha Search', 'Beta Search', 'Gamma Search']) {
      made.push(await client.assistants.create({ graphId: 'chat', name, metadata: { suite } }));
    }
    await client.assistants.create({ graphId: 'tools', name: 'Delta Search', metadata: { suite } });

    const all = await client.assistants.search({ metadata: { suite }, graphId: 'chat' });
    assert.deepEqual(
      all.map((a) => a.name),
      ['Gamma Search', 'Beta Search', 'Alpha Search'],
      'newest first by default',
    );
    assert.equal(await client.assistants.count({ metadata: { suite } }), 4);
    assert.equal(await client.assistants.count({ metadata: { suite }, graphId: 'tools' }), 1);
    const byName = await client.assistants.search({ metadata: { suite }, name: 'bEtA' });
    assert.deepEqual(
      byName.map((a) => a.assistant_id),
      [made[1]!.assistant_id],
    );

    const page1 = await client.assistants.search({ metadata: { suite }, limit: 2, offset: 0, includePagination: true });
    assert.equal(page1.assistants.length, 2);
    assert.equal(page1.next, '2');
    const page2 = await client.assistants.search({ metadata: { suite }, limit: 2, offset: 2, includePagination: true });
    assert.equal(page2.assistants.length, 2);
    assert.equal(page2.next ?? null, null, 'no next offset on the last page');
    const ids = [...page1.assistants, ...page2.assistants].map((a) => a.assistant_id);
    assert.equal(new Set(ids).size, 4);

    const raw = await request(url, 'POST', '/assistants/search', { body: { metadata: { suite }, limit: 3 } });
    assert.equal(raw.status, 200);
    assert.match(raw.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(raw.headers.get('x-pagination-total'), '4');

    const ascending = await client.assistants.search({ metadata: { suite }, sortBy: 'name', sortOrder: 'asc' });
    assert.deepEqual(
      ascending.map((a) => a.name),
      ['Alpha Search', 'Beta Search', 'Delta Search', 'Gamma Search'],
    );

    const counted = await request(url, 'POST', '/assistants/count', { body: { metadata: { suite } } });
    assert.equal(counted.text.trim(), '4');
  });

  test('versions: newest first, limit/offset, metadata filter, set latest, unknown version 404', async () => {
    const assistant = await client.assistants.create({ graphId: 'chat', name: 'Versioned' });
    for (let i = 1; i <= 3; i++) await client.assistants.update(assistant.assistant_id, { metadata: { v: i } });
    const versions = await client.assistants.getVersions(assistant.assistant_id);
    assert.deepEqual(
      versions.map((v) => v.version),
      [4, 3, 2, 1],
    );
    for (const version of versions) {
      assert.equal(version.assistant_id, assistant.assistant_id);
      assert.equal(version.graph_id, 'chat');
      assert.match(version.created_at, ISO);
    }
    assert.deepEqual(
      (await client.assistants.getVersions(assistant.assistant_id, { limit: 2 })).map((v) => v.version),
      [4, 3],
    );
    assert.deepEqual(
      (await client.assistants.getVersions(assistant.assistant_id, { limit: 2, offset: 2 })).map((v) => v.version),
      [2, 1],
    );
    assert.deepEqual(
      (await client.assistants.getVersions(assistant.assistant_id, { metadata: { v: 1 } })).map((v) => v.version),
      [2],
    );

    const back = await client.assistants.setLatest(assistant.assistant_id, 2);
    assert.equal(back.version, 2);
    assert.deepEqual(back.metadata, { v: 1 });
    const next = await client.assistants.update(assistant.assistant_id, { metadata: { v: 5 } });
    assert.equal(next.version, 5, 'a new version after set-latest is max + 1');
    assert.match(
      await failureOf(() => client.assistants.setLatest(assistant.assistant_id, 99)),
      /^HTTP 404: .*version/i,
    );
    const missingVersion = await request(url, 'POST', `/assistants/${assistant.assistant_id}/latest`, { body: {} });
    assert.equal(missingVersion.status, 422);
    assert.match(missingVersion.text, /version/);
  });

  test('delete with delete_threads removes the threads the assistant ran on', async () => {
    const assistant = await client.assistants.create({ graphId: 'chat' });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, assistant.assistant_id, { input: hello() });
    const kept = await client.threads.create();
    await client.assistants.delete(assistant.assistant_id, { deleteThreads: true });
    const gone = await failureOf(() => client.threads.get(thread.thread_id));
    assert.match(gone, /^HTTP 404: .*not found/i);
    assert.ok(gone.includes(thread.thread_id), 'the message names the thread');
    assert.equal((await client.threads.get(kept.thread_id)).thread_id, kept.thread_id);
  });

  test('deleting an assistant stops its runs in flight; their thread is left idle', async () => {
    const assistant = await client.assistants.create({ graphId: 'sleep' });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, assistant.assistant_id, {
      input: { delay_ms: 1500, steps: 15 },
    });
    await waitForStatus(thread.thread_id, run.run_id, 'running');
    await client.assistants.delete(assistant.assistant_id);
    assert.match(await failureOf(() => client.runs.get(thread.thread_id, run.run_id)), /^HTTP 404/);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
    // Had the run gone on, its answer would land in the thread after its 1.5 s.
    const later = await client.runs.wait(thread.thread_id, 'sleep', { input: { delay_ms: 1600 } });
    assert.deepEqual(
      ((later as Json).messages as Json[]).map((m) => m.content),
      ['finished after 1600 ms'],
    );
  });

  test('graph and schemas of an assistant', async () => {
    const graph = await client.assistants.getGraph('chat');
    assert.ok(graph.nodes.some((node) => node.id === 'call_model'));
    assert.ok(graph.edges.length >= 2);
    const schemas = await client.assistants.getSchemas('chat');
    assert.equal(schemas.graph_id, 'chat');
    assert.ok(JSON.stringify(schemas.context_schema).includes('system_prompt'));
    assert.ok(JSON.stringify(schemas.state_schema).includes('messages'));
  });
});

describe('threads', () => {
  test('create, read, update metadata (merged), delete (204), then 404 naming the thread', async () => {
    const thread = await client.threads.create({ metadata: { owner: 'qa' } });
    assert.deepEqual(thread.metadata, { owner: 'qa' });
    const updated = await client.threads.update(thread.thread_id, { metadata: { topic: 'x' } });
    assert.deepEqual(updated.metadata, { owner: 'qa', topic: 'x' });
    assert.deepEqual((await client.threads.get(thread.thread_id)).metadata, { owner: 'qa', topic: 'x' });
    const deleted = await request(url, 'DELETE', `/threads/${thread.thread_id}`);
    assert.equal(deleted.status, 204);
    const gone = await failureOf(() => client.threads.get(thread.thread_id));
    assert.match(gone, /^HTTP 404: .*not found/i);
    assert.ok(gone.includes(thread.thread_id));
    assert.match(await failureOf(() => client.threads.delete(thread.thread_id)), /^HTTP 404/);
    assert.match(await failureOf(() => client.threads.update(thread.thread_id, { metadata: {} })), /^HTTP 404/);
    assert.match(await failureOf(() => client.threads.getState(thread.thread_id)), /^HTTP 404/);
    assert.match(await failureOf(() => client.threads.getHistory(thread.thread_id)), /^HTTP 404/);
  });

  test('an explicit thread id: if_exists raise → 409, do_nothing → the existing one', async () => {
    const threadId = crypto.randomUUID();
    await client.threads.create({ threadId, metadata: { n: 1 } });
    assert.match(await failureOf(() => client.threads.create({ threadId })), /^HTTP 409: .*exists/i);
    const same = await client.threads.create({ threadId, ifExists: 'do_nothing', metadata: { n: 2 } });
    assert.deepEqual(same.metadata, { n: 1 });
  });

  test('search by metadata, status and ids; pagination and sort; count', async () => {
    const suite = crypto.randomUUID();
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await client.threads.create({ metadata: { suite, i } }));
    const found = await client.threads.search({ metadata: { suite } });
    assert.deepEqual(
      found.map((t) => t.thread_id),
      made.map((t) => t.thread_id).reverse(),
      'newest first by default',
    );
    const asc = await client.threads.search({ metadata: { suite }, sortBy: 'created_at', sortOrder: 'asc' });
    assert.deepEqual(
      asc.map((t) => t.thread_id),
      made.map((t) => t.thread_id),
    );
    const page = await client.threads.search({ metadata: { suite }, offset: 1, limit: 1 });
    assert.deepEqual(
      page.map((t) => t.thread_id),
      [made[1]!.thread_id],
    );
    const byMeta = await client.threads.search({ metadata: { suite, i: 2 } });
    assert.deepEqual(
      byMeta.map((t) => t.thread_id),
      [made[2]!.thread_id],
    );
    const byIds = await client.threads.search({ ids: [made[0]!.thread_id, made[2]!.thread_id] });
    assert.deepEqual(new Set(byIds.map((t) => t.thread_id)), new Set([made[0]!.thread_id, made[2]!.thread_id]));
    await client.runs.wait(made[0]!.thread_id, 'error', { input: {}, raiseError: false });
    assert.deepEqual(
      (await client.threads.search({ metadata: { suite }, status: 'error' })).map((t) => t.thread_id),
      [made[0]!.thread_id],
    );
    const recent = await client.threads.search({ metadata: { suite }, sortBy: 'state_updated_at', sortOrder: 'desc' });
    assert.equal(recent[0]!.thread_id, made[0]!.thread_id, 'every sort key the SDK offers is accepted');
    assert.equal(await client.threads.count({ metadata: { suite } }), 3);
    assert.equal(await client.threads.count({ metadata: { suite }, status: 'idle' }), 2);
  });

  test('copy: same state and history, independent afterwards', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello('one') });
    const copy = await client.threads.copy(thread.thread_id);
    assert.notEqual(copy.thread_id, thread.thread_id);
    assert.equal(copy.status, 'idle');
    const original = await client.threads.getState<Json>(thread.thread_id);
    const copied = await client.threads.getState<Json>(copy.thread_id);
    assert.deepEqual(copied.values, original.values);
    assert.deepEqual(copied.next, original.next);
    const originalHistory = await client.threads.getHistory(thread.thread_id);
    const copiedHistory = await client.threads.getHistory(copy.thread_id);
    assert.equal(copiedHistory.length, originalHistory.length);
    assert.deepEqual(
      copiedHistory.map((s) => s.values),
      originalHistory.map((s) => s.values),
    );

    await client.runs.wait(copy.thread_id, 'chat', { input: hello('two') });
    assert.equal(((await client.threads.getState<Json>(copy.thread_id)).values.messages as Json[]).length, 4);
    assert.equal(((await client.threads.getState<Json>(thread.thread_id)).values.messages as Json[]).length, 2);
    await client.threads.updateState(copy.thread_id, { values: { messages: [{ role: 'user', content: 'extra' }] } });
    assert.equal(((await client.threads.getState<Json>(thread.thread_id)).values.messages as Json[]).length, 2);
    assert.match(await failureOf(() => client.threads.copy(crypto.randomUUID())), /^HTTP 404/);
  });

  test('state and history: empty thread, after a run, limit, at a checkpoint', async () => {
    const thread = await client.threads.create();
    assert.deepEqual(await client.threads.getHistory(thread.thread_id), []);
    const empty = await client.threads.getState(thread.thread_id);
    assert.deepEqual(empty.next, []);
    await client.runs.wait(thread.thread_id, 'chat', { input: hello() });
    const history = await client.threads.getHistory<Json>(thread.thread_id);
    assert.ok(history.length >= 2, `history has ${history.length} entries`);
    assert.equal((history[0]!.values.messages as Json[]).length, 2, 'newest first');
    assert.deepEqual(history[history.length - 1]!.next, ['__start__']);
    assert.equal((await client.threads.getHistory(thread.thread_id, { limit: 1 })).length, 1);
    const older = history[1]!;
    const atCheckpoint = await client.threads.getState<Json>(thread.thread_id, older.checkpoint!.checkpoint_id!);
    assert.deepEqual(atCheckpoint.values, older.values);
    assert.deepEqual(atCheckpoint.metadata, older.metadata);
    const byBody = await request(url, 'POST', `/threads/${thread.thread_id}/state/checkpoint`, {
      body: { checkpoint: { checkpoint_id: older.checkpoint!.checkpoint_id } },
    });
    assert.equal(byBody.status, 200);
    assert.deepEqual((byBody.json as Json).values, older.values);
    // Writes are keyed by the node that produced each checkpoint.
    assert.deepEqual(Object.keys(history[0]!.metadata!.writes as Json), ['call_model']);
    const unknown = crypto.randomUUID();
    const missing = await request(url, 'GET', `/threads/${thread.thread_id}/state/${unknown}`);
    assert.equal(missing.status, 404);
    assert.match(missing.text, new RegExp(unknown));
    const missingByBody = await request(url, 'POST', `/threads/${thread.thread_id}/state/checkpoint`, {
      body: { checkpoint: { checkpoint_id: unknown } },
    });
    assert.equal(missingByBody.status, 404);
  });

  test('update state: values written as a node, visible in state and history', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello() });
    const before = await client.threads.getHistory(thread.thread_id);
    // The server answers `{checkpoint}` (as the reference servers do), whatever the SDK's type says.
    const result = (await client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'user', content: 'added by hand' }] },
      asNode: 'call_model',
    })) as unknown as { checkpoint: Json };
    assert.equal(typeof result.checkpoint.checkpoint_id, 'string');
    const state = await client.threads.getState<Json>(thread.thread_id);
    const messages = state.values.messages as Json[];
    assert.equal(messages.length, 3);
    assert.equal(messages[2]!.content, 'added by hand');
    assert.equal(state.checkpoint.checkpoint_id, result.checkpoint.checkpoint_id);
    assert.equal((await client.threads.getHistory(thread.thread_id)).length, before.length + 1);
  });

  test('update state while a run is in flight → 409; after cancel the thread is idle and updates work', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'sleep', { input: longSleep });
    assert.equal((await client.threads.get(thread.thread_id)).status, 'busy');
    const busy = await failureOf(() => client.threads.updateState(thread.thread_id, { values: { delay_ms: 1 } }));
    assert.match(busy, /^HTTP 409/);
    await client.runs.cancel(thread.thread_id, run.run_id, true);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'interrupted');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
    await client.threads.updateState(thread.thread_id, { values: { delay_ms: 1 } });
    assert.equal((await client.threads.getState<Json>(thread.thread_id)).values.delay_ms, 1);
  });
});

describe('runs', () => {
  test('wait returns the final values; the thread goes back to idle', async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'chat', { input: hello() })) as Json;
    assert.equal(values.messages.length, 2);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
    const raw = await request(url, 'POST', `/threads/${thread.thread_id}/runs/wait`, {
      body: { assistant_id: 'chat', input: hello() },
    });
    assert.equal(raw.status, 200);
    assert.equal((raw.json as Json).messages.length, 4);
    assert.match(
      raw.headers.get('content-location') ?? '',
      new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]{36}$`),
    );
  });

  test('list, filter by status, page with limit/offset; get; delete (204) then 404', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'chat', { input: hello('a') });
    await client.runs.join(thread.thread_id, first.run_id);
    const second = await client.runs.create(thread.thread_id, 'chat', { input: hello('b') });
    await client.runs.join(thread.thread_id, second.run_id);
    const listed = await client.runs.list(thread.thread_id);
    assert.deepEqual(new Set(listed.map((r) => r.run_id)), new Set([first.run_id, second.run_id]));
    assert.equal((await client.runs.list(thread.thread_id, { status: 'success' })).length, 2);
    assert.equal((await client.runs.list(thread.thread_id, { status: 'pending' })).length, 0);
    assert.equal((await client.runs.list(thread.thread_id, { limit: 1, offset: 1 })).length, 1);
    assert.equal((await client.runs.list(thread.thread_id, { limit: 1 })).length, 1);

    const deleted = await request(url, 'DELETE', `/threads/${thread.thread_id}/runs/${first.run_id}`);
    assert.equal(deleted.status, 204);
    const gone = await failureOf(() => client.runs.get(thread.thread_id, first.run_id));
    assert.match(gone, /^HTTP 404: .*not found/i);
    assert.match(await failureOf(() => client.runs.delete(thread.thread_id, first.run_id)), /^HTTP 404/);
    assert.match(await failureOf(() => client.runs.list(crypto.randomUUID())), /^HTTP 404/);
  });

  test('threadless wait and stream; onRunCreated fires from Content-Location', async () => {
    const values = (await client.runs.wait(null, 'chat', { input: hello('solo') })) as Json;
    assert.equal(lastAiText(values), 'You said: solo');

    const announced: Json[] = [];
    const parts = await collect(
      client.runs.stream(null, 'chat', {
        input: hello('solo'),
        streamMode: 'values',
        onRunCreated: (meta) => announced.push(meta),
      }),
    );
    assert.equal(parts[0]!.event, 'metadata');
    assert.equal(announced.length, 1);
    assert.equal(announced[0]!.run_id, (parts[0]!.data as Json).run_id);
    assert.equal(lastAiText(parts[parts.length - 1]!.data as Json), 'You said: solo');

    const raw = await requestStream(url, 'POST', '/runs/stream', { body: { assistant_id: 'chat', input: hello() } });
    assert.equal(raw.status, 200);
    assert.match(raw.headers.get('content-location') ?? '', /^\/runs\/[0-9a-f-]{36}$/);

    const created = await request(url, 'POST', '/runs', { body: { assistant_id: 'chat', input: hello() } });
    assert.equal(created.status, 200);
    const run = created.json as Json;
    assert.equal(created.headers.get('content-location'), `/runs/${run.run_id}`);
  });

  test('onRunCreated on thread runs: create, stream and wait', async () => {
    const thread = await client.threads.create();
    for (const call of ['create', 'stream', 'wait'] as const) {
      const announced: Json[] = [];
      const onRunCreated = (meta: Json) => announced.push(meta);
      if (call === 'create')
        await client.runs.create(thread.thread_id, 'chat', {
          input: hello(),
          onRunCreated,
          multitaskStrategy: 'enqueue',
        });
      if (call === 'stream')
        await collect(
          client.runs.stream(thread.thread_id, 'chat', { input: hello(), onRunCreated, multitaskStrategy: 'enqueue' }),
        );
      if (call === 'wait')
        await client.runs.wait(thread.thread_id, 'chat', {
          input: hello(),
          onRunCreated,
          multitaskStrategy: 'enqueue',
        });
      assert.equal(announced.length, 1, `${call} announces the run once`);
      assert.equal(announced[0]!.thread_id, thread.thread_id);
      assert.match(announced[0]!.run_id, UUID);
    }
  });

  test('cancel: wait=1 → 204 and `interrupted`; without waiting → 202', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'sleep', { input: longSleep });
    await waitForStatus(thread.thread_id, run.run_id, 'running');
    const waited = await request(
      url,
      'POST',
      `/threads/${thread.thread_id}/runs/${run.run_id}/cancel?wait=1&action=interrupt`,
    );
    assert.equal(waited.status, 204);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'interrupted');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');

    const second = await client.runs.create(thread.thread_id, 'sleep', { input: longSleep });
    const accepted = await request(url, 'POST', `/threads/${thread.thread_id}/runs/${second.run_id}/cancel`);
    assert.equal(accepted.status, 202);
    await waitForStatus(thread.thread_id, second.run_id, 'interrupted');
    assert.match(await failureOf(() => client.runs.cancel(thread.thread_id, crypto.randomUUID())), /^HTTP 404/);
  });

  test('multitask reject: a second run on a busy thread is a 409 with a readable message', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 1500 } });
    const rejected = await failureOf(() => client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 1 } }));
    assert.match(rejected, /^HTTP 409: .*[a-z]{4,}/i);
    const rejectedStream = await request(url, 'POST', `/threads/${thread.thread_id}/runs/stream`, {
      body: { assistant_id: 'sleep', input: {} },
    });
    assert.equal(rejectedStream.status, 409);
    await client.runs.join(thread.thread_id, first.run_id);
    assert.equal((await client.runs.get(thread.thread_id, first.run_id)).status, 'success');
    assert.equal((await client.runs.list(thread.thread_id)).length, 1, 'no run was created for the rejected requests');
  });

  test('multitask interrupt: the first run ends `interrupted`, the second succeeds', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'sleep', { input: longSleep });
    await waitForStatus(thread.thread_id, first.run_id, 'running');
    const second = await client.runs.create(thread.thread_id, 'sleep', {
      input: { delay_ms: 10 },
      multitaskStrategy: 'interrupt',
    });
    await client.runs.join(thread.thread_id, second.run_id);
    assert.equal((await client.runs.get(thread.thread_id, first.run_id)).status, 'interrupted');
    assert.equal((await client.runs.get(thread.thread_id, second.run_id)).status, 'success');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('multitask rollback: the first run is deleted with its state, the second succeeds', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'chat', { input: hello('first'), afterSeconds: 30 });
    const second = await client.runs.create(thread.thread_id, 'chat', {
      input: hello('second'),
      multitaskStrategy: 'rollback',
    });
    await client.runs.join(thread.thread_id, second.run_id);
    assert.match(await failureOf(() => client.runs.get(thread.thread_id, first.run_id)), /^HTTP 404/);
    const messages = (await client.threads.getState<Json>(thread.thread_id)).values.messages as Json[];
    assert.deepEqual(
      messages.map((m) => m.content),
      ['second', 'You said: second'],
    );

    // A running first run is rolled back too, with the checkpoints it had written.
    const thread2 = await client.threads.create();
    await client.runs.wait(thread2.thread_id, 'sleep', { input: { delay_ms: 5 } });
    const historyBefore = await client.threads.getHistory(thread2.thread_id, { limit: 100 });
    const running = await client.runs.create(thread2.thread_id, 'sleep', { input: longSleep });
    await waitForStatus(thread2.thread_id, running.run_id, 'running');
    const replacement = await client.runs.create(thread2.thread_id, 'sleep', {
      input: { delay_ms: 5 },
      multitaskStrategy: 'rollback',
    });
    await client.runs.join(thread2.thread_id, replacement.run_id);
    assert.match(await failureOf(() => client.runs.get(thread2.thread_id, running.run_id)), /^HTTP 404/);
    assert.equal((await client.runs.get(thread2.thread_id, replacement.run_id)).status, 'success');
    const historyAfter = await client.threads.getHistory<Json>(thread2.thread_id, { limit: 100 });
    assert.equal(historyAfter.length, historyBefore.length * 2, 'only the two finished runs left checkpoints');
    assert.ok(
      historyAfter.every((state) => state.values.delay_ms !== longSleep.delay_ms),
      'nothing of the rolled-back input remains',
    );
  });

  test('a client waiting on a run that is rolled back or cancelled gets an error, not values or null', async () => {
    for (const [strategy, expected] of [
      ['rollback', /RunDeleted/],
      ['interrupt', /RunCancelled/],
    ] as const) {
      const thread = await client.threads.create();
      const waiting = failureOf(() =>
        client.runs.wait(thread.thread_id, 'sleep', { input: { delay_ms: 5 }, afterSeconds: 30 }),
      );
      await eventually(
        () => client.runs.list(thread.thread_id),
        (runs) => runs.length === 1,
      );
      const next = await client.runs.create(thread.thread_id, 'sleep', {
        input: { delay_ms: 5 },
        multitaskStrategy: strategy,
      });
      assert.match(await waiting, expected);
      await client.runs.join(thread.thread_id, next.run_id);
    }
    const thread = await client.threads.create();
    const waiting = failureOf(() => client.runs.wait(thread.thread_id, 'sleep', { input: longSleep }));
    const [running] = await eventually(
      () => client.runs.list(thread.thread_id),
      (runs) => runs.length === 1 && runs[0]!.status === 'running',
    );
    await client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 5 }, multitaskStrategy: 'rollback' });
    assert.match(await waiting, new RegExp(`RunDeleted: Run ${running!.run_id}`));
  });

  test('multitask enqueue: both runs succeed, one after the other', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'chat', { input: hello('one') });
    const second = await client.runs.create(thread.thread_id, 'chat', {
      input: hello('two'),
      multitaskStrategy: 'enqueue',
    });
    await client.runs.join(thread.thread_id, second.run_id);
    assert.equal((await client.runs.get(thread.thread_id, first.run_id)).status, 'success');
    assert.equal((await client.runs.get(thread.thread_id, second.run_id)).status, 'success');
    const messages = (await client.threads.getState<Json>(thread.thread_id)).values.messages as Json[];
    assert.deepEqual(
      messages.map((m) => m.content),
      ['one', 'You said: one', 'two', 'You said: two'],
    );
  });

  test('interrupt_before pauses the thread (`interrupted`, next node); input null resumes', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello(), interruptBefore: ['call_model'] });
    assert.equal((await client.threads.get(thread.thread_id)).status, 'interrupted');
    const paused = await client.threads.getState<Json>(thread.thread_id);
    assert.deepEqual(paused.next, ['call_model']);
    assert.equal(paused.tasks.length, 1);
    assert.equal(paused.tasks[0]!.name, 'call_model');
    const resumed = (await client.runs.wait(thread.thread_id, 'chat', { input: null })) as Json;
    assert.equal(lastAiText(resumed), 'You said: hello');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('interrupt() inside a node: task interrupts in state, resumed with command', async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'interrupt', { input: hello('ship it'), streamMode: 'values' }),
    );
    const lastValues = parts.filter((p) => p.event === 'values').pop()!.data as Json;
    assert.ok(Array.isArray(lastValues.__interrupt__), 'the last values event carries __interrupt__');
    assert.equal(lastValues.__interrupt__[0].value.question, 'Approve this draft?');
    const thread1 = await client.threads.get(thread.thread_id);
    assert.equal(thread1.status, 'interrupted');
    const state = await client.threads.getState<Json>(thread.thread_id);
    assert.deepEqual(state.next, ['review']);
    assert.equal((state.tasks[0]!.interrupts[0]!.value as Json).draft, 'Draft answer to: ship it');
    const taskInterrupts = Object.values((thread1 as Json).interrupts ?? {}).flat() as Json[];
    assert.ok(
      taskInterrupts.some((i) => i.value?.question === 'Approve this draft?'),
      'thread.interrupts lists the pending interrupt',
    );

    assertMatches((state as unknown as Json).interrupts, [
      { value: { question: 'Approve this draft?', draft: 'Draft answer to: ship it' }, id: anyString },
    ]);

    // wait on a run that pauses answers what graph.invoke() does: the values and the interrupts.
    const other = await client.threads.create();
    const paused = (await client.runs.wait(other.thread_id, 'interrupt', { input: hello('wait for me') })) as Json;
    assert.equal(paused.messages[0].content, 'wait for me');
    assert.equal(paused.draft, 'Draft answer to: wait for me');
    assertMatches(paused.__interrupt__, [
      { value: { question: 'Approve this draft?', draft: 'Draft answer to: wait for me' }, id: anyString },
    ]);

    const resumed = (await client.runs.wait(thread.thread_id, 'interrupt', { command: { resume: 'approve' } })) as Json;
    assert.equal(lastAiText(resumed), 'Draft answer to: ship it');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('command update writes state before the run continues', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello() });
    await client.runs.wait(thread.thread_id, 'chat', {
      command: { update: { messages: [{ role: 'user', content: 'via command' }] }, goto: 'call_model' },
    });
    const messages = (await client.threads.getState<Json>(thread.thread_id)).values.messages as Json[];
    assert.deepEqual(
      messages.slice(-2).map((m) => m.content),
      ['via command', 'You said: via command'],
    );
  });

  test('a run that exceeds its recursion limit fails with GraphRecursionError; the thread is `error`', async () => {
    const thread = await client.threads.create();
    const failure = await failureOf(() =>
      client.runs.wait(thread.thread_id, 'tools', {
        input: hello('Weather in Paris?'),
        config: { recursion_limit: 1 },
      }),
    );
    assert.match(failure, /GraphRecursionError/);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'error');
    const [run] = await client.runs.list(thread.thread_id);
    assert.equal(run!.status, 'error');
  });

  test('a failing graph: wait raises, join reports, stream ends with an error event', async () => {
    assert.match(await failureOf(() => client.runs.wait(null, 'error', { input: {} })), /CustomError|Boo!/);

    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'error', { input: {}, streamMode: ['debug', 'events'] }),
    );
    const last = parts[parts.length - 1]!;
    assert.equal(last.event, 'error');
    assert.deepEqual(last.data, { error: 'CustomError', message: 'Boo!' });
    assert.equal((await client.threads.get(thread.thread_id)).status, 'error');

    const thread2 = await client.threads.create();
    const run = await client.runs.create(thread2.thread_id, 'error', { input: { delay_ms: 200 } });
    await client.runs.join(thread2.thread_id, run.run_id).catch(() => undefined);
    assert.equal((await client.runs.get(thread2.thread_id, run.run_id)).status, 'error');
    const replay = await collect(client.runs.joinStream(thread2.thread_id, run.run_id));
    assert.equal(replay[replay.length - 1]!.event, 'error');
    assert.deepEqual(replay[replay.length - 1]!.data, { error: 'CustomError', message: 'Boo!' });
  });

  test('many runs at once (more than the workers): each thread gets its own answer', async () => {
    const threads = await Promise.all(Array.from({ length: 12 }, () => client.threads.create()));
    const streamed = await Promise.all(
      threads.map((thread, i) =>
        collect(client.runs.stream(thread.thread_id, 'chat', { input: hello(`stream ${i}`), streamMode: 'values' })),
      ),
    );
    streamed.forEach((parts, i) =>
      assert.equal(lastAiText(parts[parts.length - 1]!.data as Json), `You said: stream ${i}`),
    );
    const waited = await Promise.all(
      Array.from({ length: 12 }, (_, i) => client.runs.wait(null, 'chat', { input: hello(`wait ${i}`) })),
    );
    waited.forEach((values, i) => assert.equal(lastAiText(values as Json), `You said: wait ${i}`));
    for (const thread of threads) assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('a failing run does not harm a run alongside it', async () => {
    const [failed, ok] = await Promise.allSettled([
      client.runs.wait(null, 'error', { input: { delay_ms: 100 } }),
      client.runs.wait(null, 'chat', { input: hello('fine') }),
    ]);
    assert.equal(failed.status, 'rejected');
    assert.equal(ok.status, 'fulfilled');
    assert.equal(lastAiText((ok as PromiseFulfilledResult<Json>).value), 'You said: fine');
  });
});

describe('streaming', () => {
  async function streamOn(
    graph: string,
    streamMode: string | string[],
    input: Json = hello('hello world'),
    extra: Json = {},
  ) {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, graph, { input, streamMode: streamMode as any, ...extra }),
    );
    assert.equal(parts[0]!.event, 'metadata', 'metadata comes first');
    assert.match((parts[0]!.data as Json).run_id, UUID);
    assert.deepEqual(parts[0]!.data, { run_id: (parts[0]!.data as Json).run_id, attempt: 1 });
    return { thread, parts: parts.slice(1) as Array<{ event: string; data: any }> };
  }

  test('values: the full state after each step', async () => {
    const { parts } = await streamOn('chat', 'values');
    assert.ok(parts.every((p) => p.event === 'values'));
    assert.equal(parts[0]!.data.messages.length, 1);
    assert.equal(lastAiText(parts[parts.length - 1]!.data), 'You said: hello world');
  });

  test('messages-tuple: `messages` events [chunk, metadata], token by token', async () => {
    const { parts } = await streamOn('chat', 'messages-tuple');
    const tuples = parts.filter((p) => p.event === 'messages');
    assert.equal(tuples.length, parts.length);
    assert.ok(tuples.length >= 3, 'one event per token');
    const [chunk, metadata] = tuples[0]!.data as [Json, Json];
    assert.equal(metadata.langgraph_node, 'call_model');
    assert.match(chunk.type, /^AIMessageChunk$|^ai$/i);
    assert.equal(tuples.map((t) => (t.data as [Json])[0].content).join(''), 'You said: hello world');
  });

  test('messages (legacy): metadata, partial and complete events', async () => {
    const { parts } = await streamOn('chat', 'messages');
    const events = new Set(parts.map((p) => p.event));
    assert.deepEqual(events, new Set(['messages/metadata', 'messages/partial', 'messages/complete']));
    const partials = parts.filter((p) => p.event === 'messages/partial');
    assert.equal(partials[partials.length - 1]!.data[0].content, 'You said: hello world');
    const completes = parts.filter((p) => p.event === 'messages/complete').flatMap((p) => p.data as Json[]);
    assert.equal(completes[completes.length - 1]!.content, 'You said: hello world');
  });

  test('debug: checkpoint, task and task_result events', async () => {
    const { parts } = await streamOn('chat', 'debug');
    assert.ok(parts.every((p) => p.event === 'debug'));
    const types = new Set(parts.map((p) => p.data.type));
    for (const type of ['checkpoint', 'task', 'task_result']) assert.ok(types.has(type), `debug has ${type}`);
    for (const part of parts) assert.ok(Number.isInteger(part.data.step));
  });

  test('events: LangChain stream events including the chat model tokens', async () => {
    const { parts } = await streamOn('chat', 'events');
    assert.ok(parts.every((p) => p.event === 'events'));
    const names = new Set(parts.map((p) => p.data.event));
    for (const name of [
      'on_chain_start',
      'on_chain_end',
      'on_chat_model_start',
      'on_chat_model_stream',
      'on_chat_model_end',
    ]) {
      assert.ok(names.has(name), `events has ${name}`);
    }
  });

  test('custom: what a node writes', async () => {
    const { parts } = await streamOn('sleep', 'custom', { delay_ms: 30, steps: 3 });
    assert.deepEqual(
      parts.map((p) => [p.event, p.data]),
      [
        ['custom', { step: 1, of: 3 }],
        ['custom', { step: 2, of: 3 }],
        ['custom', { step: 3, of: 3 }],
      ],
    );
  });

  test('tasks: a start and a result per node', async () => {
    const { parts } = await streamOn('chat', 'tasks');
    assert.ok(parts.every((p) => p.event === 'tasks'));
    const start = parts.find((p) => p.data.name === 'call_model' && 'input' in p.data);
    const result = parts.find((p) => p.data.name === 'call_model' && 'result' in p.data);
    assert.ok(start && result, 'start and result of call_model');
    assert.equal(start.data.id, result.data.id);
  });

  test('checkpoints: {values, metadata, next} from the input checkpoint on', async () => {
    const { parts } = await streamOn('chat', 'checkpoints');
    assert.ok(parts.length >= 2);
    for (const part of parts) {
      assert.equal(part.event, 'checkpoints');
      for (const key of ['values', 'metadata', 'next']) assert.ok(key in part.data, `checkpoints event has ${key}`);
    }
    assert.deepEqual(parts[0]!.data.next, ['__start__']);
    assert.equal(parts[0]!.data.metadata.source, 'input');
    assert.deepEqual(parts[parts.length - 1]!.data.next, []);
  });

  test('several modes at once', async () => {
    const { parts } = await streamOn('chat', ['values', 'updates', 'messages-tuple', 'custom']);
    const events = new Set(parts.map((p) => p.event));
    assert.deepEqual(events, new Set(['values', 'updates', 'messages']));
  });

  test('subgraphs: inner events are namespaced `<mode>|<node>:<task id>`', async () => {
    const { parts } = await streamOn('subgraph', ['updates'], hello('cats'), { streamSubgraphs: true });
    const inner = parts.filter((p) => p.event.startsWith('updates|research:'));
    assert.ok(inner.length >= 2, `inner update events: ${parts.map((p) => p.event).join(', ')}`);
    assert.ok(inner.some((p) => 'make_plan' in p.data));
    assert.ok(parts.some((p) => p.event === 'updates' && 'review' in p.data));
    const { parts: rootOnly } = await streamOn('subgraph', ['updates'], hello('cats'));
    assert.ok(rootOnly.every((p) => p.event === 'updates'));
  });

  test('SSE framing on the wire: headers, `event:` / `data:` / `id:` lines, Content-Location', async () => {
    const thread = await client.threads.create();
    const stream = await requestStream(url, 'POST', `/threads/${thread.thread_id}/runs/stream`, {
      body: { assistant_id: 'chat', input: hello('a\nb'), stream_mode: ['values', 'updates'] },
    });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    const location = stream.headers.get('content-location') ?? '';
    assert.match(location, new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]{36}$`));
    assert.ok(stream.text.endsWith('\n\n'), 'the body ends with a complete frame');
    assert.ok(stream.frames.length >= 3);
    stream.frames.forEach((frame, index) => {
      assert.ok(frame.lines[0]!.startsWith('event: '), `frame ${index} opens with event:`);
      assert.ok(
        frame.lines.slice(1, -1).every((line) => line.startsWith('data: ')),
        `frame ${index} carries data: lines`,
      );
      assert.equal(frame.lines[frame.lines.length - 1], `id: ${index}`, `frame ${index} ends with its id`);
      JSON.parse(frame.data);
    });
    assert.equal(stream.frames[0]!.event, 'metadata');
    assert.equal(JSON.parse(stream.frames[0]!.data).run_id, location.split('/').pop());
    // A message with a newline still arrives intact.
    const values = stream.frames.filter((f) => f.event === 'values').map((f) => JSON.parse(f.data));
    assert.equal(values[values.length - 1].messages[0].content, 'a\nb');
  });

  test('joinStream replays a run and resumes after lastEventId', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'sleep', {
      input: { delay_ms: 300, steps: 4 },
      streamMode: ['values', 'custom'],
    });
    const full = await collect(client.runs.joinStream(thread.thread_id, run.run_id));
    assert.equal(full[0]!.event, 'metadata');
    assert.equal(full.filter((p) => p.event === 'custom').length, 4);
    assert.ok(
      full.every((p) => typeof p.id === 'string'),
      'every event has an id',
    );
    const resumed = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: full[1]!.id }));
    assert.deepEqual(
      resumed.map((p) => [p.id, p.event, p.data]),
      full.slice(2).map((p) => [p.id, p.event, p.data]),
    );
    const again = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' }));
    assert.deepEqual(
      again.map((p) => p.id),
      full.map((p) => p.id),
    );
  });

  test('a stream joined while the run is live sees the same events as the creating stream', async () => {
    const thread = await client.threads.create();
    let runId = '';
    const creating = collect(
      client.runs.stream(thread.thread_id, 'sleep', {
        input: { delay_ms: 400, steps: 4 },
        streamMode: 'custom',
        streamResumable: true,
        onRunCreated: (meta) => {
          runId = meta.run_id;
        },
      }),
    );
    await eventually(
      async () => runId,
      (id) => id !== '',
    );
    const joined = await collect(client.runs.joinStream(thread.thread_id, runId, { lastEventId: '-1' }));
    const original = await creating;
    assert.deepEqual(joined, original);
  });

  test('raw HTTP: stream_mode as a plain string; input messages with role human', async () => {
    const thread = await client.threads.create();
    const stream = await requestStream(url, 'POST', `/threads/${thread.thread_id}/runs/stream`, {
      body: {
        assistant_id: 'chat',
        input: { messages: [{ role: 'human', content: 'plain' }] },
        stream_mode: 'updates',
      },
    });
    assert.equal(stream.status, 200);
    assert.deepEqual(
      stream.frames.map((f) => f.event),
      ['metadata', 'updates'],
    );
    assert.equal(JSON.parse(stream.frames[1]!.data).call_model.messages[0].content, 'You said: plain');
  });

  test('threadless background run: joinStream while it runs; on_completion keep leaves its thread', async () => {
    const run = await client.runs.create(null, 'sleep', { input: { delay_ms: 300, steps: 3 }, streamMode: ['custom'] });
    const parts = await collect(client.runs.joinStream(null, run.run_id));
    assert.deepEqual(
      parts.map((p) => p.event),
      ['metadata', 'custom', 'custom', 'custom'],
    );

    const kept = await request(url, 'POST', '/runs', {
      body: { assistant_id: 'chat', input: hello('keep me'), on_completion: 'keep' },
    });
    const keptRun = kept.json as Json;
    await client.runs.join(keptRun.thread_id, keptRun.run_id);
    const state = await client.threads.getState<Json>(keptRun.thread_id);
    assert.equal(lastAiText(state.values), 'You said: keep me');
  });

  test('a thread stream follows every run on the thread', async () => {
    const thread = await client.threads.create();
    const controller = new AbortController();
    const seen: Array<{ event: string; data: unknown }> = [];
    const following = (async () => {
      try {
        for await (const part of client.threads.joinStream(thread.thread_id, { signal: controller.signal }))
          seen.push(part);
      } catch {
        // Aborted by the test once both runs were seen.
      }
    })();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello('first') });
    await client.runs.wait(thread.thread_id, 'chat', { input: hello('second') });
    await eventually(
      async () => seen.filter((p) => p.event === 'metadata').length,
      (n) => n >= 2,
    );
    controller.abort();
    await following;
    const answers = seen.filter((p) => p.event === 'values').map((p) => lastAiText(p.data as Json));
    assert.ok(answers.includes('You said: first') && answers.includes('You said: second'), JSON.stringify(answers));
  });

  test('a dropped stream connection: the SDK reconnects through Location and misses nothing', async () => {
    // A TCP proxy in front of the server that cuts the first streaming connection once events flow.
    let dropped = false;
    const requests: string[] = [];
    const proxy = createNetServer((downstream) => {
      const upstream = connect(Number(new URL(url).port), '127.0.0.1');
      downstream.on('data', (chunk: Buffer) => requests.push(chunk.toString()));
      downstream.pipe(upstream);
      let seen = '';
      upstream.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (!dropped && (seen.match(/event: custom/g) ?? []).length >= 2) {
          dropped = true;
          downstream.destroy();
          upstream.destroy();
          return;
        }
        downstream.write(chunk);
      });
      upstream.on('end', () => downstream.end());
      upstream.on('error', () => downstream.destroy());
      downstream.on('error', () => upstream.destroy());
      downstream.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const viaProxy = new SdkClient({
        apiUrl: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`,
        apiKey: null,
      });
      const thread = await viaProxy.threads.create();
      const parts = await collect(
        viaProxy.runs.stream(thread.thread_id, 'sleep', { input: { delay_ms: 2000, steps: 8 }, streamMode: 'custom' }),
      );
      assert.ok(dropped, 'the proxy cut the stream');
      const rejoins = requests.filter((text) => /^GET \/threads\/[0-9a-f-]+\/runs\/[0-9a-f-]+\/stream/.test(text));
      assert.equal(rejoins.length, 1, 'the SDK rejoined the run once');
      assert.match(rejoins[0]!, /last-event-id: \d+/i);
      assert.equal(parts.filter((p) => p.event === 'metadata').length, 1);
      assert.deepEqual(
        parts.filter((p) => p.event === 'custom').map((p) => (p.data as Json).step),
        [1, 2, 3, 4, 5, 6, 7, 8],
      );
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  test('stream with an unknown assistant is a 404 before any event', async () => {
    const thread = await client.threads.create();
    const failure = await failureOf(() =>
      collect(client.runs.stream(thread.thread_id, 'no_such_graph', { input: {} })),
    );
    assert.match(failure, /^HTTP 404: .*no_such_graph/);
    assert.match(await failureOf(() => collect(client.runs.stream(null, 'no_such_graph', { input: {} }))), /^HTTP 404/);
  });
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
    assert.equal((run.json as Json).messages.length, 2);
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

describe('ported from the reference suite', () => {
  const weatherQuestion = { messages: [{ type: 'human', content: 'Weather in Paris?', id: 'initial-message' }] };

  test('stream values: ids of earlier messages stay put; only metadata and values events; run success', async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'tools', { input: weatherQuestion, streamMode: 'values' }),
    );
    let previous: string[] = [];
    for (const part of parts.filter((p) => p.event === 'values')) {
      const ids = ((part.data as Json).messages as Json[]).map((m) => m.id as string);
      assert.deepEqual(ids.slice(0, -1), previous);
      previous = ids;
    }
    assert.equal(previous[0], 'initial-message', 'a given message id is kept');
    assert.equal(parts[parts.length - 1]!.event, 'values');
    assert.deepEqual(new Set(parts.map((p) => p.event)), new Set(['metadata', 'values']));
    const runId = (parts[0]!.data as Json).run_id as string;
    assert.equal((await client.runs.get(thread.thread_id, runId)).status, 'success');
    assert.ok((await client.threads.getHistory(thread.thread_id)).length > 1);
  });

  test('stream updates on a tool-calling graph: nodes in order', async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'tools', { input: weatherQuestion, streamMode: 'updates' }),
    );
    assert.deepEqual(
      parts.filter((p) => p.event === 'updates').map((p) => Object.keys(p.data as Json)[0]),
      ['agent', 'tools', 'agent'],
    );
    assert.equal(parts[parts.length - 1]!.event, 'updates');
  });

  test('stream messages: partial and complete agree by id; the last event is messages/complete', async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'tools', { input: weatherQuestion, streamMode: 'messages' }),
    );
    const partial: Record<string, unknown> = {};
    let lastComplete: Json | undefined;
    for (const part of parts) {
      if (part.event === 'messages/partial') {
        const message = (part.data as Json[])[0]!;
        partial[message.id] = message.content;
      }
      if (part.event === 'messages/complete') {
        const message = (part.data as Json[])[0]!;
        assert.notEqual(message.content, null);
        if (message.type === 'ai' && message.id in partial) assert.deepEqual(message.content, partial[message.id]);
        lastComplete = message;
      }
    }
    assert.equal(lastComplete?.content, "The tool says: It's always sunny in Paris.");
    assert.equal(parts[parts.length - 1]!.event, 'messages/complete');
    assert.deepEqual(
      new Set(parts.map((p) => p.event)),
      new Set(['metadata', 'messages/metadata', 'messages/partial', 'messages/complete']),
    );

    const other = await client.threads.create();
    const mixed = await collect(
      client.runs.stream(other.thread_id, 'tools', { input: weatherQuestion, streamMode: ['messages', 'values'] }),
    );
    assert.equal(mixed[mixed.length - 1]!.event, 'messages/complete');
    assert.deepEqual(
      new Set(mixed.map((p) => p.event)),
      new Set(['metadata', 'messages/metadata', 'messages/partial', 'messages/complete', 'values']),
    );
    const lastValues = mixed.filter((p) => p.event === 'values').pop()!.data as Json;
    assert.equal(lastValues.messages.length, 4);
  });

  test('stream messages-tuple: model tokens and the tool message, only metadata and messages events', async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'tools', { input: weatherQuestion, streamMode: 'messages-tuple' }),
    );
    assert.deepEqual(new Set(parts.map((p) => p.event)), new Set(['metadata', 'messages']));
    const chunks = parts.filter((p) => p.event === 'messages').map((p) => (p.data as [Json, Json])[0]);
    const tool = chunks.filter((c) => c.type === 'tool');
    assert.equal(tool.length, 1);
    assert.equal(tool[0]!.content, "It's always sunny in Paris.");
    const answer = chunks
      .slice(chunks.indexOf(tool[0]!) + 1)
      .map((c) => c.content)
      .join('');
    assert.equal(answer, "The tool says: It's always sunny in Paris.");
    assert.ok(chunks.length > 4, 'the answer arrives token by token');
  });

  test('tasks / checkpoints stream modes: the exact sequence', async () => {
    const thread = await client.threads.create();
    const stream = await collect(
      client.runs.stream(thread.thread_id, 'tools', {
        input: { messages: [{ role: 'human', content: 'Weather in Paris?' }] },
        streamMode: ['tasks', 'checkpoints'],
      }),
    );
    const human = { content: 'Weather in Paris?', type: 'human' };
    const call = { content: '', type: 'ai' };
    const toolMessage = { content: "It's always sunny in Paris.", type: 'tool' };
    const answer = { content: "The tool says: It's always sunny in Paris.", type: 'ai' };
    const resultHas = (type: string) => (value: unknown) => JSON.stringify(value).includes(`"type":"${type}"`);
    assertMatches(stream, [
      { event: 'metadata', data: { run_id: anyString } },
      {
        event: 'checkpoints',
        data: { values: { messages: [] }, metadata: { source: 'input', step: -1 }, next: ['__start__'] },
      },
      {
        event: 'checkpoints',
        data: { values: { messages: [human] }, metadata: { source: 'loop', step: 0 }, next: ['agent'] },
      },
      {
        event: 'tasks',
        data: { name: 'agent', input: { messages: [human] }, triggers: ['branch:to:agent'], interrupts: [] },
      },
      { event: 'tasks', data: { name: 'agent', result: resultHas('ai'), interrupts: [] } },
      {
        event: 'checkpoints',
        data: { values: { messages: [human, call] }, metadata: { source: 'loop', step: 1 }, next: ['tools'] },
      },
      { event: 'tasks', data: { name: 'tools', input: { messages: [human, call] }, interrupts: [] } },
      { event: 'tasks', data: { name: 'tools', result: resultHas('tool'), interrupts: [] } },
      {
        event: 'checkpoints',
        data: {
          values: { messages: [human, call, toolMessage] },
          metadata: { source: 'loop', step: 2 },
          next: ['agent'],
        },
      },
      {
        event: 'tasks',
        data: {
          name: 'agent',
          input: { messages: [human, call, toolMessage] },
          triggers: ['branch:to:agent'],
          interrupts: [],
        },
      },
      { event: 'tasks', data: { name: 'agent', result: resultHas('ai'), interrupts: [] } },
      {
        event: 'checkpoints',
        data: {
          values: { messages: [human, call, toolMessage, answer] },
          metadata: { source: 'loop', step: 3 },
          next: [],
        },
      },
    ]);
  });

  test('task results are populated in thread history', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'tools', { input: weatherQuestion });
    const history = await client.threads.getHistory(thread.thread_id);
    const withTasks = history.map((state) => state.tasks).filter((tasks) => tasks.length > 0);
    assert.ok(withTasks.length > 0);
    assert.ok(
      withTasks.every((tasks) => tasks[0]!.result != null),
      'every task in history carries its result',
    );
  });

  test('list runs: a delayed run is pending; cancel (not waiting) makes it interrupted at once', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello() });
    const pending = await client.runs.create(thread.thread_id, 'chat', { input: hello('later'), afterSeconds: 10 });
    assert.equal((await client.runs.list(thread.thread_id)).length, 2);
    assert.equal((await client.runs.list(thread.thread_id, { status: 'pending' })).length, 1);
    await client.runs.cancel(thread.thread_id, pending.run_id);
    assert.equal((await client.runs.list(thread.thread_id, { status: 'interrupted' })).length, 1);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('cancel with action rollback deletes a pending run', async () => {
    const thread = await client.threads.create();
    const pending = await client.runs.create(thread.thread_id, 'chat', { input: hello(), afterSeconds: 10 });
    await client.runs.cancel(thread.thread_id, pending.run_id, true, 'rollback');
    assert.match(await failureOf(() => client.runs.get(thread.thread_id, pending.run_id)), /^HTTP 404/);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('copy: the copy state equals the original apart from its thread id; runs on it leave the original alone', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'tools', { input: weatherQuestion });
    const original = (await client.threads.getState(thread.thread_id)) as unknown as Json;
    const copy = await client.threads.copy(thread.thread_id);
    const copied = (await client.threads.getState(copy.thread_id)) as unknown as Json;
    const expected = {
      ...original,
      checkpoint: { ...original.checkpoint, thread_id: copy.thread_id },
      parent_checkpoint: { ...original.parent_checkpoint, thread_id: copy.thread_id },
      metadata: { ...original.metadata, thread_id: copy.thread_id },
      checkpoint_id: copied.checkpoint.checkpoint_id,
      parent_checkpoint_id: copied.parent_checkpoint?.checkpoint_id,
    };
    assert.deepEqual(copied, expected);
    await client.runs.wait(copy.thread_id, 'tools', {
      input: { messages: [{ type: 'human', content: 'Weather in Rome?' }] },
    });
    const copiedAfter = await client.threads.getState<Json>(copy.thread_id);
    assert.equal((copiedAfter.values.messages as Json[]).length, 8);
    assert.deepEqual(await client.threads.getState(thread.thread_id), original);
  });

  test('history: metadata filter picks one run; limit; oldest has next __start__', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello('foo') });
    const first = await client.threads.getHistory<Json>(thread.thread_id);
    await client.runs.wait(thread.thread_id, 'chat', {
      input: hello('bar'),
      metadata: { run_metadata: 'run_metadata' },
    });
    const full = await client.threads.getHistory<Json>(thread.thread_id, { limit: 100 });
    const filtered = await client.threads.getHistory<Json>(thread.thread_id, {
      metadata: { run_metadata: 'run_metadata' },
    });
    assert.equal(full.length, first.length * 2);
    assert.equal(filtered.length, first.length);
    assert.equal((full[full.length - 1]!.values.messages ?? []).length, 0);
    assert.equal((filtered[filtered.length - 1]!.values.messages as Json[]).length, 2);
  });

  test('human in the loop with modification: updateState while interrupted keeps `interrupted`; resume uses the edit', async () => {
    const thread = await client.threads.create();
    const input = { messages: [{ type: 'human', content: 'foo', id: 'initial-message' }] };
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'chat', { input, interruptBefore: ['call_model'] }),
    );
    assert.equal(parts.filter((p) => p.event === 'error').length, 0);
    await client.threads.updateState(thread.thread_id, {
      values: { messages: [{ type: 'human', content: 'modified', id: 'initial-message' }] },
    });
    await client.threads.update(thread.thread_id, { metadata: { modified: true } });
    const modified = await client.threads.get(thread.thread_id);
    assert.equal(modified.status, 'interrupted');
    assert.equal(modified.metadata?.modified, true);
    const state = await client.threads.getState<Json>(thread.thread_id);
    assert.equal((state.values.messages as Json[])[0]!.content, 'modified');
    assert.deepEqual(state.next, ['call_model']);
    assertMatches(state.tasks, [{ id: anyString, name: 'call_model', error: null, interrupts: [] }]);
    const resumed = await collect(client.runs.stream(thread.thread_id, 'chat', { input: null }));
    assert.equal(resumed.filter((p) => p.event === 'error').length, 0);
    const messages = (resumed.filter((p) => p.event === 'values').pop()!.data as Json).messages as Json[];
    assert.deepEqual(
      messages.map((m) => m.content),
      ['modified', 'You said: modified'],
    );
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('interrupt inside a node: the task and the thread list the interrupt; command resume finishes it', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'interrupt', {
      input: { messages: [{ role: 'human', content: 'SF', id: 'initial-message' }] },
    });
    const state = await client.threads.getState(thread.thread_id);
    assert.deepEqual(state.next, ['review']);
    const question = { question: 'Approve this draft?', draft: 'Draft answer to: SF' };
    assertMatches(state.tasks, [
      {
        id: anyString,
        name: 'review',
        path: ['__pregel_pull', 'review'],
        error: null,
        interrupts: [{ value: question, id: anyString }],
        checkpoint: null,
        state: null,
        result: null,
      },
    ]);
    const thread2 = await client.threads.get(thread.thread_id);
    assert.equal(thread2.status, 'interrupted');
    assertMatches(thread2.interrupts, { [state.tasks[0]!.id]: [{ value: question, id: anyString }] });
    const stream = await collect(
      client.runs.stream(thread.thread_id, 'interrupt', { command: { resume: 'my own answer' } }),
    );
    const last = stream[stream.length - 1]!;
    assert.equal(last.event, 'values');
    assert.deepEqual(
      ((last.data as Json).messages as Json[]).map((m) => m.content),
      ['SF', 'my own answer'],
    );
  });

  test('a long run: join waits for it', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 2500 } });
    await client.runs.join(thread.thread_id, run.run_id);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'success');
    const state = await client.threads.getState<Json>(thread.thread_id);
    assertMatches(state.values.messages, [{ content: 'finished after 2500 ms' }]);
  });

  test('batch update state: a thread created with supersteps replays a conversation', async () => {
    const thread = await client.threads.create({
      graphId: 'chat',
      supersteps: [
        { updates: [{ values: { messages: [{ type: 'human', content: 'hi', id: 'm1' }] }, asNode: '__input__' }] },
        { updates: [{ values: { messages: [{ type: 'human', content: 'hi', id: 'm1' }] }, asNode: '__start__' }] },
        {
          updates: [
            { values: { messages: [{ type: 'ai', content: 'You said: hi', id: 'm2' }] }, asNode: 'call_model' },
          ],
        },
      ],
    });
    const state = await client.threads.getState<Json>(thread.thread_id);
    assert.deepEqual(
      (state.values.messages as Json[]).map((m) => [m.type, m.content]),
      [
        ['human', 'hi'],
        ['ai', 'You said: hi'],
      ],
    );
    assert.deepEqual(state.next, []);
    assert.equal((await client.threads.getHistory(thread.thread_id)).length, 3);
    // The thread goes on from there like any other.
    const values = (await client.runs.wait(thread.thread_id, 'chat', { input: hello('again') })) as Json;
    assert.equal((values.messages as Json[]).length, 4);
    const badId = crypto.randomUUID();
    const bad = await request(url, 'POST', '/threads', {
      body: { thread_id: badId, supersteps: [{ updates: [{ values: {}, as_node: '__input__' }] }] },
    });
    assert.equal(bad.status, 422);
    assert.match(bad.text, /graph_id/);
    const badNode = await request(url, 'POST', '/threads', {
      body: {
        thread_id: badId,
        metadata: { graph_id: 'chat' },
        supersteps: [{ updates: [{ values: {}, as_node: 'no_such_node' }] }],
      },
    });
    assert.equal(badNode.status, 422);
    assert.match(badNode.text, /no_such_node/);
    assert.match(
      await failureOf(() => client.threads.get(badId)),
      /^HTTP 404/,
      'a refused request leaves no thread behind',
    );
  });

  test('unusual line terminators survive state updates and history', async () => {
    const text = 'Page break characters: \n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029';
    const thread = await client.threads.create({ graphId: 'chat' });
    await client.threads.updateState(thread.thread_id, { values: { messages: [{ type: 'human', content: text }] } });
    const history = await client.threads.getHistory<Json>(thread.thread_id);
    assert.equal(history.length, 1);
    assert.equal((history[0]!.values.messages as Json[]).length, 1);
    assert.equal((history[0]!.values.messages as Json[])[0]!.content, text);
    // And through a stream, whose data lines must not break on them.
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'chat', { input: hello(text), streamMode: 'values' }),
    );
    assert.equal(lastAiText(parts[parts.length - 1]!.data as Json), `You said: ${text.trim()}`);
  });

  test('store: put, get, search, list namespaces, update (updated_at moves), delete → null', async () => {
    const namespace = ['acceptance', crypto.randomUUID()];
    const key = crypto.randomUUID();
    assert.equal((await client.store.searchItems(namespace)).items.length, 0);
    assert.equal((await client.store.listNamespaces({ prefix: namespace })).namespaces.length, 0);
    await client.store.putItem(namespace, key, { foo: 'bar' });
    assert.deepEqual((await client.store.getItem(namespace, key))?.value, { foo: 'bar' });
    const afterPut = await client.store.searchItems(namespace);
    assert.equal(afterPut.items.length, 1);
    assert.equal(afterPut.items[0]!.key, key);
    assert.ok(new Date(afterPut.items[0]!.createdAt).getTime() <= Date.now());
    await new Promise((resolve) => setTimeout(resolve, 5));
    await client.store.putItem(namespace, key, { foo: 'baz' });
    const afterUpdate = await client.store.searchItems(namespace);
    assert.deepEqual(afterUpdate.items[0]!.value, { foo: 'baz' });
    assert.ok(new Date(afterUpdate.items[0]!.updatedAt).getTime() > new Date(afterPut.items[0]!.updatedAt).getTime());
    assert.deepEqual((await client.store.listNamespaces({ prefix: namespace })).namespaces, [namespace]);
    await client.store.deleteItem(namespace, key);
    assert.equal(await client.store.getItem(namespace, key), null);
    assert.equal((await client.store.searchItems(namespace)).items.length, 0);
    const badNamespace = await request(url, 'PUT', '/store/items', {
      body: { namespace: ['a.b'], key: 'k', value: {} },
    });
    assert.equal(badNamespace.status, 422);
    assert.match(badNamespace.text, /namespace/i);
  });

  test('RemoteGraph streams values from a threadless run', async () => {
    const remote = new RemoteGraph({ graphId: 'chat', url, apiKey: null as unknown as string });
    const chunks: Json[] = [];
    for await (const chunk of await remote.stream(
      { messages: [{ role: 'human', content: 'remote' }] },
      { streamMode: 'values' },
    )) {
      chunks.push(chunk as Json);
    }
    const last = chunks[chunks.length - 1]!;
    assert.equal((last.messages as Json[]).length, 2);
  });

  test('request x-* headers reach configurable', async () => {
    const withHeader = new SdkClient({
      apiUrl: url,
      apiKey: null,
      defaultHeaders: { 'x-configurable-header': 'extra-client' },
    });
    const thread = await withHeader.threads.create();
    const run = await withHeader.runs.create(thread.thread_id, 'chat', { input: hello() });
    const configurable = ((run as unknown as Json).kwargs.config.configurable ?? {}) as Json;
    assert.equal(configurable['x-configurable-header'], 'extra-client');
    await withHeader.runs.join(thread.thread_id, run.run_id);
  });

  test('assistants: count covers one system assistant per graph; system metadata filter', async () => {
    const system = await client.assistants.search({ metadata: { created_by: 'system' }, limit: 100 });
    assert.deepEqual(
      new Set(system.map((a) => a.graph_id)),
      new Set(['agent', 'chat', 'tools', 'subgraph', 'interrupt', 'sleep', 'error', 'gate']),
    );
    assert.ok((await client.assistants.count()) >= 7);
    assert.equal((await client.assistants.search({ graphId: 'tools', metadata: { created_by: 'system' } })).length, 1);
  });

  test('stream on_disconnect cancel: a client that leaves cancels the run', async () => {
    const thread = await client.threads.create();
    const controller = new AbortController();
    let runId = '';
    const stream = client.runs.stream(thread.thread_id, 'sleep', {
      input: longSleep,
      streamMode: 'custom',
      onDisconnect: 'cancel',
      signal: controller.signal,
      onRunCreated: (meta) => {
        runId = meta.run_id;
      },
    });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next(); // metadata
    await waitForStatus(thread.thread_id, runId, 'running');
    controller.abort();
    await iterator.next().catch(() => undefined);
    await waitForStatus(thread.thread_id, runId, 'interrupted');
  });

  test('joinStream with cancelOnDisconnect: a reader that leaves cancels the run', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'sleep', { input: longSleep, streamMode: ['custom'] });
    const controller = new AbortController();
    const iterator = client.runs
      .joinStream(thread.thread_id, run.run_id, { signal: controller.signal, cancelOnDisconnect: true })
      [Symbol.asyncIterator]();
    await iterator.next(); // metadata
    await iterator.next(); // a first custom event: the run is going
    controller.abort();
    await iterator.next().catch(() => undefined);
    await waitForStatus(thread.thread_id, run.run_id, 'interrupted');
  });

  test('enqueued runs execute one after the other, in the order they were created', async () => {
    const thread = await client.threads.create();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await client.runs.create(thread.thread_id, 'chat', { input: hello(`m${i}`), multitaskStrategy: 'enqueue' }))
          .run_id,
      );
    }
    await client.runs.join(thread.thread_id, ids[ids.length - 1]!);
    for (const id of ids) assert.equal((await client.runs.get(thread.thread_id, id)).status, 'success');
    const messages = (await client.threads.getState<Json>(thread.thread_id)).values.messages as Json[];
    assert.deepEqual(
      messages.filter((m) => m.type === 'human').map((m) => m.content),
      ['m0', 'm1', 'm2', 'm3', 'm4'],
    );
  });

  test('batch of threadless runs', async () => {
    const runs = await client.runs.createBatch([
      { assistantId: 'chat', input: hello('one') },
      { assistantId: 'chat', input: hello('two') },
    ]);
    assert.equal(runs.length, 2);
    for (const run of runs) assert.match(run.run_id, UUID);
  });

  test('webhook: the finished run is POSTed to the given URL', async () => {
    const received: Json[] = [];
    const hook = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      const port = (hook.address() as { port: number }).port;
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, 'chat', {
        input: hello(),
        webhook: `http://127.0.0.1:${port}/hook`,
      });
      await client.runs.join(thread.thread_id, run.run_id);
      const [payload] = await eventually(
        async () => received,
        (list) => list.length > 0,
      );
      assert.equal(payload!.run_id, run.run_id);
      assert.equal(payload!.status, 'success');
      assert.equal(payload!.thread_id, thread.thread_id);
    } finally {
      await new Promise((resolve) => hook.close(resolve));
    }
  });
});

describe('a server with API keys and a run time limit, restarted on its data', () => {
  let secured: TestServer;
  before(async () => {
    secured = await startTestServer({ auth: { api_keys: ['test-key'] }, run_timeout_ms: 400 } as Parameters<
      typeof startTestServer
    >[0]);
  });
  after(async () => {
    await secured.stop();
  });

  test('X-Api-Key: required with the SDK and raw HTTP (401 with a message); /ok stays open', async () => {
    const withKey = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key' });
    const thread = await withKey.threads.create();
    assert.match(thread.thread_id, UUID);
    const wrongKey = new SdkClient({ apiUrl: secured.url, apiKey: 'wrong', callerOptions: { maxRetries: 0 } });
    assert.match(await failureOf(() => wrongKey.threads.create()), /^HTTP 401: .*[Kk]ey/);
    const none = await request(secured.url, 'POST', '/threads', { body: {} });
    assert.equal(none.status, 401);
    assert.match(none.text, /X-Api-Key/i);
    assert.equal((await request(secured.url, 'GET', '/ok')).status, 200);
  });

  test('a run over its time limit ends `timeout` and says so in its stream; the thread is `error`', async () => {
    const sdk = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key' });
    const thread = await sdk.threads.create();
    const parts = await collect(sdk.runs.stream(thread.thread_id, 'sleep', { input: longSleep, streamMode: 'values' }));
    const last = parts[parts.length - 1]!;
    assert.equal(last.event, 'error');
    assert.match(JSON.stringify(last.data), /time/i);
    const [run] = await sdk.runs.list(thread.thread_id);
    assert.equal(run!.status, 'timeout');
    assert.equal((await sdk.threads.get(thread.thread_id)).status, 'error');
    assert.match(await failureOf(() => sdk.runs.wait(thread.thread_id, 'sleep', { input: longSleep })), /time/i);
  });

  test('a restart on the same data directory keeps assistants, versions, threads, runs and state', async () => {
    const sdk = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key' });
    const assistant = await sdk.assistants.create({ graphId: 'chat', context: { system_prompt: 'Be kept.' } });
    await sdk.assistants.update(assistant.assistant_id, { context: { system_prompt: 'Be kept, v2.' } });
    const thread = await sdk.threads.create({ metadata: { kept: true } });
    const run = await sdk.runs.create(thread.thread_id, assistant.assistant_id, { input: hello() });
    await sdk.runs.join(thread.thread_id, run.run_id);
    const stateBefore = await sdk.threads.getState(thread.thread_id);

    const dataDir = secured.dataDir;
    await secured.stop({ keepData: true });
    secured = await startTestServer({ dataDir, auth: { api_keys: ['test-key'] } } as Parameters<
      typeof startTestServer
    >[0]);
    const again = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key' });
    assert.deepEqual(
      (await again.assistants.getVersions(assistant.assistant_id)).map((v) => v.version),
      [2, 1],
    );
    assert.deepEqual((await again.assistants.get(assistant.assistant_id)).context, { system_prompt: 'Be kept, v2.' });
    assertMatches((await again.threads.get(thread.thread_id)).metadata, {
      kept: true,
      graph_id: 'chat',
      assistant_id: assistant.assistant_id,
    });
    assert.equal((await again.runs.get(thread.thread_id, run.run_id)).status, 'success');
    assert.deepEqual(await again.threads.getState(thread.thread_id), stateBefore);
    const values = (await again.runs.wait(thread.thread_id, assistant.assistant_id, { input: hello('again') })) as Json;
    assert.equal(lastAiText(values), '(Be kept, v2.) You said: again');
  });

  test('a graceful stop ends live streams with an error event and answers waits with an error; nothing is lost', async () => {
    const sdk = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key', callerOptions: { maxRetries: 0 } });
    const thread = await sdk.threads.create();
    let firstRunId = '';
    const streaming = collect(
      sdk.runs.stream(thread.thread_id, 'sleep', {
        input: longSleep,
        streamMode: 'custom',
        onRunCreated: (meta) => (firstRunId = meta.run_id),
      }),
    );
    await eventually(
      async () => firstRunId,
      (id) => id !== '',
    );
    await eventually(
      () => sdk.runs.get(thread.thread_id, firstRunId),
      (run) => run.status === 'running',
    );
    const waiting = failureOf(() =>
      sdk.runs.wait(thread.thread_id, 'sleep', { input: { delay_ms: 5 }, multitaskStrategy: 'enqueue' }),
    );
    await eventually(
      () => sdk.runs.list(thread.thread_id),
      (runs) => runs.length === 2,
    );

    const dataDir = secured.dataDir;
    await secured.stop({ keepData: true, deadlineMs: 2000 });
    const parts = await streaming;
    assert.equal(parts[parts.length - 1]!.event, 'error', 'the live stream says the run did not finish');
    assert.match(await waiting, /still pending/);

    secured = await startTestServer({ dataDir, auth: { api_keys: ['test-key'] } } as Parameters<
      typeof startTestServer
    >[0]);
    const again = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key' });
    assert.equal((await again.runs.get(thread.thread_id, firstRunId)).status, 'error');
    const second = (await again.runs.list(thread.thread_id)).find((run) => run.run_id !== firstRunId)!;
    await again.runs.join(thread.thread_id, second.run_id);
    assert.equal(
      (await again.runs.get(thread.thread_id, second.run_id)).status,
      'success',
      'the pending run ran after the restart',
    );
  });
});

describe('subgraphs: human in the loop and checkpoints (weather fixture graph)', () => {
  let weather: TestServer;
  let sdk: Client;
  const human = { content: 'SF', additional_kwargs: {}, response_metadata: {}, type: 'human', id: 'initial-message' };
  const input = { messages: [{ role: 'human', content: 'SF', id: 'initial-message' }] };

  before(async () => {
    weather = await startTestServer({ langgraph_config: WEATHER_LANGGRAPH_JSON } as Parameters<
      typeof startTestServer
    >[0]);
    sdk = weather.client;
  });
  after(async () => {
    await weather.stop();
  });

  const subgraphTask = {
    id: anyString,
    name: 'weather_graph',
    path: ['__pregel_pull', 'weather_graph'],
    error: null,
    interrupts: [],
    checkpoint: { checkpoint_ns: matching(/^weather_graph:/), thread_id: anyString },
    state: null,
    result: null,
  };

  test('no modification: pause inside the subgraph, nested state, resume with namespaced events', async () => {
    const thread = await sdk.threads.create();
    const chunks = await collect(sdk.runs.stream(thread.thread_id, 'weather', { input }));
    assertMatches(chunks, [
      { event: 'metadata', data: { run_id: anyString, attempt: 1 } },
      { event: 'values', data: { messages: [human] } },
      { event: 'values', data: { messages: [human], route: 'weather' } },
      { event: 'values', data: { __interrupt__: [] } },
    ]);
    const state = await sdk.threads.getState(thread.thread_id);
    assert.deepEqual(state.next, ['weather_graph']);
    assertMatches(state.tasks, [subgraphTask]);
    assert.deepEqual(Object.keys((state.tasks[0] as Json).checkpoint).sort(), ['checkpoint_ns', 'thread_id']);

    const recursive = await sdk.threads.getState(thread.thread_id, undefined, { subgraphs: true });
    assert.deepEqual(recursive.next, ['weather_graph']);
    assertMatches(recursive.tasks, [
      {
        ...subgraphTask,
        checkpoint: null,
        state: {
          values: { city: 'San Francisco', messages: [human] },
          next: ['weather_node'],
          tasks: [
            {
              id: anyString,
              name: 'weather_node',
              path: ['__pregel_pull', 'weather_node'],
              error: null,
              interrupts: [],
              checkpoint: null,
              state: null,
              result: null,
            },
          ],
          metadata: anyObject,
          created_at: anyString,
          checkpoint: anyObject,
          parent_checkpoint: anyObject,
        },
      },
    ]);
    assert.equal((await sdk.threads.get(thread.thread_id)).status, 'interrupted');

    const resumed = await collect(
      sdk.runs.stream(thread.thread_id, 'weather', {
        input: null,
        streamMode: ['values', 'updates'],
        streamSubgraphs: true,
      }),
    );
    const ai = {
      content: "It's sunny in San Francisco!",
      additional_kwargs: {},
      response_metadata: {},
      type: 'ai',
      id: anyString,
      tool_calls: [],
      invalid_tool_calls: [],
    };
    assertMatches(
      resumed.filter((chunk) => !chunk.event.startsWith('checkpoints')),
      [
        { event: 'metadata', data: { run_id: anyString, attempt: 1 } },
        { event: 'values', data: { messages: [human], route: 'weather' } },
        { event: matching(/^values\|weather_graph:/), data: { messages: [human], city: 'San Francisco' } },
        { event: matching(/^updates\|weather_graph:/), data: { weather_node: { messages: [ai] } } },
        { event: matching(/^values\|weather_graph:/), data: { messages: [human, ai], city: 'San Francisco' } },
        { event: 'updates', data: { weather_graph: { messages: [human, ai] } } },
        { event: 'values', data: { messages: [human, ai], route: 'weather' } },
      ],
    );
    assert.equal((await sdk.threads.get(thread.thread_id)).status, 'idle');
  });

  test('modification: update the subgraph state through the task checkpoint, read it, resume with it', async () => {
    const thread = await sdk.threads.create();
    const chunks = await collect(sdk.runs.stream(thread.thread_id, 'weather', { input }));
    assert.deepEqual(
      chunks.filter((c) => c.event === 'error'),
      [],
    );
    const state = await sdk.threads.getState(thread.thread_id);
    assertMatches(state.tasks, [subgraphTask]);
    const taskCheckpoint = (state.tasks[0] as Json).checkpoint;

    await sdk.threads.updateState(thread.thread_id, { values: { city: 'LA' }, checkpoint: taskCheckpoint });
    const inner = await sdk.threads.getState<Json>(thread.thread_id, taskCheckpoint);
    assert.equal(inner.values.city, 'LA');
    assert.deepEqual(inner.next, ['weather_node']);
    assertMatches(inner.tasks, [
      {
        id: anyString,
        name: 'weather_node',
        path: ['__pregel_pull', 'weather_node'],
        error: null,
        interrupts: [],
        checkpoint: null,
        state: null,
        result: null,
      },
    ]);

    const resumed = await collect(sdk.runs.stream(thread.thread_id, 'weather', { input: null }));
    assert.deepEqual(
      resumed.filter((c) => c.event === 'error'),
      [],
    );
    assert.equal(resumed[resumed.length - 1]!.event, 'values');
    const messages = (resumed.filter((c) => c.event === 'values').pop()!.data as Json).messages as Json[];
    assert.deepEqual(
      messages.map((m) => m.content),
      ['SF', "It's sunny in LA!"],
    );

    const history = await sdk.threads.getHistory<Json>(thread.thread_id);
    assert.equal(history.length, 4);
    assert.equal(history[0]!.next.length, 0);
    assert.equal((history[0]!.values.messages as Json[]).length, 2);
    assert.deepEqual(history[history.length - 1]!.next, ['__start__']);
    const innerHistory = await sdk.threads.getHistory<Json>(thread.thread_id, { checkpoint: taskCheckpoint });
    assert.equal(innerHistory.length, 5);
    assert.equal(innerHistory[0]!.next.length, 0);
    assert.equal((innerHistory[0]!.values.messages as Json[]).length, 2);
    assert.deepEqual(innerHistory[innerHistory.length - 1]!.next, ['__start__']);
  });

  test('debug checkpoints line up with history', async () => {
    const thread = await sdk.threads.create();
    const payloads: Json[] = [];
    for await (const chunk of sdk.runs.stream(thread.thread_id, 'weather', {
      input: { messages: [{ role: 'human', content: "What's the weather in SF?" }] },
      streamMode: 'debug',
    })) {
      if (chunk.event === 'debug' && (chunk.data as Json).type === 'checkpoint')
        payloads.push((chunk.data as Json).payload);
    }
    const history = (await sdk.threads.getHistory(thread.thread_id, { limit: payloads.length })).reverse();
    const pick = (item: Json) => ({
      step: item.metadata?.step,
      checkpoint: item.checkpoint,
      parent_checkpoint: item.parent_checkpoint,
    });
    assert.deepEqual(
      payloads.map(pick),
      history.map((item) => pick(item as unknown as Json)),
    );
  });

  test('a run can continue from a checkpoint taken from history', async () => {
    const thread = await sdk.threads.create();
    const first = await collect(
      sdk.runs.stream(thread.thread_id, 'weather', {
        input: { messages: [{ role: 'human', content: "What's weather in SF?" }] },
        streamMode: 'debug',
        interruptBefore: ['router_node'],
      }),
    );
    const initial = first
      .filter((c) => c.event === 'debug' && (c.data as Json).type === 'checkpoint')
      .map((c) => (c.data as Json).payload as Json);
    const history = (await sdk.threads.getHistory(thread.thread_id)).reverse();
    const checkpoint = history[history.length - 1]!.checkpoint;
    const second = await collect(sdk.runs.stream(thread.thread_id, 'weather', { streamMode: 'debug', checkpoint }));
    const continued = second
      .filter((c) => c.event === 'debug' && (c.data as Json).type === 'checkpoint')
      .map((c) => (c.data as Json).payload as Json);
    const after = (await sdk.threads.getHistory(thread.thread_id)).reverse();
    const pick = (item: Json) => ({
      step: item.metadata?.step,
      checkpoint: item.checkpoint,
      parent_checkpoint: item.parent_checkpoint,
    });
    assert.deepEqual(
      [...initial, ...continued.slice(1)].map(pick),
      after.map((item) => pick(item as unknown as Json)),
    );
  });
});

describe("the README's main command: tracepipe --config configs/local.yaml", () => {
  const repo = fileURLToPath(new URL('..', import.meta.url));

  /** Starts the CLI on free ports over `dataDir` and resolves once the agent server reports its port. */
  async function startCli(
    dataDir: string,
  ): Promise<{ child: ChildProcess; sdk: Client; stop(signal: NodeJS.Signals): Promise<number | null> }> {
    const child = spawn(
      process.execPath,
      [join(repo, 'bin/tracepipe.js'), '--config', join(repo, 'configs/local.yaml')],
      {
        cwd: repo,
        env: { ...process.env, AGENT_API_PORT: '0', HTTP_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`tracepipe exited with ${code} before listening:\n${output}`)));
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        for (const line of output.split('\n')) {
          if (line.includes('Agent API server listening')) resolve((JSON.parse(line) as { port: number }).port);
        }
      });
    });
    const sdk = new SdkClient({ apiUrl: `http://127.0.0.1:${port}`, apiKey: null, callerOptions: { maxRetries: 0 } });
    return {
      child,
      sdk,
      stop(signal) {
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        child.kill(signal);
        return exited;
      },
    };
  }

  test('serves the spec flow on the port it reports, and stops cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-acceptance-cli-'));
    const cli = await startCli(dataDir);
    try {
      const assistant = await cli.sdk.assistants.create({
        graphId: 'agent',
        context: { model_name: 'local-echo', system_prompt: 'Answer like a pirate.' },
      });
      const thread = await cli.sdk.threads.create();
      const parts = await collect(
        cli.sdk.runs.stream(thread.thread_id, assistant.assistant_id, { input: hello(), streamMode: 'updates' }),
      );
      assert.equal(parts[0]!.event, 'metadata');
      const state = await cli.sdk.threads.getState<Json>(thread.thread_id);
      assert.equal(lastAiText(state.values), '(Answer like a pirate.) You said: hello');
      assert.equal(await cli.stop('SIGTERM'), 0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a run cut off by a killed process is not left running after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-acceptance-cli-'));
    let cli = await startCli(dataDir);
    try {
      const thread = await cli.sdk.threads.create();
      const run = await cli.sdk.runs.create(thread.thread_id, 'sleep', { input: longSleep });
      await eventually(
        () => cli.sdk.runs.get(thread.thread_id, run.run_id),
        (r) => r.status === 'running',
      );
      await cli.stop('SIGKILL');

      cli = await startCli(dataDir);
      const after = await eventually(
        () => cli.sdk.runs.get(thread.thread_id, run.run_id),
        (r) => r.status !== 'running' && r.status !== 'pending',
      );
      assert.equal(after.status, 'error');
      assert.notEqual((await cli.sdk.threads.get(thread.thread_id)).status, 'busy');
      const values = (await cli.sdk.runs.wait(thread.thread_id, 'sleep', { input: { delay_ms: 5 } })) as Json;
      assert.equal(lastAiText(values), 'finished after 5 ms');
      assert.equal(await cli.stop('SIGTERM'), 0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
