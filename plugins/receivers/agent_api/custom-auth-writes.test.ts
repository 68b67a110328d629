// Two users of one deployment under a custom auth handler that stamps `owner` on every create and
// update and filters by it (testdata/auth/owner-auth.ts): every write action on every resource —
// threads, assistants, crons, runs, store items — either lands in the writer's own account or is
// refused, and never changes, moves or creates anything in the other user's. Reads across users are
// covered in custom-auth.test.ts; this file is about writes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import { asCron } from './testing/types.ts';

const OWNER_AUTH = fileURLToPath(new URL('./testdata/auth/langgraph-owner.json', import.meta.url));
const FILTER_ONLY_AUTH = fileURLToPath(new URL('./testdata/auth/langgraph-filter-only.json', import.meta.url));
const ask = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('custom auth: no user writes into another user’s account', () => {
  let server: TestServer;
  let a: Client;
  let b: Client;
  useTestServer(
    (started) => {
      server = started;
      const as = (user: string) =>
        new Client({
          apiUrl: started.url,
          apiKey: null,
          defaultHeaders: { Authorization: `Bearer ${user}` },
          callerOptions: { maxRetries: 0 },
        });
      a = as('user-a');
      b = as('user-b');
    },
    { langgraph_config: OWNER_AUTH },
  );

  /** A raw request as `user`, for the answers the SDK would only throw on. */
  async function send(user: string, method: string, path: string, body?: unknown) {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${user}`,
        // Error answers as coded JSON (docs/errors.md), not the SDK's plain text.
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
  }

  it('crons: create, update and delete stay in the writer’s account', async () => {
    const own = asCron(await b.crons.create('agent', { schedule: '0 0 1 1 *', input: ask('b') }));
    assert.equal(own.metadata.owner, 'user-b');
    // The finding: an update naming another owner handed the cron to that user.
    const moved = await send('user-b', 'PATCH', `/runs/crons/${own.cron_id}`, { metadata: { owner: 'user-a' } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal((moved.body?.metadata as Record<string, unknown>).owner, 'user-b');
    assert.equal((await b.crons.search({})).length, 1);
    assert.equal((await a.crons.search({})).length, 0);
    assert.equal((await send('user-a', 'GET', `/runs/crons/${own.cron_id}`)).status, 404);

    const created = asCron(
      await b.crons.create('agent', { schedule: '0 0 1 1 *', input: ask('b'), metadata: { owner: 'user-a' } }),
    );
    assert.equal(created.metadata.owner, 'user-b');

    const theirs = asCron(await a.crons.create('agent', { schedule: '0 0 1 1 *', input: ask('a') }));
    assert.equal(
      (await send('user-b', 'PATCH', `/runs/crons/${theirs.cron_id}`, { schedule: '0 1 * * *' })).status,
      404,
    );
    assert.equal((await send('user-b', 'DELETE', `/runs/crons/${theirs.cron_id}`)).status, 404);
    const aThread = await a.threads.create();
    const onTheirThread = await send('user-b', 'POST', `/threads/${aThread.thread_id}/runs/crons`, {
      assistant_id: 'agent',
      schedule: '0 0 1 1 *',
      input: ask('b'),
    });
    assert.equal(onTheirThread.status, 404, JSON.stringify(onTheirThread.body));
    const unchanged = asCron(await a.crons.search({}).then((crons) => crons[0]));
    assert.equal(unchanged.cron_id, theirs.cron_id);
    assert.equal(unchanged.schedule, '0 0 1 1 *');
    assert.equal(unchanged.metadata.owner, 'user-a');
    await a.crons.delete(theirs.cron_id);
    await b.crons.delete(own.cron_id);
    await b.crons.delete(created.cron_id);
  });

  it('threads: create, update, state writes, copy and delete stay in the writer’s account', async () => {
    const created = await b.threads.create({ metadata: { owner: 'user-a' } });
    assert.equal(created.metadata?.owner, 'user-b');
    const moved = await b.threads.update(created.thread_id, { metadata: { owner: 'user-a' } });
    assert.equal(moved.metadata?.owner, 'user-b');
    assert.equal((await send('user-a', 'GET', `/threads/${created.thread_id}`)).status, 404);

    const theirs = await a.threads.create({ graphId: 'agent' });
    await a.runs.wait(theirs.thread_id, 'agent', { input: ask('a') });
    const before = await a.threads.getState(theirs.thread_id);
    const path = `/threads/${theirs.thread_id}`;
    // A copy of a thread the caller cannot see answers 409, as on the reference server (agent_api
    // README, "Compatibility"), with the same message as for a thread that does not exist.
    for (const [method, suffix, body, status] of [
      ['PATCH', '', { metadata: { owner: 'user-b', x: 1 } }, 404],
      ['POST', '/state', { values: { messages: [] } }, 404],
      ['PATCH', '/state', { metadata: { x: 1 } }, 404],
      ['POST', '/copy', undefined, 409],
      ['DELETE', '', undefined, 404],
    ] as const) {
      const answer = await send('user-b', method, `${path}${suffix}`, body);
      assert.equal(answer.status, status, `${method} ${suffix}: ${JSON.stringify(answer.body)}`);
    }
    const taken = await send('user-b', 'POST', '/threads', { thread_id: theirs.thread_id, if_exists: 'do_nothing' });
    assert.equal(taken.status, 409, JSON.stringify(taken.body));
    const after = await a.threads.get(theirs.thread_id);
    assert.equal(after.metadata?.owner, 'user-a');
    assert.equal(after.metadata?.x, undefined);
    assert.deepEqual((await a.threads.getState(theirs.thread_id)).values, before.values);
    assert.equal(await b.threads.count({}), 1);
  });

  it('assistants: create, update, latest and delete stay in the writer’s account', async () => {
    const created = await b.assistants.create({ graphId: 'agent', metadata: { owner: 'user-a' } });
    assert.equal(created.metadata?.owner, 'user-b');
    const moved = await b.assistants.update(created.assistant_id, { metadata: { owner: 'user-a' } });
    assert.equal(moved.metadata?.owner, 'user-b');
    assert.equal((await send('user-a', 'GET', `/assistants/${created.assistant_id}`)).status, 404);

    const theirs = await a.assistants.create({ graphId: 'agent', name: 'theirs' });
    const path = `/assistants/${theirs.assistant_id}`;
    for (const [method, suffix, body] of [
      ['PATCH', '', { name: 'mine', metadata: { owner: 'user-b' } }],
      ['POST', '/latest', { version: 1 }],
      ['DELETE', '', undefined],
    ] as const) {
      const answer = await send('user-b', method, `${path}${suffix}`, body);
      assert.equal(answer.status, 404, `${method} ${suffix}: ${JSON.stringify(answer.body)}`);
    }
    const taken = await send('user-b', 'POST', '/assistants', {
      graph_id: 'agent',
      assistant_id: theirs.assistant_id,
      if_exists: 'do_nothing',
    });
    assert.equal(taken.status, 409, JSON.stringify(taken.body));
    const after = await a.assistants.get(theirs.assistant_id);
    assert.equal(after.name, 'theirs');
    assert.equal(after.metadata?.owner, 'user-a');
    assert.equal(after.version, 1);
  });

  it('runs: create, cancel and delete on the other user’s thread are refused; runs are stamped', async () => {
    const theirs = await a.threads.create({ graphId: 'agent' });
    const run = await a.runs.wait(theirs.thread_id, 'agent', { input: ask('a') });
    assert.ok(run);
    const [theirRun] = await a.runs.list(theirs.thread_id);
    const path = `/threads/${theirs.thread_id}/runs`;
    for (const [method, suffix, body] of [
      ['POST', '', { assistant_id: 'agent', input: ask('b') }],
      ['POST', '/wait', { assistant_id: 'agent', input: ask('b') }],
      ['POST', `/${theirRun!.run_id}/cancel`, undefined],
      ['DELETE', `/${theirRun!.run_id}`, undefined],
    ] as const) {
      const answer = await send('user-b', method, `${path}${suffix}`, body);
      assert.equal(answer.status, 404, `${method} ${suffix}: ${JSON.stringify(answer.body)}`);
    }
    assert.equal((await a.runs.list(theirs.thread_id)).length, 1);
    const threadless = await send('user-b', 'POST', '/runs', {
      assistant_id: 'agent',
      input: ask('b'),
      metadata: { owner: 'user-a' },
      on_completion: 'keep',
    });
    assert.equal(threadless.status, 200, JSON.stringify(threadless.body));
    assert.equal((threadless.body?.metadata as Record<string, unknown>).owner, 'user-b');
    assert.equal((await send('user-a', 'GET', `/threads/${String(threadless.body?.thread_id)}`)).status, 404);
  });

  it('store: put and delete never reach the other user’s namespace', async () => {
    await a.store.putItem(['user-a', 'notes'], 'k', { v: 'a' });
    const put = await send('user-b', 'PUT', '/store/items', {
      namespace: ['user-a', 'notes'],
      key: 'k',
      value: { v: 'b' },
    });
    assert.equal(put.status, 403, JSON.stringify(put.body));
    const deleted = await send('user-b', 'DELETE', '/store/items', { namespace: ['user-a', 'notes'], key: 'k' });
    assert.equal(deleted.status, 403, JSON.stringify(deleted.body));
    assert.deepEqual((await a.store.getItem(['user-a', 'notes'], 'k'))?.value, { v: 'a' });
    await b.store.putItem(['user-b', 'notes'], 'k', { v: 'b' });
    await assert.rejects(a.store.searchItems(['user-b']), /HTTP 403/);
    const everything = await a.store.searchItems([]);
    assert.deepEqual(
      everything.items.map((item) => [item.namespace, item.value]),
      [[['user-a', 'notes'], { v: 'a' }]],
    );
  });
});

describe('custom auth: an update the handler does not stamp cannot hand a resource over', () => {
  let server: TestServer;
  useTestServer(
    (started) => {
      server = started;
    },
    { langgraph_config: FILTER_ONLY_AUTH },
  );

  async function send(method: string, path: string, body: unknown) {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: 'Bearer user-b', 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it('refuses (403) a thread, assistant or cron update that would leave the writer’s view, and keeps it', async () => {
    const thread = await send('POST', '/threads', {});
    const assistant = await send('POST', '/assistants', { graph_id: 'agent' });
    const cron = await send('POST', '/runs/crons', { assistant_id: 'agent', schedule: '0 0 1 1 *', input: ask('b') });
    const resources = [
      [`/threads/${String(thread.body.thread_id)}`, 'PATCH'],
      [`/assistants/${String(assistant.body.assistant_id)}`, 'PATCH'],
      [`/runs/crons/${String(cron.body.cron_id)}`, 'PATCH'],
    ] as const;
    for (const [path, method] of resources) {
      const moved = await send(method, path, { metadata: { owner: 'user-a' } });
      assert.equal(moved.status, 403, `${path}: ${JSON.stringify(moved.body)}`);
      const kept = await fetch(`${server.url}${path}`, { headers: { authorization: 'Bearer user-b' } });
      assert.equal(kept.status, 200, path);
      assert.equal(((await kept.json()) as { metadata: Record<string, unknown> }).metadata.owner, 'user-b', path);
      // An update that keeps the owner still goes through.
      const renamed = await send(method, path, { metadata: { owner: 'user-b', label: 'x' } });
      assert.equal(renamed.status, 200, `${path}: ${JSON.stringify(renamed.body)}`);
    }
  });
});
