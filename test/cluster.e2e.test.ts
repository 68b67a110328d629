// The agent server as several real `tracepipe --config configs/cluster.yaml` processes on one
// PostgreSQL database and one Redis (plugins/receivers/agent_api/README.md, "PostgreSQL" and
// "Several instances: the Redis broker"): started together on an empty database, they migrate it
// once; any of them serves any request on any run, whichever executes it; each run executes
// exactly once; races between instances (`reject`, `if_not_exists: create`) are decided once; and
// a stream followed on one instance survives its Redis connections being cut.
//
// Needs PostgreSQL (TEST_POSTGRES_URI, a fresh database per file, dropped afterwards) and Redis
// (TEST_REDIS_URI, a key prefix of its own, its keys deleted afterwards); skipped when either does
// not answer. Only the Redis connections of the processes started here are ever killed (found with
// `ss`, by the local addresses of each process's sockets), so other tests sharing the servers are
// left alone. Recovery from kill -9 of an executing instance: test/cluster-recovery.e2e.test.ts.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { eventually } from '../src/testkit/eventually.ts';
import { parseFrames } from '../plugins/receivers/agent_api/testing/sse-client.ts';
import type { RawFrame } from '../plugins/receivers/agent_api/testing/sse-client.ts';
import { request } from '../plugins/receivers/agent_api/testing/agent-wire.ts';
import { freshDatabase, postgresAvailable } from '../plugins/receivers/agent_api/testing/postgres.ts';
import type { TestDatabase } from '../plugins/receivers/agent_api/testing/postgres.ts';
import { POSTGRES_MIGRATIONS } from '../plugins/receivers/agent_api/internal/storage/postgres.ts';
import {
  deleteKeys,
  killRedisClients,
  redisAvailable,
  redisClients,
  TEST_REDIS_URI,
} from '../plugins/receivers/agent_api/testing/redis.ts';
import type { RedisClientInfo } from '../plugins/receivers/agent_api/testing/redis.ts';
import {
  call,
  human,
  pooled,
  query,
  range,
  ready,
  startInstance as startClusterInstance,
} from './support/agent-cluster.ts';
import type { Instance, Json } from './support/agent-cluster.ts';

const REDIS_URI = TEST_REDIS_URI;

const skip = !(await postgresAvailable())
  ? 'no PostgreSQL answers at TEST_POSTGRES_URI (default postgres://postgres@127.0.0.1:5432/postgres)'
  : !(await redisAvailable(REDIS_URI))
    ? `no Redis answers at ${REDIS_URI}`
    : false;

/** Starts an instance of this deployment: configs/cluster.yaml with the shared Redis under `keyPrefix`. */
const startInstance = (name: string, databaseUri: string, keyPrefix: string): Promise<Instance> =>
  startClusterInstance(name, databaseUri, { uri: REDIS_URI, keyPrefix });

/** Reads an SSE response frame by frame. */
function frameReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const frames: RawFrame[] = [];
  let ended = false;
  return {
    frames,
    get ended() {
      return ended;
    },
    /** Reads until `predicate` holds over the frames so far (or the stream ends); returns whether it held. */
    async until(predicate: (frames: RawFrame[]) => boolean): Promise<boolean> {
      while (!predicate(frames)) {
        if (ended) return false;
        const { value, done } = await reader.read();
        if (done) {
          ended = true;
          text += decoder.decode();
        } else text += decoder.decode(value, { stream: true });
        const cut = text.lastIndexOf('\n\n');
        if (cut >= 0) {
          frames.push(...parseFrames(text.slice(0, cut + 2)));
          text = text.slice(cut + 2);
        }
      }
      return true;
    },
    async toEnd(): Promise<RawFrame[]> {
      await this.until(() => false);
      return frames;
    },
    cancel: () => reader.cancel().catch(() => undefined),
  };
}

async function openStream(instance: Instance, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(new URL(path, instance.url), { headers: { accept: 'text/event-stream', ...headers } });
  assert.equal(response.status, 200, `GET ${path} on ${instance.name}: ${response.status}`);
  return frameReader(response);
}

const ids = (frames: RawFrame[]) => frames.map((frame) => Number(frame.id));
const steps = (frames: RawFrame[]) =>
  frames.filter((frame) => frame.event === 'custom').map((frame) => (frame.data as { step: number }).step);

/** The TCP connections `pid` holds to the Redis port, as `ip:port` of their local end. */
function redisAddresses(pid: number): string[] {
  const port = new URL(REDIS_URI).port || '6379';
  const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( dport = :${port} )`], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => line.trim().split(/\s+/)[2]!)
    .filter(Boolean);
}

/**
 * Kills, on the Redis server, the agent server's connections of `instance` (its command and its
 * pub/sub connection), found by the local addresses of the process's sockets; returns their names.
 */
async function cutRedis(instance: Instance): Promise<string[]> {
  const killed = await killRedisClients(REDIS_URI, ownConnection(instance));
  return killed.map((fields) => fields.name!);
}

/** Whether a CLIENT LIST entry is one of the agent server's connections of `instance`. */
function ownConnection(instance: Instance): (fields: RedisClientInfo) => boolean {
  const addresses = new Set(redisAddresses(instance.child.pid!));
  return (fields) => addresses.has(fields.addr ?? '') && (fields.name?.startsWith('tracepipe-agent-api') ?? false);
}

/** The agent server's Redis connections of `instance` (by name) that are up. */
async function redisConnections(instance: Instance): Promise<string[]> {
  return (await redisClients(REDIS_URI)).filter(ownConnection(instance)).map((fields) => fields.name!);
}

/** The id `instance`'s broker names itself by in Redis (its connections' names end with it). */
async function instanceId(instance: Instance): Promise<string> {
  const names = await redisConnections(instance);
  const id = names.find((name) => name.startsWith('tracepipe-agent-api:'))?.split(':')[1];
  assert.ok(id, `${instance.name} has a command connection to Redis: ${names.join(', ')}`);
  return id;
}

/** Which of `instances` executes `runId` (the owner key its broker keeps while the run executes). */
async function executorOf(instances: readonly Instance[], keyPrefix: string, runId: string): Promise<Instance> {
  const redis = new Redis(REDIS_URI);
  try {
    const owner = await eventually(async () => (await redis.get(`${keyPrefix}run:{${runId}}:owner`)) ?? false, {
      message: `an owner of run ${runId}`,
    });
    for (const instance of instances) if ((await instanceId(instance)) === owner) return instance;
    throw new Error(`run ${runId} is owned by ${owner}, none of ${instances.map((i) => i.name).join(', ')}`);
  } finally {
    redis.disconnect();
  }
}

describe('configs/cluster.yaml: three tracepipe processes on one PostgreSQL database and one Redis', { skip }, () => {
  let database: TestDatabase;
  const keyPrefix = `tracepipe-e2e:${randomUUID()}:`;
  const instances: Instance[] = [];
  let a: Instance;
  let b: Instance;
  let c: Instance;

  before(async () => {
    database = await freshDatabase('agent_api_e2e');
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await database?.drop();
    await deleteKeys(REDIS_URI, keyPrefix);
  });

  let startingPair: Promise<void> | undefined;
  /** A and B, started together on the empty database (once, by whichever test comes first). */
  function pair(): Promise<void> {
    startingPair ??= (async () => {
      const started = await Promise.allSettled([
        startInstance('A', database.uri, keyPrefix),
        startInstance('B', database.uri, keyPrefix),
      ]);
      for (const result of started) if (result.status === 'fulfilled') instances.push(result.value);
      for (const result of started) if (result.status === 'rejected') throw result.reason;
      [a, b] = instances as [Instance, Instance];
    })();
    return startingPair;
  }

  let startingThird: Promise<void> | undefined;
  /** All three: C is started once A and B have migrated the database. */
  async function cluster(): Promise<void> {
    await pair();
    startingThird ??= (async () => {
      for (const instance of [a, b]) await ready(instance);
      c = await startInstance('C', database.uri, keyPrefix);
      instances.push(c);
      await ready(c);
    })();
    await startingThird;
  }

  /**
   * Creates a run on `instance` that `instance` also executes: runs go to whichever instance claims
   * them first, so one claimed elsewhere is rolled back (deleted) and created again.
   */
  async function runExecutingOn(instance: Instance, threadId: string, body: Json): Promise<{ run_id: string }> {
    for (let attempt = 1; attempt <= 30; attempt++) {
      const run = await call<{ run_id: string }>(instance, 'POST', `/threads/${threadId}/runs`, body);
      if ((await executorOf([a, b, c], keyPrefix, run.run_id)) === instance) return run;
      await call(
        instance,
        'POST',
        `/threads/${threadId}/runs/${run.run_id}/cancel?action=rollback&wait=1`,
        undefined,
        204,
      );
    }
    throw new Error(`30 runs created on ${instance.name} were all claimed by another instance`);
  }

  test('two instances started together on an empty database both become ready, and migrate it once', async () => {
    await pair();
    for (const instance of [a, b]) await ready(instance);
    // The agent server's own schema: every step recorded once, in order.
    const migrations = await query<{ version: number; n: string }>(
      database,
      'SELECT version, count(*) AS n FROM schema_migrations GROUP BY version ORDER BY version',
    );
    assert.deepEqual(
      migrations.map((row) => [row.version, Number(row.n)]),
      POSTGRES_MIGRATIONS.map((migration) => [migration.version, 1]),
    );
    // The checkpointer's (LangGraph's PostgresSaver): each of its versions once too.
    const checkpointMigrations = await query<{ v: number; n: string }>(
      database,
      'SELECT v, count(*) AS n FROM checkpoint_migrations GROUP BY v ORDER BY v',
    );
    assert.ok(checkpointMigrations.length > 0, 'the checkpoint tables were set up');
    assert.deepEqual(
      checkpointMigrations.map((row) => Number(row.n)),
      checkpointMigrations.map(() => 1),
    );
    // Each graph's system assistant was created once, with one version, though both created it.
    const assistants = await query<{ graph_id: string; n: string; versions: string }>(
      database,
      `SELECT a.graph_id, count(DISTINCT a.assistant_id) AS n, count(v.version) AS versions
         FROM assistants a LEFT JOIN assistant_versions v USING (assistant_id) GROUP BY a.graph_id ORDER BY a.graph_id`,
    );
    assert.deepEqual(
      assistants.map((row) => [row.graph_id, Number(row.n), Number(row.versions)]),
      ['agent', 'chat', 'error', 'interrupt', 'sleep', 'subgraph', 'tools'].map((graph) => [graph, 1, 1]),
    );
    // And both answer from that one database.
    const thread = await call<{ thread_id: string }>(a, 'POST', '/threads', {});
    await call(b, 'GET', `/threads/${thread.thread_id}`);
  });

  test('any instance serves anything: a run created on A is joined on B, stream-joined on C, cancelled from B and deleted from C', async () => {
    await cluster();
    const assistant = await call<{ assistant_id: string }>(a, 'POST', '/assistants', {
      graph_id: 'sleep',
      name: 'slow',
    });
    const thread = await call<{ thread_id: string }>(a, 'POST', '/threads', { metadata: { made_on: 'A' } });
    assert.equal((await call(b, 'GET', `/assistants/${assistant.assistant_id}`)).name, 'slow');
    assert.deepEqual((await call(b, 'GET', `/threads/${thread.thread_id}`)).metadata, { made_on: 'A' });

    // Created on A and executed there (B and C only see it through PostgreSQL and Redis), long
    // enough to be running through everything below: a `custom` event every 100 ms.
    const run = await runExecutingOn(a, thread.thread_id, {
      assistant_id: assistant.assistant_id,
      input: { ...human('sleep'), delay_ms: 60_000, steps: 600 },
      stream_mode: ['values', 'custom'],
    });
    const runPath = `/threads/${thread.thread_id}/runs/${run.run_id}`;
    // Joined on B: answers once the run ends.
    const joined = call(b, 'GET', `${runPath}/join`);

    // A first reader from the start, on A; then C resumes after the second event it saw.
    const first = await openStream(a, `${runPath}/stream`);
    await first.until((frames) => steps(frames).length >= 2);
    await first.cancel();
    assert.deepEqual(ids(first.frames).slice(0, 4), [0, 1, 2, 3]);
    assert.equal(first.frames[0]!.event, 'metadata');
    const lastSeen = Number(first.frames[1]!.id);
    const resumed = await openStream(c, `${runPath}/stream`, { 'last-event-id': String(lastSeen) });
    await resumed.until((frames) => frames.length > 0);
    // Live: events the run produces after C joined (the run is at least this far now, and C
    // must still deliver steps beyond it).
    const stepNow = Math.max(...steps(resumed.frames));
    await resumed.until((frames) => steps(frames).some((step) => step >= stepNow + 3));
    assert.equal(resumed.ended, false, 'the stream follows the running run');
    assert.equal((await call(b, 'GET', runPath)).status, 'running');

    // Cancelled from B while A executes it.
    await call(b, 'POST', `${runPath}/cancel?wait=1`, undefined, 204);
    const rest = await resumed.toEnd();
    // After the given id only, every event once, in order, to the end.
    assert.deepEqual(ids(rest), range(lastSeen + 1, lastSeen + rest.length));
    assert.ok(
      !rest.some((frame) => frame.event === 'error'),
      `no error event: ${JSON.stringify(rest.filter((f) => f.event === 'error'))}`,
    );
    const stepsSeen = steps(rest);
    assert.deepEqual(stepsSeen, range(stepsSeen[0]!, stepsSeen[0]! + stepsSeen.length - 1));
    // The same events a reader from the start gets, after the given id.
    const replay = await (await openStream(b, `${runPath}/stream`)).toEnd();
    assert.deepEqual(
      replay.filter((frame) => Number(frame.id) > lastSeen),
      rest,
    );
    for (const instance of [a, b, c]) assert.equal((await call(instance, 'GET', runPath)).status, 'interrupted');
    // The join on B ended with the run: the values it had when it was stopped.
    const joinedValues = await joined;
    assert.equal((joinedValues.messages as unknown[]).length, 1);
    // The stream lived in Redis under this deployment's prefix.
    const redis = new Redis(REDIS_URI);
    try {
      assert.equal(await redis.exists(`${keyPrefix}run:{${run.run_id}}:events`), 1);
    } finally {
      redis.disconnect();
    }

    // Deleted from C; gone on every instance.
    await call(c, 'DELETE', runPath, undefined, 204);
    for (const instance of [a, b, c]) await call(instance, 'GET', runPath, undefined, 404);
  });

  test('exactly once: runs created round-robin over the three instances each execute once', async () => {
    await cluster();
    const all = [a, b, c];
    const RUNS = 300;
    const created = await pooled(range(0, RUNS - 1), 24, async (n) => {
      const instance = all[n % all.length]!;
      const thread = await call<{ thread_id: string }>(instance, 'POST', '/threads', {});
      const run = await call<{ run_id: string }>(instance, 'POST', `/threads/${thread.thread_id}/runs`, {
        assistant_id: 'chat',
        input: human(`message ${n}`),
      });
      return { n, threadId: thread.thread_id, runId: run.run_id };
    });
    // All of them end, each claimed once: attempt 1 (the server's bookkeeping, not on the wire).
    await eventually(
      async () => {
        const rows = await query<{ status: string; n: string }>(
          database,
          'SELECT status, count(*) AS n FROM runs WHERE run_id = ANY($1) GROUP BY status',
          [created.map((run) => run.runId)],
        );
        assert.deepEqual(
          rows.map((row) => [row.status, Number(row.n)]),
          [['success', RUNS]],
        );
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const attempts = await query<{ attempt: number; n: string }>(
      database,
      'SELECT attempt, count(*) AS n FROM runs WHERE run_id = ANY($1) GROUP BY attempt',
      [created.map((run) => run.runId)],
    );
    assert.deepEqual(
      attempts.map((row) => [row.attempt, Number(row.n)]),
      [[1, RUNS]],
    );
    // The side effects of one execution each: the thread's state holds its input and one answer,
    // read back through any instance.
    await pooled(created, 24, async ({ n, threadId }) => {
      const state = await call<{ values: { messages: { type: string; content: string }[] } }>(
        all[(n + 1) % all.length]!,
        'GET',
        `/threads/${threadId}/state`,
      );
      assert.deepEqual(
        state.values.messages.map((message) => [message.type, message.content]),
        [
          ['human', `message ${n}`],
          ['ai', `You said: message ${n}`],
        ],
        `thread ${threadId} of run ${n}`,
      );
    });
    // And one run on each thread, none started twice on another.
    const perThread = await query<{ n: string }>(
      database,
      'SELECT count(*) AS n FROM runs WHERE thread_id = ANY($1) GROUP BY thread_id HAVING count(*) <> 1',
      [created.map((run) => run.threadId)],
    );
    assert.deepEqual(perThread, []);
  });

  test('races across instances: `reject` accepts one of two simultaneous runs on a thread', async () => {
    await cluster();
    for (let round = 0; round < 8; round++) {
      const thread = await call<{ thread_id: string }>(a, 'POST', '/threads', {});
      const create = (instance: Instance) =>
        request(instance.url, 'POST', `/threads/${thread.thread_id}/runs`, {
          body: {
            assistant_id: 'sleep',
            input: { ...human('busy'), delay_ms: 30_000, steps: 30 },
            multitask_strategy: 'reject',
          },
        });
      const answers = await Promise.all([create(a), create(b)]);
      assert.deepEqual(
        answers.map((answer) => answer.status).sort(),
        [200, 409],
        `round ${round}: ${answers.map((answer) => `${answer.status} ${answer.text.slice(0, 300)}`).join(' | ')}`,
      );
      const accepted = answers.find((answer) => answer.status === 200)!.json as { run_id: string };
      const runs = await call<{ run_id: string }[]>(c, 'GET', `/threads/${thread.thread_id}/runs`);
      assert.deepEqual(
        runs.map((run) => run.run_id),
        [accepted.run_id],
        `round ${round}: the thread has the accepted run only`,
      );
      await call(c, 'POST', `/threads/${thread.thread_id}/runs/${accepted.run_id}/cancel?wait=1`, undefined, 204);
    }
  });

  test('races across instances: `if_not_exists: create` on one new thread id through two instances makes one thread and both runs', async () => {
    await cluster();
    for (let round = 0; round < 8; round++) {
      const threadId = randomUUID();
      const create = (instance: Instance, text: string) =>
        request(instance.url, 'POST', `/threads/${threadId}/runs`, {
          body: { assistant_id: 'chat', input: human(text), if_not_exists: 'create', multitask_strategy: 'enqueue' },
        });
      const answers = await Promise.all([create(a, 'from A'), create(b, 'from B')]);
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [200, 200],
        `round ${round}: ${answers.map((answer) => `${answer.status} ${answer.text.slice(0, 300)}`).join(' | ')}`,
      );
      const runIds = answers.map((answer) => (answer.json as { run_id: string }).run_id);
      assert.deepEqual(
        (
          await query<{ n: string }>(database, 'SELECT count(*) AS n FROM threads WHERE thread_id = $1', [threadId])
        ).map((row) => Number(row.n)),
        [1],
      );
      await eventually(async () => {
        const runs = await call<{ run_id: string; status: string }[]>(c, 'GET', `/threads/${threadId}/runs`);
        assert.deepEqual(runs.map((run) => run.run_id).sort(), [...runIds].sort());
        assert.deepEqual(
          runs.map((run) => run.status),
          ['success', 'success'],
        );
      });
      // Both executed on the one thread, one after the other.
      const state = await call<{ values: { messages: { type: string; content: string }[] } }>(
        c,
        'GET',
        `/threads/${threadId}/state`,
      );
      const contents = state.values.messages.map((message) => `${message.type}: ${message.content}`);
      assert.equal(contents.length, 4, contents.join(' | '));
      assert.deepEqual([...contents].sort(), [
        'ai: You said: from A',
        'ai: You said: from B',
        'human: from A',
        'human: from B',
      ]);
    }
  });

  test("cutting the instances' Redis connections mid-stream: a stream-join on B still delivers every event of a run executing on A", async () => {
    // README, "Redis unreachable": a stream already open waits up to 5 s for the connection (ioredis
    // reconnects within 100 ms here), and the executing process buffers its events and appends them,
    // in order and once, when the connection returns. So the promise is every event to the end, not
    // an `error` event (that one is for a connection that stays down more than 5 s).
    await cluster();
    const thread = await call<{ thread_id: string }>(a, 'POST', '/threads', {});
    const STEPS = 60;
    const run = await runExecutingOn(a, thread.thread_id, {
      assistant_id: 'sleep',
      input: { ...human('cut'), delay_ms: 6_000, steps: STEPS },
      stream_mode: ['values', 'custom'],
    });
    const runPath = `/threads/${thread.thread_id}/runs/${run.run_id}`;
    const stream = await openStream(b, `${runPath}/stream`);
    const reached = (count: number) => stream.until((frames) => steps(frames).length >= count);

    assert.ok(await reached(5), 'the first steps arrive');
    // The reader's side: B's command and pub/sub connections.
    assert.deepEqual((await cutRedis(b)).map((name) => name.split(':')[0]).sort(), [
      'tracepipe-agent-api',
      'tracepipe-agent-api-sub',
    ]);
    const afterFirstCut = steps(stream.frames).length;
    assert.ok(await reached(afterFirstCut + 5), 'B goes on delivering after its connections were cut');
    // Then every instance's connections at once, the executing one's included.
    const killed = (await Promise.all([a, b, c].map((instance) => cutRedis(instance)))).flat();
    assert.equal(killed.length, 6, `two connections per instance: ${killed.join(', ')}`);

    const frames = await stream.toEnd();
    const errors = frames.filter((frame) => frame.event === 'error');
    assert.deepEqual(errors, [], 'no error event: the connections came back within the 5 s');
    // Every event, once, in order, to the end.
    assert.deepEqual(ids(frames), range(0, frames.length - 1));
    assert.equal(frames[0]!.event, 'metadata');
    assert.deepEqual(steps(frames), range(1, STEPS));
    const last = frames.at(-1)!;
    assert.equal(last.event, 'values');
    const messages = (last.data as { messages: { content: string }[] }).messages;
    assert.equal(messages.at(-1)!.content, 'finished after 6000 ms');
    assert.equal((await call(c, 'GET', runPath)).status, 'success');
    // What a reader joining afterwards on C replays is the same stream.
    assert.deepEqual(await (await openStream(c, `${runPath}/stream`)).toEnd(), frames);
    // And the instances are connected again.
    for (const instance of [a, b, c]) {
      await eventually(async () => assert.equal((await redisConnections(instance)).length, 2, instance.name));
    }
  });
});
