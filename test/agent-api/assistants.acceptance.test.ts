// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// the Agent Deployment API as plugins/receivers/agent_api/README.md describes it and the reference
// server's (LangGraph.js's `langgraph-api`) wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).
//
// Assistants: system assistants, context, CRUD, versions, search, deletion with runs in flight, graph and schemas.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Client } from '@langchain/langgraph-sdk';
import { failureOf, request } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import { newGate } from '../../plugins/receivers/agent_api/testing/gates.ts';
import { messagesOf } from '../../plugins/receivers/agent_api/testing/types.ts';
import type { Json } from './support.ts';
import { ISO, hello, lastAiText, useSharedServer } from './support.ts';

let server: TestServer;
let client: Client;
let url: string;
useSharedServer((started) => {
  server = started;
  client = started.client;
  url = started.url;
});

describe('assistants', () => {
  test('a graph id works wherever an assistant id does, naming the system assistant (uuid5)', async () => {
    const system = await client.assistants.get('agent');
    assert.equal(system.assistant_id, 'fe096781-5601-53d2-b2f6-0d3403f7e9ca');
    assert.equal(system.graph_id, 'agent');
    assert.equal(system.name, 'agent');
    assert.deepEqual(system.metadata, { created_by: 'system' });
    assert.equal(system.version, 1);
    assert.deepEqual(await client.assistants.get(system.assistant_id), system);
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
    assert.equal(created.description, 'first');
    const read = await client.assistants.get(created.assistant_id);
    assert.deepEqual(read, created);
    const updated = await client.assistants.update(created.assistant_id, {
      name: 'Crud 2',
      description: 'second',
      metadata: { b: 2 },
    });
    assert.equal(updated.name, 'Crud 2');
    assert.equal(updated.description, 'second');
    // Sent metadata is merged into the current one, as the reference server and the SDK document.
    assert.deepEqual(updated.metadata, { a: 1, b: 2 });
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
    assert.deepEqual(same, first);
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
    const assistant = await client.assistants.create({ graphId: 'gate' });
    const thread = await client.threads.create();
    const gate = newGate();
    const run = await client.runs.create(thread.thread_id, assistant.assistant_id, { input: { gate: gate.name } });
    await gate.reached;
    await client.assistants.delete(assistant.assistant_id);
    assert.match(await failureOf(() => client.runs.get(thread.thread_id, run.run_id)), /^HTTP 404/);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
    // Had the run gone on past its gate, its answer would land in the thread (or keep it busy).
    gate.open();
    const next = newGate();
    next.open();
    const later = await client.runs.wait(thread.thread_id, 'gate', { input: { gate: next.name } });
    assert.deepEqual(
      messagesOf(later).map((m) => m.content),
      [`passed ${next.name}`],
    );
  });

  test('graph and schemas of an assistant', async () => {
    const graph = await client.assistants.getGraph('chat');
    assert.ok(graph.nodes.some((node) => node.id === 'call_model'));
    assert.ok(graph.edges.length >= 2);
    const tools = await client.assistants.getGraph('tools');
    const nodeIds = tools.nodes.map((n) => n.id);
    for (const id of ['__start__', 'agent', 'tools', '__end__']) assert.ok(nodeIds.includes(id), id);
    assert.ok(tools.edges.some((e) => e.source === 'tools' && e.target === 'agent'));
    const schemas = await client.assistants.getSchemas('chat');
    assert.equal(schemas.graph_id, 'chat');
    for (const key of ['input_schema', 'output_schema', 'state_schema', 'config_schema', 'context_schema'])
      assert.ok(key in schemas, key);
    assert.ok('research' in (await client.assistants.getSubgraphs('subgraph')));
    assert.ok(JSON.stringify(schemas.context_schema).includes('system_prompt'));
    assert.ok(JSON.stringify(schemas.state_schema).includes('messages'));
  });
});
