// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// the Agent Deployment API as plugins/receivers/agent_api/README.md describes it and the reference
// server's (LangGraph.js's `langgraph-api`) wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).
//
// The API example flow end to end, and the message fields of a tool-calling run.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { join } from 'node:path';
import type { Client, Thread } from '@langchain/langgraph-sdk';
import { collect, failureOf, request } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import type { WireState } from '../../plugins/receivers/agent_api/testing/types.ts';
import {
  asObject,
  asObjects,
  asString,
  kwargsOf,
  messagesOf,
} from '../../plugins/receivers/agent_api/testing/types.ts';
import { anyString, assertMatches } from '../support/match-object.ts';
import type { Json } from './support.ts';
import { ISO, UUID, hello, lastAiText, useSharedServer } from './support.ts';

let server: TestServer;
let client: Client;
let url: string;
useSharedServer((started) => {
  server = started;
  client = started.client;
  url = started.url;
});

describe('the API example flow', () => {
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

    // The thread record with every field the API documents, read off the wire.
    const created = await request(url, 'POST', '/threads', { body: {} });
    assert.equal(created.status, 200);
    const thread = created.json as Thread;
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

    const kwargs = kwargsOf(run);
    assert.deepEqual(kwargs.input, hello());
    assert.deepEqual(kwargs.stream_mode, ['values']);
    assert.equal(kwargs.webhook, null);
    assert.equal(kwargs.temporary, false);
    assert.equal(kwargs.feedback_keys, null);
    assert.equal(kwargs.interrupt_before, null);
    assert.equal(kwargs.interrupt_after, null);
    assert.equal(typeof kwargs.config.metadata, 'object');
    const configurable = kwargs.config.configurable;
    assert.equal(configurable.run_id, run.run_id);
    assert.equal(configurable.thread_id, thread.thread_id);
    assert.equal(configurable.graph_id, 'chat');
    assert.equal(configurable.assistant_id, assistant.assistant_id);
    assert.ok('user_id' in configurable, 'configurable holds user_id');
    assert.ok('checkpoint_id' in configurable, 'configurable holds checkpoint_id');
    assert.equal(configurable.checkpoint_id, null);

    const joined = messagesOf(await client.runs.join(thread.thread_id, run.run_id));
    assert.equal(joined.length, 2);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'success');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
    const listed = await client.runs.list(thread.thread_id);
    assert.deepEqual(
      listed.map((r) => r.run_id),
      [run.run_id],
    );

    const state = (await request(url, 'GET', `/threads/${thread.thread_id}/state`)).json as WireState;
    const [human, ai] = asObjects(state.values.messages);
    // The LangGraph.js server's message shape: the fields a message has, none written as null
    // (no `name` when unset, no `example`).
    for (const message of [human!, ai!]) {
      for (const key of ['type', 'content', 'additional_kwargs', 'response_metadata', 'id']) {
        assert.ok(key in message, `message ${message.type} has \`${key}\``);
      }
      assert.equal(typeof message.id, 'string');
      assert.ok(!('example' in message) && !('name' in message), `message ${message.type} has no unset fields`);
      assert.deepEqual(message.additional_kwargs, message.additional_kwargs ?? {});
      assert.equal(typeof message.response_metadata, 'object');
    }
    assert.equal(human!.type, 'human');
    assert.equal(human!.content, 'hello');
    assert.equal(ai!.type, 'ai');
    assert.equal(ai!.content, '(Answer like a pirate.) You said: hello');
    assert.deepEqual(ai!.tool_calls, []);
    assert.deepEqual(ai!.invalid_tool_calls, []);
    for (const key of ['input_tokens', 'output_tokens', 'total_tokens']) {
      assert.ok(Number.isInteger(asObject(ai!.usage_metadata)[key]), `usage_metadata.${key} is an integer`);
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
      asObjects(asObject(asObject(state.metadata.writes).call_model).messages)[0]?.content,
      '(Answer like a pirate.) You said: hello',
      'writes are keyed by node name',
    );
    assert.match(state.created_at ?? '', ISO);
    assert.equal(typeof state.checkpoint_id, 'string');
    assert.equal(typeof state.parent_checkpoint_id, 'string');

    // PATCH: version 2, active at once; the fields it does not send keep their value.
    const patched = await request(url, 'PATCH', `/assistants/${assistant.assistant_id}`, {
      body: { context: { model_name: 'local-echo', system_prompt: 'Answer like a robot.' } },
    });
    assert.equal(patched.status, 200);
    const v2 = patched.json as Json;
    assert.equal(v2.version, 2);
    assert.deepEqual(v2.context, { model_name: 'local-echo', system_prompt: 'Answer like a robot.' });
    assert.deepEqual(v2.metadata, { team: 'qa' }, 'metadata not sent is kept from version 1');
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
      /^HTTP 404: No assistant found for '/,
    );
  });

  test('a streamed run with stream_mode updates: metadata first, then one event per node with its messages', async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'chat', { input: hello(), streamMode: 'updates' }),
    );
    assert.equal(parts[0]!.event, 'metadata');
    assert.match(asString(asObject(parts[0]!.data).run_id), UUID);
    const updates = parts.slice(1);
    assert.ok(updates.length >= 1);
    assert.ok(updates.every((p) => p.event === 'updates'));
    const node = asObject(updates.map((p) => asObject(p.data)).find((data) => 'call_model' in data)?.call_model);
    const [message] = asObjects(node.messages);
    assert.equal(message?.type, 'ai');
    assert.equal(message?.content, 'You said: hello');
  });
});

describe('the API message fields on a tool-calling run', () => {
  test('human, ai (with tool_calls and integer usage), tool (tool_call_id, status; no artifact when none)', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'tools', {
      input: { messages: [{ role: 'user', content: 'Weather in Paris?' }] },
    });
    const messages = (await request(url, 'GET', `/threads/${thread.thread_id}/state`)).json as WireState;
    const [human, call, tool, answer] = asObjects(messages.values.messages);
    assert.deepEqual(
      [human, call, tool, answer].map((m) => m!.type),
      ['human', 'ai', 'tool', 'ai'],
    );
    for (const message of [human!, call!, tool!, answer!]) {
      for (const key of ['content', 'additional_kwargs', 'response_metadata', 'id'])
        assert.ok(key in message, `${message.type} has ${key}`);
      assert.ok(!Object.values(message).includes(null), `${message.type} has no null fields`);
    }
    for (const ai of [call!, answer!]) {
      assert.ok(Array.isArray(ai.tool_calls) && Array.isArray(ai.invalid_tool_calls));
      for (const key of ['input_tokens', 'output_tokens', 'total_tokens'])
        assert.ok(Number.isInteger(asObject(ai.usage_metadata)[key]));
    }
    assertMatches(call!.tool_calls, [{ id: anyString, name: 'get_weather', args: { city: 'Paris' } }]);
    assert.equal(tool!.tool_call_id, asObjects(call!.tool_calls)[0]?.id);
    assert.ok(!('artifact' in tool!), 'the tool returned no artifact: the field is left out');
    assert.equal(tool!.status, 'success');
    assert.equal(tool!.content, "It's always sunny in Paris.");
  });
});
