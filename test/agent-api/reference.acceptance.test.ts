// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// the Agent Deployment API as plugins/receivers/agent_api/README.md describes it and the reference
// server's (LangGraph.js's `langgraph-api`) wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).
//
// Cases ported from the reference server's own suite, written as it writes them.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Client as SdkClient } from '@langchain/langgraph-sdk';
import type { Client } from '@langchain/langgraph-sdk';
import { RemoteGraph } from '@langchain/langgraph/remote';
import { eventually } from '../../src/testkit/eventually.ts';
import { collect, failureOf, request } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import { newGate } from '../../plugins/receivers/agent_api/testing/gates.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import type { WireState } from '../../plugins/receivers/agent_api/testing/types.ts';
import { asObjects, asString, kwargsOf, messagesOf } from '../../plugins/receivers/agent_api/testing/types.ts';
import { runReaches } from '../../plugins/receivers/agent_api/testing/waits.ts';
import { anyString, assertMatches } from '../support/match-object.ts';
import type { Json } from './support.ts';
import { hello, lastAiText, useSharedServer, UUID } from './support.ts';

let server: TestServer;
let client: Client;
let url: string;
useSharedServer((started) => {
  server = started;
  client = started.client;
  url = started.url;
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
        const message = asObjects(part.data)[0]!;
        partial[asString(message.id)] = message.content;
      }
      if (part.event === 'messages/complete') {
        const message = asObjects(part.data)[0]!;
        assert.notEqual(message.content, null);
        if (message.type === 'ai' && asString(message.id) in partial)
          assert.deepEqual(message.content, partial[asString(message.id)]);
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
    const lastValues = mixed.filter((p) => p.event === 'values').pop()!.data;
    assert.equal(messagesOf(lastValues).length, 4);
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
    const original = (await request(url, 'GET', `/threads/${thread.thread_id}/state`)).json as WireState;
    const copy = await client.threads.copy(thread.thread_id);
    const copied = (await request(url, 'GET', `/threads/${copy.thread_id}/state`)).json as WireState;
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
    assert.deepEqual((await request(url, 'GET', `/threads/${thread.thread_id}/state`)).json, original);
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
    assert.equal(((full[full.length - 1]!.values.messages as Json[] | undefined) ?? []).length, 0);
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
    const question = {
      action_requests: [
        {
          name: 'send_reply',
          args: { reply: 'Draft answer to: SF' },
          arguments: { reply: 'Draft answer to: SF' },
          description: 'Approve this draft?',
        },
      ],
      review_configs: [{ action_name: 'send_reply', allowed_decisions: ['approve', 'edit', 'reject'] }],
    };
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
    const gate = newGate();
    const run = await client.runs.create(thread.thread_id, 'gate', { input: { gate: gate.name } });
    let joined = false;
    const joining = client.runs.join(thread.thread_id, run.run_id).then(() => (joined = true));
    await gate.reached;
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'running');
    assert.equal(joined, false, 'join waits while the run is held');
    gate.open();
    await joining;
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'success');
    const state = await client.threads.getState<Json>(thread.thread_id);
    assertMatches(state.values.messages, [{ content: `passed ${gate.name}` }]);
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
    // Time must pass for updated_at to move: the clock is the behaviour under test.
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
    const configurable = kwargsOf(run).config.configurable;
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
    const gate = newGate();
    const stream = client.runs.stream(thread.thread_id, 'gate', {
      input: { gate: gate.name },
      streamMode: 'custom',
      onDisconnect: 'cancel',
      signal: controller.signal,
      onRunCreated: (meta) => {
        runId = meta.run_id;
      },
    });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next(); // metadata
    await gate.reached;
    controller.abort();
    await iterator.next().catch(() => undefined);
    await runReaches(client, thread.thread_id, runId, 'interrupted');
  });

  test('joinStream with cancelOnDisconnect: a reader that leaves cancels the run', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'gate', {
      input: { gate: newGate().name },
      streamMode: ['custom'],
    });
    const controller = new AbortController();
    const iterator = client.runs
      .joinStream(thread.thread_id, run.run_id, { signal: controller.signal, cancelOnDisconnect: true })
      [Symbol.asyncIterator]();
    await iterator.next(); // metadata
    await iterator.next(); // the custom event of the run reaching its gate: the run is going
    controller.abort();
    await iterator.next().catch(() => undefined);
    await runReaches(client, thread.thread_id, run.run_id, 'interrupted');
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
      const [payload] = await eventually(async () => {
        const list = await received;
        assert.ok(list.length > 0, `not yet: ${JSON.stringify(list)}`);
        return list;
      });
      assert.equal(payload!.run_id, run.run_id);
      assert.equal(payload!.status, 'success');
      assert.equal(payload!.thread_id, thread.thread_id);
    } finally {
      await new Promise((resolve) => hook.close(resolve));
    }
  });
});
