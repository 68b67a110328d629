// The agent server on PostgreSQL (`storage.database_uri`): the API through the SDK, readiness and
// 503s while the database is unreachable, and two servers sharing one database. Each server gets a
// database of its own, created and dropped here (testing/postgres.ts); skipped when no PostgreSQL
// server answers (TEST_POSTGRES_URI).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Socket, createServer } from 'node:net';
import type { Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@langchain/langgraph-sdk';
import pg from 'pg';
import { eventually, spawnGroup } from 'tracepipe/testing';
import { newGate } from './testing/gates.ts';
import { ADMIN_URI, freshDatabase, postgresAvailable, terminateConnections } from './testing/postgres.ts';
import type { TestDatabase } from './testing/postgres.ts';
import { checkStoreOperators } from './testing/store-operators.ts';
import { startTestServer, useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import { asObject, messagesOf } from './testing/types.ts';

const available = await postgresAvailable();
const skip = available ? false : `no PostgreSQL server at ${ADMIN_URI}`;

const hello = (content: string) => ({ messages: [{ role: 'user', content }] });

async function count(uri: string, sql: string): Promise<number> {
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  try {
    return Number(((await client.query(sql)).rows[0] as { n: string }).n);
  } finally {
    await client.end();
  }
}

/** The Redis server the broker tests use (the machine's, unless TEST_REDIS_URI names another). */
const REDIS_URI = process.env.TEST_REDIS_URI ?? 'redis://127.0.0.1:6379';

/** `probe`'s first defined answer, polled with the test kit's `eventually`. */
function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number): Promise<T> {
  return eventually(
    async () => {
      const value = await probe();
      assert.ok(value !== undefined, `waiting for ${what}`);
      return value;
    },
    timeoutMs === undefined ? {} : { timeoutMs },
  );
}

/** A TCP relay to the PostgreSQL server that a test can take away (nothing listens) and bring back. */
class Relay {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async open(): Promise<void> {
    const target = new URL(ADMIN_URI);
    const server = createServer((socket) => {
      const upstream = new Socket();
      upstream.connect(Number(target.port || 5432), target.hostname);
      for (const end of [socket, upstream]) {
        this.sockets.add(end);
        end.on('close', () => this.sockets.delete(end));
        end.on('error', () => undefined);
      }
      socket.pipe(upstream).pipe(socket);
      socket.on('close', () => upstream.destroy());
      upstream.on('close', () => socket.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Stops listening and cuts every relayed connection. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  uri(database: TestDatabase): string {
    const uri = new URL(database.uri);
    uri.port = String(this.port);
    return uri.toString();
  }
}

describe('agent_api on PostgreSQL through the SDK', { skip }, () => {
  let server: TestServer;
  let client: Client;
  if (available) {
    useTestServer(
      (started) => {
        server = started;
        client = started.client;
      },
      { database: 'postgres' },
    );
  }

  it('assistants, threads, waited and streamed runs, state, history and copies', async () => {
    const assistant = await client.assistants.create({ graphId: 'chat', name: 'on postgres' });
    assert.equal((await client.assistants.get(assistant.assistant_id)).name, 'on postgres');
    const thread = await client.threads.create({ metadata: { suite: 'postgres' } });
    const waited = await client.runs.wait(thread.thread_id, assistant.assistant_id, { input: hello('one') });
    assert.equal(messagesOf(waited).length, 2);
    const events: string[] = [];
    for await (const chunk of client.runs.stream(thread.thread_id, assistant.assistant_id, {
      input: hello('two'),
      streamMode: ['values', 'updates'],
    }))
      events.push(chunk.event);
    assert.ok(events.includes('values') && events.includes('updates'), events.join(','));
    const state = await client.threads.getState(thread.thread_id);
    assert.equal(messagesOf(state.values).length, 4);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    assert.ok(history.length >= 4, `history has ${history.length} checkpoints`);
    const runs = await client.runs.list(thread.thread_id);
    assert.deepEqual(
      runs.map((run) => run.status),
      ['success', 'success'],
    );
    const byRun = await client.threads.getHistory(thread.thread_id, { metadata: { run_id: runs[0]!.run_id } });
    assert.ok(byRun.length > 0 && byRun.every((checkpoint) => checkpoint.metadata?.run_id === runs[0]!.run_id));

    const copy = await client.threads.copy(thread.thread_id);
    assert.deepEqual((await client.threads.getState(copy.thread_id)).values, state.values);
    await client.runs.wait(copy.thread_id, assistant.assistant_id, { input: hello('three') });
    assert.equal(messagesOf((await client.threads.getState(copy.thread_id)).values).length, 6);
    assert.equal(messagesOf((await client.threads.getState(thread.thread_id)).values).length, 4);

    await client.threads.updateState(thread.thread_id, { values: hello('patched'), asNode: 'call_model' });
    assert.equal(messagesOf((await client.threads.getState(thread.thread_id)).values).length, 5);
    assert.ok((await count(server.databaseUri!, 'SELECT count(*) AS n FROM checkpoints')) > 0);
    assert.equal(await count(server.databaseUri!, 'SELECT count(*) AS n FROM runs'), 3);
  });

  it('rolls a run back, and the next run does not see what it wrote', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello('kept') });
    const gate = newGate();
    const held = await client.runs.create(thread.thread_id, 'gate', { input: { gate: gate.name } });
    await gate.reached;
    await client.runs.cancel(thread.thread_id, held.run_id, true, 'rollback');
    await client.runs.wait(thread.thread_id, 'chat', { input: hello('after') });
    const messages = messagesOf((await client.threads.getState(thread.thread_id)).values);
    assert.equal(messages.length, 4);
    assert.equal(messages[2]!.content, 'after');
  });

  it('the store: put, get, search (with operators; 422 for an unknown one), namespaces, delete', async () => {
    await client.store.putItem(['users', 'alice'], 'profile', { plan: 'pro' });
    await client.store.putItem(['users', 'bob'], 'profile', { plan: 'free' });
    assert.deepEqual((await client.store.getItem(['users', 'alice'], 'profile'))?.value, { plan: 'pro' });
    const pro = await client.store.searchItems(['users'], { filter: { plan: 'pro' } });
    assert.deepEqual(
      pro.items.map((item) => item.namespace),
      [['users', 'alice']],
    );
    assert.deepEqual((await client.store.listNamespaces({ prefix: ['users'] })).namespaces, [
      ['users', 'alice'],
      ['users', 'bob'],
    ]);
    await client.store.deleteItem(['users', 'bob'], 'profile');
    assert.equal(await client.store.getItem(['users', 'bob'], 'profile'), null);
    assert.equal(await count(server.databaseUri!, 'SELECT count(*) AS n FROM store_items'), 1);
    await checkStoreOperators(client, server.url);
  });

  it('crons: create, search, update, delete', async () => {
    const thread = await client.threads.create();
    const cron = await client.crons.create('chat', { schedule: '0 3 * * *', input: hello('nightly') });
    const onThread = await client.crons.createForThread(thread.thread_id, 'chat', {
      schedule: '*/5 * * * *',
      input: hello('often'),
    });
    const found = await client.crons.search({ assistantId: 'chat' });
    assert.deepEqual(found.map((item) => item.cron_id).sort(), [cron.cron_id, onThread.cron_id].sort());
    await client.crons.delete(cron.cron_id);
    assert.equal(await count(server.databaseUri!, 'SELECT count(*) AS n FROM crons'), 1);
  });
});

describe('agent_api on PostgreSQL: an unreachable database', { skip }, () => {
  let database: TestDatabase;
  before(async () => {
    if (available) database = await freshDatabase();
  });
  after(async () => {
    await database?.drop();
  });

  const ready = async (server: TestServer) => (await fetch(`${server.url}/ready`)).status;

  it('answers /ready 503 and requests 503 with Retry-After while nothing listens, then recovers', async () => {
    const relay = new Relay();
    await relay.open();
    const server = await startTestServer({ database: { uri: relay.uri(database) } });
    try {
      const thread = await server.client.threads.create();
      assert.equal(await ready(server), 200);

      await relay.close();
      await until('/ready to answer 503', async () => ((await ready(server)) === 503 ? true : undefined));
      const body = (await (await fetch(`${server.url}/ready`)).json()) as { reason: string };
      assert.match(body.reason, /database unreachable/);
      for (const path of [`/threads/${thread.thread_id}`, '/assistants/search']) {
        const response = await fetch(`${server.url}${path}`, {
          method: path.endsWith('search') ? 'POST' : 'GET',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          ...(path.endsWith('search') ? { body: '{}' } : {}),
        });
        assert.equal(response.status, 503, path);
        assert.equal(response.headers.get('retry-after'), '2');
        assert.equal(((await response.json()) as { code: string }).code, 'TP_ERR_API_UNAVAILABLE');
      }
      assert.equal((await fetch(`${server.url}/ok`)).status, 200, 'the process itself is alive');

      await relay.open();
      await until('/ready to answer 200', async () => ((await ready(server)) === 200 ? true : undefined));
      assert.equal((await server.client.threads.get(thread.thread_id)).thread_id, thread.thread_id);
      const run = await server.client.runs.wait(thread.thread_id, 'chat', { input: hello('back') });
      assert.equal(messagesOf(run).length, 2);
    } finally {
      await server.stop();
      await relay.close();
    }
  });

  it('survives its connections being terminated (pg_terminate_backend): 503 at worst, never 500', async () => {
    const server = await startTestServer({ database: { uri: database.uri } });
    try {
      const thread = await server.client.threads.create();
      await server.client.runs.wait(thread.thread_id, 'chat', { input: hello('before') });
      const statuses: number[] = [];
      for (let round = 0; round < 3; round++) {
        assert.ok((await terminateConnections(database)) >= 1);
        for (let attempt = 0; attempt < 3; attempt++) {
          const response = await fetch(`${server.url}/threads/${thread.thread_id}/state`);
          statuses.push(response.status);
          await response.arrayBuffer();
        }
      }
      assert.ok(
        statuses.every((status) => status === 200 || status === 503),
        statuses.join(','),
      );
      assert.equal(statuses[statuses.length - 1], 200);
      const run = await server.client.runs.wait(thread.thread_id, 'chat', { input: hello('after') });
      assert.equal(messagesOf(run).length, 4);
      assert.equal(await ready(server), 200);
    } finally {
      await server.stop();
    }
  });
});

describe('agent_api on PostgreSQL: two servers on one database', { skip }, () => {
  let database: TestDatabase;
  before(async () => {
    if (available) database = await freshDatabase();
  });
  after(async () => {
    await database?.drop();
  });

  it('a thread and runs made on one are read, joined and cancelled on the other', async () => {
    const a = await startTestServer({ database: { uri: database.uri } });
    let b: TestServer | undefined;
    try {
      const thread = await a.client.threads.create({ metadata: { made_on: 'a' } });
      // The run starts before the second server exists, so the first one executes it.
      const gate = newGate();
      const held = await a.client.runs.create(thread.thread_id, 'gate', { input: { gate: gate.name } });
      await gate.reached;
      b = await startTestServer({ database: { uri: database.uri } });
      assert.equal((await b.client.threads.get(thread.thread_id)).metadata?.made_on, 'a');
      assert.equal((await b.client.runs.get(thread.thread_id, held.run_id)).status, 'running');
      assert.equal((await b.client.threads.get(thread.thread_id)).status, 'busy');

      // Cancelled on the second server: the first one stops executing it.
      await b.client.runs.cancel(thread.thread_id, held.run_id);
      await until('the run to be interrupted on the first server', async () =>
        (await a.client.runs.get(thread.thread_id, held.run_id)).status === 'interrupted' ? true : undefined,
      );
      await b.client.runs.join(thread.thread_id, held.run_id);

      // Made on one, joined and waited for on the other, whichever executes it.
      const next = await a.client.runs.create(thread.thread_id, 'chat', { input: hello('joined') });
      const joined = await b.client.runs.join(thread.thread_id, next.run_id);
      assert.equal(lastUserContent(joined), 'joined', JSON.stringify(joined));
      const waited = await b.client.runs.wait(thread.thread_id, 'chat', { input: hello('waited') });
      assert.equal(messagesOf(waited).length, 4);
      assert.equal(messagesOf((await a.client.threads.getState(thread.thread_id)).values).length, 4);
    } finally {
      await b?.stop();
      await a.stop();
    }
  });

  it('with the Redis broker, a run executing on one is stream-joined on the other, replaying after Last-Event-ID', async () => {
    const broker = { redis_uri: REDIS_URI, key_prefix: `tracepipe-test:${randomUUID()}:` };
    const a = await startTestServer({ database: { uri: database.uri }, broker });
    const b = await startTestServer({ database: { uri: database.uri }, broker });
    try {
      const thread = await a.client.threads.create();
      const gate = newGate();
      const run = await a.client.runs.create(thread.thread_id, 'gate', {
        input: { gate: gate.name },
        streamMode: ['custom', 'values'],
      });
      await gate.reached;
      // On the other server: everything after the run's first event (metadata, id 0), then live.
      const joined: { event: string; data: unknown }[] = [];
      const following = (async () => {
        for await (const part of b.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '0' })) {
          joined.push(part);
        }
      })();
      await until('the reached event on the other server', async () =>
        joined.some((part) => part.event === 'custom') ? true : undefined,
      );
      gate.open();
      await following;
      const customs = joined.filter((part) => part.event === 'custom').map((part) => asObject(part.data).at);
      assert.deepEqual(customs, ['reached', 'passed']);
      assert.ok(!joined.some((part) => part.event === 'metadata'), 'the event before Last-Event-ID is not replayed');
      const values = joined.filter((part) => part.event === 'values').at(-1);
      assert.equal(messagesOf(asObject(values?.data)).at(-1)?.content, `passed ${gate.name}`);
      assert.equal((await b.client.runs.get(thread.thread_id, run.run_id)).status, 'success');
    } finally {
      await b.stop();
      await a.stop();
    }
  });

  it('hundreds of runs spread over both servers each execute exactly once', async () => {
    // A database of its own, so that every run in it is one of this test's.
    const database = await freshDatabase();
    const servers = [
      await startTestServer({ database: { uri: database.uri } }),
      await startTestServer({ database: { uri: database.uri } }),
    ];
    try {
      const threadCount = 40;
      const runsPerThread = 5;
      const threads = await Promise.all(
        Array.from({ length: threadCount }, (_, index) => servers[index % 2]!.client.threads.create()),
      );
      const created: string[] = [];
      for (let round = 0; round < runsPerThread; round++) {
        const batch = await Promise.all(
          threads.map((thread, index) =>
            servers[(index + round) % 2]!.client.runs.create(thread.thread_id, 'chat', {
              input: hello(`run ${round}`),
              multitaskStrategy: 'enqueue',
            }),
          ),
        );
        created.push(...batch.map((run) => run.run_id));
      }
      assert.equal(created.length, threadCount * runsPerThread);
      await until(
        'every run to finish',
        async () =>
          (await count(database.uri, "SELECT count(*) AS n FROM runs WHERE status IN ('pending', 'running')")) === 0
            ? true
            : undefined,
        120_000,
      );
      assert.equal(
        await count(database.uri, "SELECT count(*) AS n FROM runs WHERE status = 'success' AND attempt = 1"),
        created.length,
      );
      // Each run added the user's message and the reply, once.
      for (const thread of threads) {
        const values = (await servers[0]!.client.threads.getState(thread.thread_id)).values;
        const messages = messagesOf(values);
        assert.equal(messages.length, runsPerThread * 2, thread.thread_id);
        assert.deepEqual(
          messages.filter((_, index) => index % 2 === 0).map((message) => message.content),
          Array.from({ length: runsPerThread }, (_, round) => `run ${round}`),
        );
      }
      // Both servers executed some of them.
      const executed = await Promise.all(
        servers.map(async (server) => {
          const metric = await server.metrics.getSingleMetric('tracepipe_agent_runs_total')?.get();
          return (metric?.values ?? []).reduce((sum, value) => sum + value.value, 0);
        }),
      );
      assert.equal(executed[0]! + executed[1]!, created.length, executed.join(' + '));
      assert.ok(executed[0]! > 0 && executed[1]! > 0, executed.join(' + '));
    } finally {
      for (const server of servers) await server.stop();
      await database.drop();
    }
  });
});

/** The content of the message before the reply: what the run's input said. */
function lastUserContent(values: unknown): unknown {
  const messages = messagesOf(values);
  return messages[messages.length - 2]?.content;
}

describe('configs/cluster.yaml', { skip }, () => {
  it('starts the agent server on PostgreSQL from its environment variables alone', async () => {
    const database = await freshDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-api-cluster-'));
    const port = await freePort();
    const repo = fileURLToPath(new URL('../../../', import.meta.url));
    const server = spawnGroup(process.execPath, ['bin/tracepipe.js', '--config', 'configs/cluster.yaml'], {
      cwd: repo,
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URI: database.uri,
        REDIS_URI: 'redis://127.0.0.1:6379',
        AGENT_API_PORT: String(port),
        HTTP_PORT: String(await freePort()),
        LANGGRAPH_JSON: join(repo, 'examples/graphs/langgraph.json'),
        DATA_DIR: dataDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const url = `http://127.0.0.1:${port}`;
      await until(
        'the server to be ready',
        async () => ((await fetch(`${url}/ready`).catch(() => undefined))?.status === 200 ? true : undefined),
        // A start beside other test files on two cores has taken over 30 s (ready in ~4 s when quiet).
        120_000,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${output}`);
      });
      const thread = (await (
        await fetch(`${url}/threads`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
      ).json()) as { thread_id: string };
      assert.equal(
        await count(database.uri, `SELECT count(*) AS n FROM threads WHERE thread_id = '${thread.thread_id}'`),
        1,
      );
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
      await database.drop();
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
