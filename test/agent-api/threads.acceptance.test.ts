// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// the Agent Deployment API as plugins/receivers/agent_api/README.md describes it and the reference
// server's (LangGraph.js's `langgraph-api`) wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).
//
// Threads: CRUD, if_exists, search, copy, state and history, state updates.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Client } from '@langchain/langgraph-sdk';
import { failureOf, request } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import { newGate } from '../../plugins/receivers/agent_api/testing/gates.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import { asObject } from '../../plugins/receivers/agent_api/testing/types.ts';
import type { Json } from './support.ts';
import { hello, useSharedServer } from './support.ts';

let server: TestServer;
let client: Client;
let url: string;
useSharedServer((started) => {
  server = started;
  client = started.client;
  url = started.url;
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
    assert.equal(await client.threads.count({ metadata: { suite }, status: 'busy' }), 0);
    const byIds = await client.threads.search({ ids: [made[0]!.thread_id, made[2]!.thread_id] });
    assert.deepEqual(new Set(byIds.map((t) => t.thread_id)), new Set([made[0]!.thread_id, made[2]!.thread_id]));
    await client.runs.wait(made[1]!.thread_id, 'chat', { input: hello('by values') });
    const byValues = await client.threads.search({
      metadata: { suite },
      values: { messages: [{ content: 'by values' }] },
    } as never);
    assert.deepEqual(
      byValues.map((t) => t.thread_id),
      [made[1]!.thread_id],
    );
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
    const thread = await client.threads.create({ metadata: { origin: true } });
    await client.runs.wait(thread.thread_id, 'chat', { input: hello('one') });
    const copy = await client.threads.copy(thread.thread_id);
    assert.notEqual(copy.thread_id, thread.thread_id);
    assert.equal(copy.status, 'idle');
    assert.equal(copy.metadata?.origin, true, 'the copy keeps the metadata');
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
    // A missing source is a 409, as on the reference server.
    assert.match(
      await failureOf(() => client.threads.copy(crypto.randomUUID())),
      /^HTTP 409: Thread with ID .* not found$/,
    );
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
    const result = asObject(
      await client.threads.updateState(thread.thread_id, {
        values: { messages: [{ role: 'user', content: 'added by hand' }] },
        asNode: 'call_model',
      }),
    );
    const written = asObject(result.checkpoint, 'checkpoint');
    assert.equal(typeof written.checkpoint_id, 'string');
    const state = await client.threads.getState<Json>(thread.thread_id);
    const messages = state.values.messages as Json[];
    assert.equal(messages.length, 3);
    assert.equal(messages[2]!.content, 'added by hand');
    assert.equal(state.checkpoint.checkpoint_id, written.checkpoint_id);
    assert.equal((await client.threads.getHistory(thread.thread_id)).length, before.length + 1);
  });

  test('update state while a run is in flight → 409; after cancel the thread is idle and updates work', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'gate', { input: { gate: newGate().name } });
    assert.equal((await client.threads.get(thread.thread_id)).status, 'busy');
    const busy = await failureOf(() => client.threads.updateState(thread.thread_id, { values: { gate: 'refused' } }));
    assert.match(busy, /^HTTP 409: .*busy/);
    await client.runs.cancel(thread.thread_id, run.run_id, true);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'interrupted');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
    await client.threads.updateState(thread.thread_id, { values: { gate: 'updated by hand' } });
    assert.equal((await client.threads.getState<Json>(thread.thread_id)).values.gate, 'updated by hand');
  });
});
