// Threads through the real SDK: create (`if_exists`), get, update metadata, delete; the exact 422
// bodies; state now and at a checkpoint, state updates and patches, history; supersteps; a busy
// thread. Search, copy and interrupts are in test/agent-api/{threads,runs}.acceptance.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Client } from '@langchain/langgraph-sdk';
import { eventually } from 'tracepipe/testing';
import { newGate } from './testing/gates.ts';
import type { ErrorBody, MessagesValues } from './testing/types.ts';
import { asObject, messagesOf } from './testing/types.ts';
import { useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

const ask = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('agent_api threads', () => {
  let server: TestServer;
  let client: Client;
  useTestServer((started) => {
    server = started;
    client = started.client;
  });

  it('creates an idle thread, honours if_exists, updates metadata and deletes', async () => {
    const thread = await client.threads.create();
    assert.equal(thread.status, 'idle');
    assert.deepEqual(thread.metadata, {});
    assert.deepEqual(thread.config, {});
    assert.equal(thread.values, null);
    assert.match(thread.thread_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    await assert.rejects(client.threads.create({ threadId: thread.thread_id }), /HTTP 409: .*already exists/);
    assert.deepEqual(await client.threads.create({ threadId: thread.thread_id, ifExists: 'do_nothing' }), thread);
    const patched = await client.threads.update(thread.thread_id, { metadata: { a: 1 } });
    assert.deepEqual(patched.metadata, { a: 1 });
    assert.deepEqual((await client.threads.update(thread.thread_id, { metadata: { b: 2 } })).metadata, { a: 1, b: 2 });
    await client.threads.delete(thread.thread_id);
    await assert.rejects(client.threads.get(thread.thread_id), /HTTP 404: .*not found/);
    await assert.rejects(client.threads.delete(thread.thread_id), /HTTP 404/);
  });

  it('answers 422 for a non-uuid id and bad bodies, 404 for unknown threads', async () => {
    const response = await fetch(`${server.url}/threads/not-a-uuid`);
    assert.equal(response.status, 422);
    assert.match(((await response.json()) as ErrorBody).message, /params\.thread_id: must match format "uuid"/);
    const badPatch = await fetch(`${server.url}/threads/00000000-0000-4000-8000-000000000000`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({}),
    });
    assert.equal(badPatch.status, 422);
    assert.match(((await badPatch.json()) as ErrorBody).message, /body\.metadata: is required/);
    const badStatus = await fetch(`${server.url}/threads/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'sleepy' }),
    });
    assert.equal(badStatus.status, 422);
    assert.match(
      ((await badStatus.json()) as ErrorBody).message,
      /body\.status: must be one of "idle", "busy", "interrupted", "error"/,
    );
    await assert.rejects(client.threads.getState('00000000-0000-4000-8000-000000000000'), /HTTP 404/);
    await assert.rejects(
      client.runs.create('00000000-0000-4000-8000-000000000000', 'agent', { input: ask('x') }),
      /HTTP 404: .*Thread with ID 00000000-0000-4000-8000-000000000000 not found/,
    );
    await assert.rejects(
      client.runs.create(null, 'no_such_assistant', { input: ask('x') }),
      /HTTP 404: .*No assistant found for 'no_such_assistant'/,
    );
  });

  it('takes an id in the path as 32 hex digits too (a run’s trace id), and answers with the stored form', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.wait(thread.thread_id, 'agent', { input: ask('hex') });
    assert.ok(run);
    const [stored] = await client.runs.list(thread.thread_id);
    const hex = (id: string) => id.replace(/-/g, '');
    for (const path of [
      `/threads/${hex(thread.thread_id)}`,
      `/threads/${hex(thread.thread_id).toUpperCase()}/state`,
      `/threads/${thread.thread_id}/runs/${hex(stored!.run_id)}`,
    ]) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 200, path);
      assert.equal(((await response.json()) as { thread_id?: string }).thread_id ?? thread.thread_id, thread.thread_id);
    }
  });

  it('has empty state before any run, then state, history, state at a checkpoint, and updates', async () => {
    const thread = await client.threads.create();
    const empty = await client.threads.getState(thread.thread_id);
    assert.deepEqual(empty.values, {});
    assert.deepEqual(empty.next, []);
    assert.equal(empty.checkpoint as unknown, null);
    assert.deepEqual(await client.threads.getHistory(thread.thread_id), []);

    await client.runs.wait(thread.thread_id, 'agent', { input: ask('first'), metadata: { turn: 1 } });
    await client.runs.wait(thread.thread_id, 'agent', { input: ask('second'), metadata: { turn: 2 } });
    const history = await client.threads.getHistory<MessagesValues>(thread.thread_id);
    assert.equal(history.length, 6);
    assert.equal(history[0].values.messages.length, 4);
    assert.deepEqual(history.at(-1)!.next, ['__start__']);
    assert.equal((await client.threads.getHistory(thread.thread_id, { limit: 2 })).length, 2);
    assert.equal((await client.threads.getHistory(thread.thread_id, { metadata: { turn: 1 } })).length, 3);
    const older = await client.threads.getHistory(thread.thread_id, { before: history[2].checkpoint as never });
    assert.deepEqual(
      older.map((s) => s.checkpoint.checkpoint_id),
      history.slice(3).map((s) => s.checkpoint.checkpoint_id),
    );

    const atCheckpoint = await client.threads.getState<MessagesValues>(thread.thread_id, history[3].checkpoint);
    assert.equal(atCheckpoint.values.messages.length, 2);
    const viaId = await client.threads.getState<MessagesValues>(thread.thread_id, history[3].checkpoint.checkpoint_id!);
    assert.equal(viaId.values.messages.length, 2);

    const update = await client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'ai', content: 'edited', id: 'edit-1' }] },
      asNode: 'call_model',
    });
    // The server answers `{checkpoint}` (as the reference servers do), whatever the SDK's type says.
    assert.equal(typeof asObject(asObject(update).checkpoint).checkpoint_id, 'string');
    const state = await client.threads.getState<MessagesValues>(thread.thread_id);
    assert.equal(state.values.messages.at(-1)?.content, 'edited');
    assert.equal(state.metadata?.source, 'update');
    assert.equal((await client.threads.get<MessagesValues>(thread.thread_id)).values.messages.length, 5);

    // Patching the state's metadata changes the latest checkpoint in place.
    const before = await client.threads.getState(thread.thread_id);
    await client.threads.patchState(thread.thread_id, { reviewed: true });
    const patched = await client.threads.getState(thread.thread_id);
    assert.equal(patched.metadata?.reviewed, true);
    assert.equal(patched.checkpoint.checkpoint_id, before.checkpoint.checkpoint_id);
    assert.equal(patched.parent_checkpoint?.checkpoint_id, before.parent_checkpoint?.checkpoint_id);
  });

  it('a state read again is the same until a run, a state update or a metadata patch changes it', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: ask('one') });
    const first = await client.threads.getState<MessagesValues>(thread.thread_id);
    assert.deepEqual(await client.threads.getState(thread.thread_id), first);
    const raw = await fetch(`${server.url}/threads/${thread.thread_id}/state`);
    assert.match(raw.headers.get('content-type')!, /^application\/json/);
    assert.deepEqual(await raw.json(), first);

    await client.runs.wait(thread.thread_id, 'agent', { input: ask('two') });
    const second = await client.threads.getState<MessagesValues>(thread.thread_id);
    assert.equal(second.values.messages.length, first.values.messages.length + 2, 'the run shows at once');
    assert.notEqual(second.checkpoint.checkpoint_id, first.checkpoint.checkpoint_id);

    await client.threads.updateState(thread.thread_id, { values: { messages: [{ role: 'user', content: 'three' }] } });
    const third = await client.threads.getState<MessagesValues>(thread.thread_id);
    assert.equal(third.values.messages.at(-1)?.content, 'three');

    await client.threads.patchState(thread.thread_id, { tag: 'patched' });
    assert.equal((await client.threads.getState(thread.thread_id)).metadata?.tag, 'patched');

    await client.threads.delete(thread.thread_id);
    await assert.rejects(client.threads.getState(thread.thread_id), /HTTP 404/);
  });

  it('creates a thread from supersteps of state updates', async () => {
    const thread = await client.threads.create({
      graphId: 'agent',
      supersteps: [
        { updates: [{ values: { messages: [{ role: 'user', content: 'seeded', id: 'm1' }] }, asNode: 'call_model' }] },
        {
          updates: [
            { values: { messages: [{ role: 'ai', content: 'seeded answer', id: 'm2' }] }, asNode: 'call_model' },
          ],
        },
      ],
    });
    assert.deepEqual(
      messagesOf(thread.values).map((m) => m.content),
      ['seeded', 'seeded answer'],
    );
    const state = await client.threads.getState(thread.thread_id);
    assert.deepEqual(state.next, []);
    const reply = await client.runs.wait(thread.thread_id, 'agent', { input: ask('more') });
    assert.equal(messagesOf(reply).length, 4);
  });

  it("a state update sets the thread's status from the state it leaves: past an interrupt idle, before a node interrupted", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'interrupt', { input: ask('draft me a reply') });
    const paused = await client.threads.get(thread.thread_id);
    assert.equal(paused.status, 'interrupted');
    assert.ok(Object.keys(paused.interrupts ?? {}).length > 0);

    await client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'ai', content: 'answered by hand' }] },
      asNode: 'review',
    });
    assert.deepEqual((await client.threads.getState(thread.thread_id)).next, []);
    const answered = await client.threads.get(thread.thread_id);
    assert.equal(answered.status, 'idle');
    assert.deepEqual(answered.interrupts ?? {}, {});
    assert.equal(
      (await client.threads.search({ status: 'interrupted', limit: 1000 })).some(
        (t) => t.thread_id === thread.thread_id,
      ),
      false,
    );

    await client.threads.updateState(thread.thread_id, { values: { draft: 'again' }, asNode: 'write_draft' });
    assert.deepEqual((await client.threads.getState(thread.thread_id)).next, ['review']);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'interrupted');
  });

  it('a thread busy with a run shows busy, then idle', async () => {
    const thread = await client.threads.create();
    const gate = newGate();
    const run = await client.runs.create(thread.thread_id, 'gate', { input: { gate: gate.name } });
    assert.equal((await client.threads.get(thread.thread_id)).status, 'busy');
    assert.equal((await client.threads.count({ status: 'busy' })) >= 1, true);
    gate.open();
    await client.runs.join(thread.thread_id, run.run_id);
    await eventually(async () => assert.equal((await client.threads.get(thread.thread_id)).status, 'idle'));
  });
});
