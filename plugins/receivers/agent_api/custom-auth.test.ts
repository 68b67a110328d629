// Custom auth handlers as LangGraph.js deployments write them: `langgraph.json` names
// `./auth.ts:auth` (testdata/auth/), an `Auth` from `@langchain/langgraph-sdk/auth` that
// authenticates a bearer token and filters threads, assistants and store items by owner. The first
// part ports the reference server's `tests/auth.test.mts` (langgraphjs libs/langgraph-api) to this
// server, through `@langchain/langgraph-sdk`; where this server answers differently on purpose the
// test says so. The second part goes through every route with two users who must never see each
// other's threads, runs, assistants or store items; the third covers handler contract edges.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { matchesAuthFilters } from './internal/auth/filters.ts';
import type { AuthFilters } from './internal/auth/filters.ts';
import { EXAMPLES_LANGGRAPH_JSON, startTestServer, useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import type { ErrorBody } from './testing/types.ts';
import { asObject, kwargsOf } from './testing/types.ts';
import { failureOf, fetchAcceptingJson } from './testing/agent-wire.ts';

const AUTH_LANGGRAPH_JSON = fileURLToPath(new URL('./testdata/auth/langgraph.json', import.meta.url));
const config = { configurable: { user_id: '123' } };
const ask = (content: string) => ({ messages: [{ role: 'human', content }] });

async function gather<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/**
 * Joins a run's stream the user may not see: as on the reference server, the stream opens and
 * carries one error event, the same whether the run is hidden or missing.
 */
async function assertHiddenStream(stream: AsyncIterable<unknown>): Promise<void> {
  const parts = (await gather(stream)) as { event: string; data: unknown }[];
  assert.deepEqual(
    parts.map(({ event, data }) => ({ event, data })),
    [{ event: 'error', data: { error: 'Error', message: '404: Thread not found' } }],
  );
}

describe('custom auth: the reference server auth tests, ported', () => {
  let server: TestServer;
  useTestServer(
    (started) => {
      server = started;
    },
    { langgraph_config: AUTH_LANGGRAPH_JSON },
  );
  /** A client for `sub` whose token grants `scopes` (the reference signs a JWT with them). */
  const user = (sub: string, scopes: string[] = []) =>
    new Client({
      apiUrl: server.url,
      apiKey: null,
      defaultHeaders: { Authorization: `Bearer ${sub}:${scopes.join(' ')}` },
      callerOptions: { maxRetries: 0 },
    });

  it('unauthenticated user', async () => {
    await assert.rejects(user('wfh', ['me']).assistants.create({ graphId: 'agent' }), /HTTP 401/);
    // Without a token at all; the handler's message and headers reach the client.
    const answer = await fetchAcceptingJson(`${server.url}/threads/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(answer.status, 401);
    assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
    assert.deepEqual(await answer.json(), {
      statusCode: 401,
      error: 'Unauthorized',
      code: 'TP_ERR_API_UNAUTHORIZED',
      message: 'Could not validate credentials',
    });
  });

  it('create assistant with forbidden scopes', async () => {
    await assert.rejects(user('johndoe').assistants.create({ graphId: 'agent' }), /HTTP 403: .*Not authorized/);
    await assert.rejects(user('johndoe', ['foo']).assistants.create({ graphId: 'agent' }), /HTTP 403/);
    const writer = user('johndoe', ['assistants:write']);
    const suite = randomUUID();
    await writer.assistants.create({ graphId: 'agent', metadata: { suite } });
    const fetched = await writer.assistants.search({ graphId: 'agent', metadata: { suite } });
    assert.equal(fetched.length, 1);
    assert.equal(fetched[0]!.metadata?.owner, 'johndoe');
  });

  it('get thread history from unauthorized user', async () => {
    const user1 = user('johndoe', ['me', 'assistants:write']);
    await user1.assistants.create({ graphId: 'agent' });
    const thread = await user1.threads.create();
    assert.deepEqual(await user1.threads.getHistory(thread.thread_id), []);
    await user1.runs.wait(thread.thread_id, 'agent', { input: ask('foo'), config });
    assert.ok((await user1.threads.getHistory(thread.thread_id)).length > 0);
    await assert.rejects(
      user('alice', ['me']).runs.wait(thread.thread_id, 'agent', { input: ask('foo'), config }),
      /HTTP 404/,
    );
  });

  it('add run to unauthorized thread', async () => {
    const thread = await user('johndoe', ['me']).threads.create();
    await assert.rejects(
      user('alice', ['me']).runs.wait(thread.thread_id, 'agent', { input: ask('foo'), config }),
      /HTTP 404/,
    );
  });

  it('assistant access control', async () => {
    const assistant = await user('johndoe', ['assistants:write']).assistants.create({ graphId: 'agent' });
    const other = user('alice', ['assistants:write']);
    await assert.rejects(other.assistants.update(assistant.assistant_id, { metadata: { foo: 'bar' } }), /HTTP 404/);
    await assert.rejects(other.assistants.delete(assistant.assistant_id), /HTTP 404/);
  });

  it('thread operations auth', async () => {
    const thread = await user('johndoe', ['me']).threads.create();
    const other = user('alice', ['me']);
    await assert.rejects(other.threads.update(thread.thread_id, { metadata: { foo: 'bar' } }), /HTTP 404/);
    await assert.rejects(other.threads.delete(thread.thread_id), /HTTP 404/);
  });

  it("run streaming auth: joining another user's run streams one error event, as for a missing run", async () => {
    const owner = user('johndoe', ['me']);
    const thread = await owner.threads.create();
    const run = await owner.runs.create(thread.thread_id, 'agent', { input: ask('foo'), config });
    await assertHiddenStream(user('alice', ['me']).runs.joinStream(thread.thread_id, run.run_id));
    await assertHiddenStream(user('alice', ['me']).runs.joinStream(thread.thread_id, randomUUID()));
    await owner.runs.join(thread.thread_id, run.run_id);
  });

  it('store auth', async () => {
    const userA = user('johndoe', ['me', 'assistants:write']);
    const userB = user('alice', ['me', 'assistants:write']);
    await userA.store.deleteItem(['johndoe'], 'key_one');
    await userB.store.deleteItem(['alice'], 'key_one');
    const threadA = await userA.threads.create();
    const threadB = await userB.threads.create();
    await Promise.all([
      userA.runs.wait(threadA.thread_id, 'agent_simple', { input: ask('test user A'), config }),
      userB.runs.wait(threadB.thread_id, 'agent_simple', { input: ask('test user B'), config }),
    ]);

    await assert.rejects(userA.store.getItem(['ALL'], 'key_one'), /HTTP 403/);
    await assert.rejects(userA.store.putItem(['ALL'], 'key_one', { foo: 'bar' }), /HTTP 403/);
    await assert.rejects(userA.store.deleteItem(['ALL'], 'key_one'), /HTTP 403/);
    await assert.rejects(userA.store.searchItems(['ALL']), /HTTP 403/);
    await assert.rejects(userA.store.listNamespaces({ prefix: ['ALL'] }), /HTTP 403/);

    assert.deepEqual((await userA.store.getItem(['johndoe'], 'key_one'))?.value, { text: 'test user A' });
    const searchedA = await userA.store.searchItems(['johndoe']);
    assert.deepEqual(
      searchedA.items.map((item) => [item.key, item.value]),
      [['key_one', { text: 'test user A' }]],
    );
    assert.deepEqual((await userA.store.listNamespaces({ prefix: ['johndoe'] })).namespaces, [['johndoe']]);
    assert.deepEqual(
      (await userA.store.searchItems([])).items.map((item) => [item.key, item.value]),
      [['key_one', { text: 'test user A' }]],
    );
    assert.deepEqual((await userA.store.listNamespaces({})).namespaces, [['johndoe']]);

    assert.deepEqual((await userB.store.getItem(['alice'], 'key_one'))?.value, { text: 'test user B' });
    assert.deepEqual(
      (await userB.store.searchItems(['alice'])).items.map((item) => item.value),
      [{ text: 'test user B' }],
    );
    assert.deepEqual((await userB.store.listNamespaces({ prefix: ['alice'] })).namespaces, [['alice']]);
  });

  it('run cancellation', async () => {
    const owner = user('johndoe', ['me']);
    const thread = await owner.threads.create();
    const run = await owner.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 60_000, steps: 600 }, config });
    await assert.rejects(user('alice', ['me']).runs.cancel(thread.thread_id, run.run_id), /HTTP 404/);
    await owner.runs.cancel(thread.thread_id, run.run_id, true);
    assert.equal((await owner.runs.get(thread.thread_id, run.run_id)).status, 'interrupted');
  });

  it('get assistant ownership', async () => {
    const owner = user('johndoe', ['assistants:write']);
    const assistant = await owner.assistants.create({ graphId: 'agent' });
    assert.equal((await owner.assistants.get(assistant.assistant_id)).assistant_id, assistant.assistant_id);
    await assert.rejects(user('alice', ['assistants:write']).assistants.get(assistant.assistant_id), /HTTP 404/);
    await assert.rejects(owner.assistants.get(randomUUID()), /HTTP 404/);
  });

  it('get assistant graph', async () => {
    const owner = user('johndoe', ['assistants:write']);
    const assistant = await owner.assistants.create({ graphId: 'agent' });
    const graph = await owner.assistants.getGraph(assistant.assistant_id);
    assert.ok(Array.isArray(graph.nodes) && Array.isArray(graph.edges));
    await assert.rejects(user('alice', ['assistants:write']).assistants.getGraph(assistant.assistant_id), /HTTP 404/);
  });

  it('thread state operations', async () => {
    const owner = user('johndoe', ['me']);
    const other = user('alice', ['me']);
    const thread = await owner.threads.create();
    const run = await owner.runs.create(thread.thread_id, 'agent_simple', { input: ask('test'), config });
    await owner.runs.join(thread.thread_id, run.run_id);
    const state = await owner.threads.getState<{ messages: { type: string; content: string }[] }>(thread.thread_id);
    assert.ok(state.values.messages.some((message) => message.type === 'human' && message.content === 'test'));
    await owner.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'human', content: 'updated' }] },
    });
    const updated = await owner.threads.getState<{ messages: { content: string }[] }>(thread.thread_id);
    assert.equal(updated.values.messages.at(-1)!.content, 'updated');
    await assert.rejects(other.threads.getState(thread.thread_id), /HTTP 404/);
    await assert.rejects(other.threads.updateState(thread.thread_id, { values: { messages: [] } }), /HTTP 404/);
  });

  it('run operations', async () => {
    const owner = user('johndoe', ['me']);
    const other = user('alice', ['me']);
    const thread = await owner.threads.create();
    const run = await owner.runs.create(thread.thread_id, 'agent', { input: ask('test'), config, afterSeconds: 100 });
    assert.ok((await owner.runs.list(thread.thread_id)).some((listed) => listed.run_id === run.run_id));
    assert.equal((await owner.runs.get(thread.thread_id, run.run_id)).run_id, run.run_id);
    await assert.rejects(other.runs.list(thread.thread_id), /HTTP 404/);
    await assert.rejects(other.runs.get(thread.thread_id, run.run_id), /HTTP 404/);
    await assert.rejects(other.runs.cancel(thread.thread_id, run.run_id, true), /HTTP 404/);
    await assert.rejects(other.runs.delete(thread.thread_id, run.run_id), /HTTP 404/);
    await owner.runs.cancel(thread.thread_id, run.run_id, true);
    await owner.runs.delete(thread.thread_id, run.run_id);
    await assert.rejects(owner.runs.get(thread.thread_id, run.run_id), /HTTP 404/);
  });

  it('create, list, get, join, wait, stream, cancel and delete runs in another user thread', async () => {
    const owner = user('johndoe', ['me']);
    const other = user('alice', ['me']);
    const thread = await owner.threads.create();
    await assert.rejects(
      other.runs.create(thread.thread_id, 'agent', { input: ask('Unauthorized attempt'), config }),
      /HTTP 404/,
    );
    const run = await owner.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 60_000, steps: 600 }, config });
    await assert.rejects(other.runs.list(thread.thread_id), /HTTP 404/);
    await assert.rejects(other.runs.get(thread.thread_id, run.run_id), /HTTP 404/);
    await assert.rejects(other.runs.join(thread.thread_id, run.run_id), /HTTP 404/);
    await assert.rejects(
      other.runs.wait(thread.thread_id, 'agent', { input: ask('Waiting test'), config }),
      /HTTP 404/,
    );
    await assertHiddenStream(other.runs.joinStream(thread.thread_id, run.run_id));
    await assert.rejects(other.runs.cancel(thread.thread_id, run.run_id), /HTTP 404/);
    await assert.rejects(other.runs.delete(thread.thread_id, run.run_id), /HTTP 404/);
    await owner.runs.cancel(thread.thread_id, run.run_id, true);
  });

  it('update thread state and get a checkpoint of another user', async () => {
    const owner = user('johndoe', ['me', 'assistants:write']);
    const other = user('alice', ['me']);
    const thread = await owner.threads.create();
    await assert.rejects(other.threads.updateState(thread.thread_id, { values: { some: 'value' } }), /HTTP 404/);
    await owner.runs.wait(thread.thread_id, 'agent', { input: ask('Checkpoint test'), config });
    const history = await owner.threads.getHistory(thread.thread_id);
    const checkpointId = history.at(-1)!.checkpoint.checkpoint_id!;
    assert.equal((await owner.threads.getState(thread.thread_id, checkpointId)).checkpoint.checkpoint_id, checkpointId);
    await assert.rejects(other.threads.getState(thread.thread_id, checkpointId), /HTTP 404/);
  });

  it('assistant version leakage, and set latest', async () => {
    const owner = user('johndoe', ['assistants:write']);
    const other = user('alice', ['assistants:write']);
    const assistant = await owner.assistants.create({ graphId: 'agent' });
    const someId = randomUUID();
    const updated = await owner.assistants.update(assistant.assistant_id, { metadata: { foo: someId } });
    assert.equal(updated.metadata?.foo, someId);
    // The handler stamps the owner on updates; this server would also keep it (see README).
    assert.equal(updated.metadata?.owner, 'johndoe');
    await assert.rejects(other.assistants.getVersions(assistant.assistant_id), /HTTP 404/);
    await assert.rejects(other.assistants.setLatest(assistant.assistant_id, 1), /HTTP 404/);
    const result = await owner.assistants.setLatest(assistant.assistant_id, 1);
    assert.equal(result.assistant_id, assistant.assistant_id);
    assert.equal(result.version, 1);
  });

  it('assistant search filtering', async () => {
    const user1 = user('johndoe', ['assistants:write']);
    const user2 = user('alice', ['assistants:write']);
    const assistant1 = await user1.assistants.create({ graphId: 'agent' });
    const assistant2 = await user2.assistants.create({ graphId: 'agent' });
    const ids1 = (await user1.assistants.search({ limit: 1000 })).map((assistant) => assistant.assistant_id);
    const ids2 = (await user2.assistants.search({ limit: 1000 })).map((assistant) => assistant.assistant_id);
    assert.ok(ids1.includes(assistant1.assistant_id) && !ids1.includes(assistant2.assistant_id));
    assert.ok(ids2.includes(assistant2.assistant_id) && !ids2.includes(assistant1.assistant_id));
  });

  it("thread copy authorization (by owner): another user's thread is a 409, as a missing one", async () => {
    const owner = user('johndoe', ['me']);
    const thread = await owner.threads.create();
    const hidden = await failureOf(() => user('alice', ['me']).threads.copy(thread.thread_id));
    assert.equal(hidden, `HTTP 409: Thread with ID ${thread.thread_id} not found`);
    const missingId = randomUUID();
    assert.equal(
      await failureOf(() => user('alice', ['me']).threads.copy(missingId)),
      `HTTP 409: Thread with ID ${missingId} not found`,
    );
    const copied = await owner.threads.copy(thread.thread_id);
    assert.notEqual(copied.thread_id, thread.thread_id);
    assert.equal(copied.metadata?.owner, 'johndoe');
  });

  it('thread copy authorization (requires read and write)', async () => {
    const writer = user('johndoe', ['me']);
    const reader = user('johndoe', ['threads:read']);
    const thread = await writer.threads.create();
    assert.deepEqual(await reader.threads.get(thread.thread_id), thread);
    assert.deepEqual(await writer.threads.get(thread.thread_id), thread);
    const copied = await writer.threads.copy(thread.thread_id);
    assert.notEqual(copied.thread_id, thread.thread_id);
    await assert.rejects(reader.threads.copy(thread.thread_id), /HTTP 403: .*Not authorized/);
  });

  it('thread history authorization', async () => {
    const owner = user('johndoe', ['me']);
    const thread = await owner.threads.create();
    await owner.runs.wait(thread.thread_id, 'agent', { input: ask('foo'), config });
    assert.ok((await owner.threads.getHistory(thread.thread_id)).length > 0);
    await assert.rejects(user('alice', ['me']).threads.getHistory(thread.thread_id), /HTTP 404/);
  });

  it('stateless runs', async () => {
    const owner = user('johndoe', ['me', 'assistants:write']);
    const assistant = await owner.assistants.create({ graphId: 'agent' });
    const values = await owner.runs.wait(null, assistant.assistant_id, { input: ask('stateless run test'), config });
    assert.ok(values);
    const chunks = await gather(
      owner.runs.stream(null, assistant.assistant_id, { input: ask('stateless run test'), config }),
    );
    assert.equal(
      chunks.find((chunk) => chunk.event === 'error'),
      undefined,
    );
  });

  it('info endpoint', async () => {
    const answer = await fetchAcceptingJson(`${server.url}/info`);
    assert.equal(answer.status, 200);
    assert.equal(typeof ((await answer.json()) as { version: unknown }).version, 'string');
  });
});

describe('custom auth: two users of one deployment never see each other', () => {
  let server: TestServer;
  useTestServer(
    (started) => {
      server = started;
    },
    { langgraph_config: AUTH_LANGGRAPH_JSON },
  );
  const client = (sub: string) =>
    new Client({
      apiUrl: server.url,
      apiKey: null,
      defaultHeaders: { Authorization: `Bearer ${sub}:me assistants:write` },
      callerOptions: { maxRetries: 0 },
    });
  const missingThread = (id: string) => new RegExp(`HTTP 404: .*Thread with ID ${id} not found`);

  it('threads: get, search, count, update, delete, copy, state, history and the thread stream', async () => {
    const alice = client('alice');
    const john = client('johndoe');
    const mine = await alice.threads.create({ metadata: { topic: 'tax' } });
    const his = await john.threads.create({ metadata: { topic: 'tax' } });
    assert.equal(mine.metadata?.owner, 'alice');
    await alice.runs.wait(mine.thread_id, 'agent', { input: ask('private') });

    // A foreign id answers exactly as an unknown one.
    const unknown = randomUUID();
    await assert.rejects(alice.threads.get(his.thread_id), missingThread(his.thread_id));
    await assert.rejects(alice.threads.get(unknown), missingThread(unknown));

    const found = await alice.threads.search({ metadata: { topic: 'tax' }, limit: 1000 });
    assert.deepEqual(
      found.map((thread) => thread.thread_id),
      [mine.thread_id],
    );
    assert.equal(await alice.threads.count({ metadata: { topic: 'tax' } }), 1);
    assert.equal(await john.threads.count({ metadata: { topic: 'tax' } }), 1);
    // Even asking for the other's id by name finds nothing.
    assert.deepEqual(await alice.threads.search({ ids: [his.thread_id] }), []);
    // Pagination counts only what the user sees.
    const page = await fetchAcceptingJson(`${server.url}/threads/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer alice:me' },
      body: JSON.stringify({ metadata: { topic: 'tax' }, limit: 1 }),
    });
    assert.equal(page.headers.get('x-pagination-total'), '1');

    for (const attempt of [
      () => john.threads.get(mine.thread_id),
      () => john.threads.update(mine.thread_id, { metadata: { owner: 'johndoe' } }),
      () => john.threads.delete(mine.thread_id),
      () => john.threads.getState(mine.thread_id),
      () => john.threads.getHistory(mine.thread_id),
      () => john.threads.updateState(mine.thread_id, { values: { messages: [] } }),
      () => gather(john.threads.joinStream(mine.thread_id)),
    ]) {
      await assert.rejects(attempt(), missingThread(mine.thread_id));
    }
    // Copying is a 409 for a hidden thread, as for a missing one (the reference server's answer).
    await assert.rejects(
      john.threads.copy(mine.thread_id),
      new RegExp(`HTTP 409: Thread with ID ${mine.thread_id} not found$`),
    );
    const patchState = await fetchAcceptingJson(`${server.url}/threads/${mine.thread_id}/state`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: 'Bearer johndoe:me' },
      body: JSON.stringify({ metadata: { x: 1 } }),
    });
    assert.equal(patchState.status, 404);
    const atCheckpoint = await fetchAcceptingJson(`${server.url}/threads/${mine.thread_id}/state/checkpoint`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer johndoe:me' },
      body: '{}',
    });
    assert.equal(atCheckpoint.status, 404);

    // Nothing the other user tried changed Alice's thread.
    const after = await alice.threads.get(mine.thread_id);
    assert.equal(after.metadata?.owner, 'alice');
    assert.equal((await alice.threads.getState<{ messages: unknown[] }>(mine.thread_id)).values.messages.length, 2);

    // Creating over someone else's id neither returns nor touches their thread.
    await assert.rejects(john.threads.create({ threadId: mine.thread_id, ifExists: 'do_nothing' }), /HTTP 409/);
    await assert.rejects(john.threads.create({ threadId: mine.thread_id }), /HTTP 409/);
    // Updates keep the owner the handler stamps.
    assert.equal(
      (await alice.threads.update(mine.thread_id, { metadata: { owner: 'johndoe' } })).metadata?.owner,
      'alice',
    );
  });

  it('runs: create, stream, wait, list, get, join, join stream, cancel and delete; the user reaches the graph', async () => {
    const alice = client('alice');
    const john = client('johndoe');
    const thread = await alice.threads.create();
    const done = await alice.runs.create(thread.thread_id, 'agent', { input: ask('hello') });
    await alice.runs.join(thread.thread_id, done.run_id);
    const running = await alice.runs.create(thread.thread_id, 'sleep', {
      input: { delay_ms: 60_000, steps: 600 },
      multitaskStrategy: 'enqueue',
    });

    await assert.rejects(
      john.runs.create(thread.thread_id, 'agent', { input: ask('x') }),
      missingThread(thread.thread_id),
    );
    await assert.rejects(gather(john.runs.stream(thread.thread_id, 'agent', { input: ask('x') })), /HTTP 404/);
    await assert.rejects(john.runs.wait(thread.thread_id, 'agent', { input: ask('x') }), /HTTP 404/);
    await assert.rejects(
      john.runs.create(thread.thread_id, 'agent', { input: ask('x'), ifNotExists: 'create' }),
      /HTTP 404/,
    );
    await assert.rejects(john.runs.list(thread.thread_id), /HTTP 404/);
    for (const runId of [done.run_id, running.run_id]) {
      await assert.rejects(john.runs.get(thread.thread_id, runId), new RegExp(`HTTP 404: .*Run ${runId} not found`));
      await assert.rejects(john.runs.join(thread.thread_id, runId), /HTTP 404/);
      await assertHiddenStream(john.runs.joinStream(thread.thread_id, runId));
      await assertHiddenStream(john.runs.joinStream(null, runId));
      await assert.rejects(john.runs.cancel(thread.thread_id, runId), /HTTP 404/);
      await assert.rejects(john.runs.delete(thread.thread_id, runId), /HTTP 404/);
    }
    assert.equal((await alice.runs.get(thread.thread_id, running.run_id)).status, 'running');
    assert.equal((await alice.runs.list(thread.thread_id)).length, 2);

    // The graph sees the user: identity and permissions in configurable, user_id defaulting to it.
    const configurable = kwargsOf(done).config.configurable;
    assert.equal(configurable.langgraph_auth_user_id, 'alice');
    assert.equal(asObject(configurable.langgraph_auth_user).identity, 'alice');
    assert.deepEqual(configurable.langgraph_auth_permissions, ['me', 'assistants:write']);
    assert.equal(configurable.user_id, 'alice');
    // ... and a client cannot pretend to be someone else through the run's config.
    const spoof = await alice.runs.create(thread.thread_id, 'agent', {
      input: ask('spoof'),
      config: {
        configurable: {
          langgraph_auth_user_id: 'johndoe',
          langgraph_auth_user: { identity: 'johndoe' },
          langgraph_auth_admin: true,
        },
      },
      multitaskStrategy: 'enqueue',
    });
    const spoofed = kwargsOf(spoof).config.configurable;
    assert.equal(spoofed.langgraph_auth_user_id, 'alice');
    assert.equal(asObject(spoofed.langgraph_auth_user).identity, 'alice');
    assert.equal(spoofed.langgraph_auth_admin, undefined);

    await alice.runs.cancel(thread.thread_id, running.run_id, true);
    await alice.runs.join(thread.thread_id, spoof.run_id);
    await alice.runs.delete(thread.thread_id, done.run_id);
    assert.equal((await alice.runs.list(thread.thread_id)).length, 2);
  });

  it('threadless runs belong to their user, and their kept threads too', async () => {
    const alice = client('alice');
    const john = client('johndoe');
    // The SDK's runs.create sends no on_completion; a browser or the Python SDK may.
    const created = await fetchAcceptingJson(`${server.url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer alice:me' },
      body: JSON.stringify({ assistant_id: 'agent', input: ask('kept'), on_completion: 'keep' }),
    });
    const run = (await created.json()) as { run_id: string; thread_id: string; metadata: Record<string, unknown> };
    assert.equal(run.metadata.owner, 'alice');
    await alice.runs.join(run.thread_id, run.run_id);
    assert.equal((await alice.threads.get(run.thread_id)).metadata?.owner, 'alice');
    await assert.rejects(john.threads.get(run.thread_id), /HTTP 404/);
    await assertHiddenStream(john.runs.joinStream(null, run.run_id));
    const streamed = await gather(alice.runs.joinStream(null, run.run_id));
    assert.ok(streamed.some((chunk) => chunk.event === 'values'));
  });

  it('assistants: get, search, count, update, versions, latest, delete, graph, schemas; and running them', async () => {
    const alice = client('alice');
    const john = client('johndoe');
    const suite = randomUUID();
    const mine = await alice.assistants.create({ graphId: 'agent', name: 'Mine', metadata: { suite } });
    await john.assistants.create({ graphId: 'agent', name: 'His', metadata: { suite } });
    assert.equal(mine.metadata?.owner, 'alice');
    assert.deepEqual(
      (await alice.assistants.search({ metadata: { suite } })).map((assistant) => assistant.name),
      ['Mine'],
    );
    assert.equal(await alice.assistants.count({ metadata: { suite } }), 1);
    assert.equal(await john.assistants.count({ metadata: { suite } }), 1);

    const missing = /HTTP 404: Assistant not found$/;
    for (const attempt of [
      () => john.assistants.get(mine.assistant_id),
      () => john.assistants.update(mine.assistant_id, { name: 'Stolen' }),
      () => john.assistants.getVersions(mine.assistant_id),
      () => john.assistants.setLatest(mine.assistant_id, 1),
      () => john.assistants.delete(mine.assistant_id),
      () => john.assistants.getGraph(mine.assistant_id),
      () => john.assistants.getSchemas(mine.assistant_id),
      () => john.assistants.getSubgraphs(mine.assistant_id),
    ]) {
      await assert.rejects(attempt(), missing);
    }
    // Running someone else's assistant is refused as if it did not exist (the reference does not check).
    const thread = await john.threads.create();
    await assert.rejects(
      john.runs.wait(thread.thread_id, mine.assistant_id, { input: ask('x') }),
      /HTTP 404: .*No assistant found/,
    );
    await assert.rejects(
      john.runs.wait(null, mine.assistant_id, { input: ask('x') }),
      /HTTP 404: .*No assistant found/,
    );
    // A graph id (its system assistant) runs for everyone, as in the reference.
    assert.ok(await john.runs.wait(thread.thread_id, 'agent', { input: ask('x') }));
    // Creating over someone else's assistant id is a conflict that returns nothing of theirs.
    await assert.rejects(
      john.assistants.create({ graphId: 'agent', assistantId: mine.assistant_id, ifExists: 'do_nothing' }),
      /HTTP 409/,
    );

    // An update that names no metadata keeps the owner (see README: the filter keys carry over).
    const renamed = await alice.assistants.update(mine.assistant_id, { name: 'Mine, renamed' });
    assert.equal(renamed.metadata?.owner, 'alice');
    assert.equal((await alice.assistants.get(mine.assistant_id)).name, 'Mine, renamed');
    assert.equal((await alice.assistants.getVersions(mine.assistant_id)).length, 2);
    await alice.assistants.delete(mine.assistant_id);
    await assert.rejects(alice.assistants.get(mine.assistant_id), /HTTP 404/);
  });

  it('deleting an assistant with its threads deletes only threads the user may delete', async () => {
    const alice = client('alice');
    const assistant = await alice.assistants.create({ graphId: 'agent' });
    const aliceThread = await alice.threads.create();
    await alice.runs.wait(aliceThread.thread_id, assistant.assistant_id, { input: ask('x') });
    // A thread of another user that names the assistant (as the metadata of a run would).
    const otherThread = await server.client.threads
      .create({ metadata: { assistant_id: assistant.assistant_id, owner: 'johndoe' } })
      .catch(() => undefined);
    assert.equal(otherThread, undefined, 'no anonymous access with a custom handler');
    const john = client('johndoe');
    const johnThread = await john.threads.create({ metadata: { assistant_id: assistant.assistant_id } });
    const response = await fetchAcceptingJson(
      `${server.url}/assistants/${assistant.assistant_id}?delete_threads=true`,
      {
        method: 'DELETE',
        headers: { authorization: 'Bearer alice:me' },
      },
    );
    assert.equal(response.status, 200);
    await assert.rejects(alice.threads.get(aliceThread.thread_id), /HTTP 404/);
    assert.equal((await john.threads.get(johnThread.thread_id)).thread_id, johnThread.thread_id);
  });

  it('store: get, put, delete, search and namespaces stay within the user', async () => {
    const alice = client('alice');
    const john = client('johndoe');
    await alice.store.putItem(['alice', 'notes'], 'n1', { text: 'alice note' });
    await john.store.putItem(['johndoe', 'notes'], 'n1', { text: 'john note' });
    assert.deepEqual((await alice.store.getItem(['alice', 'notes'], 'n1'))?.value, { text: 'alice note' });
    await assert.rejects(alice.store.getItem(['johndoe', 'notes'], 'n1'), /HTTP 403/);
    await assert.rejects(alice.store.putItem(['johndoe', 'notes'], 'n1', { text: 'overwritten' }), /HTTP 403/);
    await assert.rejects(alice.store.deleteItem(['johndoe', 'notes'], 'n1'), /HTTP 403/);
    assert.deepEqual(
      (await alice.store.searchItems([], { limit: 100 })).items.map((item) => item.value),
      [{ text: 'alice note' }],
    );
    assert.deepEqual((await alice.store.listNamespaces({ limit: 100 })).namespaces, [['alice', 'notes']]);
    assert.deepEqual((await alice.store.listNamespaces({ maxDepth: 1 })).namespaces, [['alice']]);
    // A namespace holding both identities is visible to both.
    await alice.store.putItem(['alice', 'johndoe'], 'shared', { text: 'hello' });
    assert.deepEqual((await john.store.getItem(['alice', 'johndoe'], 'shared'))?.value, { text: 'hello' });
    assert.deepEqual((await john.store.getItem(['johndoe', 'notes'], 'n1'))?.value, { text: 'john note' });
    await alice.store.deleteItem(['alice', 'notes'], 'n1');
    assert.equal(await alice.store.getItem(['alice', 'notes'], 'n1'), null);
  });

  it('keeps /ok, /info, /live, /ready and the web interface public, and /openapi.json, /metrics and /docs behind the handler', async () => {
    for (const path of ['/ok', '/info', '/live', '/ready', '/ui/'])
      assert.equal((await fetchAcceptingJson(`${server.url}${path}`)).status, 200, path);
    for (const path of ['/openapi.json', '/metrics', '/docs']) {
      assert.equal((await fetchAcceptingJson(`${server.url}${path}`)).status, 401, path);
      assert.equal(
        (await fetchAcceptingJson(`${server.url}${path}`, { headers: { authorization: 'Bearer alice:me' } })).status <
          400,
        true,
        path,
      );
    }
  });
});

describe('custom auth: handler contract edges', () => {
  const handler = fileURLToPath(new URL('./testdata/auth/edge-auth.ts', import.meta.url));
  let server: TestServer;
  useTestServer(
    (started) => {
      server = started;
    },
    { langgraph_config: EXAMPLES_LANGGRAPH_JSON, auth: { api_keys: ['gate'], path: handler } } as never,
  );
  const as = (user: string, headers: Record<string, string> = {}) => ({
    'x-api-key': 'gate',
    'x-user': user,
    ...headers,
  });

  it('takes the handler from auth.path, after the API key: both must pass', async () => {
    assert.equal(
      (
        await fetchAcceptingJson(`${server.url}/threads/00000000-0000-4000-8000-000000000000`, {
          headers: { 'x-user': 'ann' },
        })
      ).status,
      401,
    );
    const noUser = await fetchAcceptingJson(`${server.url}/threads/00000000-0000-4000-8000-000000000000`, {
      headers: { 'x-api-key': 'gate' },
    });
    assert.equal(noUser.status, 401);
    assert.equal(((await noUser.json()) as ErrorBody).message, 'Unauthorized');
    assert.equal(
      (await fetchAcceptingJson(`${server.url}/threads/00000000-0000-4000-8000-000000000000`, { headers: as('ann') }))
        .status,
      404,
    );
  });

  it('keeps the status, message and headers of a thrown HTTPException, and makes anything else a logged 500', async () => {
    const teapot = await fetchAcceptingJson(`${server.url}/threads`, { method: 'POST', headers: as('teapot') });
    assert.equal(teapot.status, 418);
    assert.equal(teapot.headers.get('x-why'), 'tea');
    assert.deepEqual(await teapot.json(), {
      statusCode: 418,
      // The status's reason phrase, as Fastify's own error bodies carry it (node:http STATUS_CODES).
      error: "I'm a Teapot",
      code: 'TP_ERR_API_AUTH_HANDLER',
      message: 'I am a teapot',
    });
    const crash = await fetchAcceptingJson(`${server.url}/threads`, { method: 'POST', headers: as('crash') });
    assert.equal(crash.status, 500);
    assert.match(((await crash.json()) as ErrorBody).message, /failed in authenticate: database down/);
    const nobody = await fetchAcceptingJson(`${server.url}/threads`, { method: 'POST', headers: as('nobody') });
    assert.equal(nobody.status, 500);
    assert.match(
      ((await nobody.json()) as ErrorBody).message,
      /neither an identity string nor an object with an `identity`/,
    );
  });

  it('answers false with 403, refuses unusable filters and results with 500, and applies $contains', async () => {
    const search = await fetchAcceptingJson(`${server.url}/threads/search`, {
      method: 'POST',
      headers: as('ann', { 'content-type': 'application/json' }),
      body: '{}',
    });
    assert.equal(search.status, 403);
    assert.equal(((await search.json()) as ErrorBody).code, 'TP_ERR_API_FORBIDDEN');
    const assistants = await fetchAcceptingJson(`${server.url}/assistants/search`, {
      method: 'POST',
      headers: as('ann', { 'content-type': 'application/json' }),
      body: '{}',
    });
    assert.equal(assistants.status, 500);
    assert.match(
      ((await assistants.json()) as ErrorBody).message,
      /unusable filter: filter "owner" may only use \$eq and \$contains \(got \$regex\)/,
    );
    const item = await fetchAcceptingJson(`${server.url}/store/items?namespace=a&key=k`, { headers: as('ann') });
    assert.equal(item.status, 500);
    assert.match(((await item.json()) as ErrorBody).message, /returned string/);

    const sdk = new Client({
      apiUrl: server.url,
      apiKey: 'gate',
      defaultHeaders: { 'x-user': 'ann' },
      callerOptions: { maxRetries: 0 },
    });
    const tagged = await sdk.assistants.create({ graphId: 'chat', metadata: { tags: ['ann', 'bob'] } });
    const untagged = await sdk.assistants.create({ graphId: 'chat', metadata: { tags: ['bob'] } });
    assert.equal((await sdk.assistants.get(tagged.assistant_id)).assistant_id, tagged.assistant_id);
    await assert.rejects(sdk.assistants.get(untagged.assistant_id), /HTTP 404/);
  });

  it('refuses to start with a handler that is not an Auth, naming the file', async () => {
    const broken = fileURLToPath(new URL('./testdata/auth/not-auth.ts', import.meta.url));
    await assert.rejects(
      startTestServer({ auth: { api_keys: [], path: `${broken}:auth` } } as never),
      /not-auth\.ts:auth .*not an Auth from @langchain\/langgraph-sdk\/auth/,
    );
    await assert.rejects(
      startTestServer({ auth: { api_keys: [], path: `${broken}:missing` } } as never),
      /has no export "missing"/,
    );
    await assert.rejects(
      startTestServer({ auth: { api_keys: [], path: `${broken}.nope.ts` } } as never),
      /file not found/,
    );
  });
});

describe('auth filter matching (the reference table)', () => {
  const cases: [string, Record<string, unknown>, AuthFilters | undefined, boolean][] = [
    ['no filters', { a: 'value' }, undefined, true],
    ['empty metadata', {}, { a: 'foo' }, false],
    ['empty filters', { a: 'foo', b: 'bar' }, {}, true],
    ['exact string values', { a: 'foo', b: 'bar' }, { a: 'foo' }, true],
    ['different string values', { a: 'foo', b: 'bar' }, { a: 'baz' }, false],
    ['$eq', { a: 'foo', b: 'bar' }, { a: { $eq: 'foo' } }, true],
    ['$eq with a different value', { a: 'foo', b: 'bar' }, { a: { $eq: 'baz' } }, false],
    ['$contains a string', { a: ['foo', 'bar', 'baz'] }, { a: { $contains: 'bar' } }, true],
    ['$contains a value not in the array', { a: ['foo', 'bar', 'baz'] }, { a: { $contains: 'qux' } }, false],
    ['$contains on a non-array', { a: 'bar' }, { a: { $contains: 'bar' } }, false],
    [
      '$contains an array (all present)',
      { a: ['foo', 'bar', 'baz', 'qux'] },
      { a: { $contains: ['bar', 'baz'] } },
      true,
    ],
    ['$contains an array (not all present)', { a: ['foo', 'bar'] }, { a: { $contains: ['bar', 'baz'] } }, false],
    ['several conditions', { a: 'foo', b: 'bar', c: ['baz', 'qux'] }, { a: 'foo', c: { $contains: 'baz' } }, true],
    [
      'one failing condition',
      { a: 'foo', b: 'bar', c: ['baz', 'qux'] },
      { a: 'different', c: { $contains: 'baz' } },
      false,
    ],
    ['a missing key', { a: 'foo' }, { b: 'bar' }, false],
    // Beyond the reference: an empty $eq compares (the reference matches everything).
    ['$eq with an empty string', { a: 'foo' }, { a: { $eq: '' } }, false],
  ];
  for (const [name, metadata, filters, expected] of cases) {
    it(name, () => assert.equal(matchesAuthFilters(metadata, filters), expected));
  }
});
