// kill -9 of an agent server instance with runs in flight, in a cluster of real `tracepipe`
// processes on one PostgreSQL database (configs/cluster.yaml): the runs the dead instance held
// are settled by the surviving instance once their leases expire — each exactly once, as
// `error` with the restart message — their threads are free again, and the runs queued behind
// them execute. Leases are shortened to 2 s here (`runs.lease_ms`), so the wait is bounded by a
// few seconds instead of the default's 45.
//
// Needs PostgreSQL (TEST_POSTGRES_URI, default the machine's) and Redis (TEST_REDIS_URI); skipped
// with the reason when either does not answer.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client } from '@langchain/langgraph-sdk';
import type { Run } from '@langchain/langgraph-sdk';
import { Redis } from 'ioredis';
import { eventually } from '../src/testkit/eventually.ts';
import { freshDatabase, postgresAvailable } from '../plugins/receivers/agent_api/testing/postgres.ts';
import type { TestDatabase } from '../plugins/receivers/agent_api/testing/postgres.ts';
import { messagesOf } from '../plugins/receivers/agent_api/testing/types.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const REDIS_URI = process.env.TEST_REDIS_URI ?? 'redis://127.0.0.1:6379';
const LEASE_MS = 2000;

async function redisAvailable(): Promise<boolean> {
  const probe = new Redis(REDIS_URI, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

const skip = !(await postgresAvailable())
  ? 'no PostgreSQL answers (TEST_POSTGRES_URI)'
  : !(await redisAvailable())
    ? 'no Redis answers (TEST_REDIS_URI)'
    : false;

interface Instance {
  readonly child: ChildProcess;
  readonly client: Client;
  output(): string;
}

/** Starts one `tracepipe --config configs/cluster.yaml` and resolves once its agent server listens. */
async function startInstance(database: TestDatabase, keyPrefix: string): Promise<Instance> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cluster-recovery-'));
  const child = spawn(
    process.execPath,
    [
      'bin/tracepipe.js',
      '--config',
      'configs/cluster.yaml',
      '--set',
      `receivers.agent_api.runs.lease_ms=${LEASE_MS}`,
      '--set',
      `receivers.agent_api.broker.key_prefix="${keyPrefix}"`,
    ],
    {
      cwd: REPO,
      env: {
        ...process.env,
        DATABASE_URI: database.uri,
        REDIS_URI,
        AGENT_API_PORT: '0',
        HTTP_PORT: '0',
        TRACE_EXPLORER_PORT: '0',
        LANGGRAPH_CONFIG: join(REPO, 'examples/graphs/langgraph.json'),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
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
  const client = new Client({ apiUrl: `http://127.0.0.1:${port}`, apiKey: null, callerOptions: { maxRetries: 0 } });
  return { child, client, output: () => output };
}

async function stop(instance: Instance, signal: NodeJS.Signals): Promise<void> {
  if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
  const exited = new Promise((resolve) => instance.child.once('exit', resolve));
  instance.child.kill(signal);
  await exited;
}

describe('agent server cluster: kill -9 of an instance with runs in flight', { skip }, () => {
  let database: TestDatabase;
  const keyPrefix = `tracepipe-test:${randomUUID()}:`;
  const instances: Instance[] = [];

  before(async () => {
    database = await freshDatabase('agent_api_cluster');
  });
  after(async () => {
    for (const instance of instances) await stop(instance, 'SIGKILL');
    await database?.drop();
    const redis = new Redis(REDIS_URI);
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('the survivor settles each of the dead instance’s runs once, frees their threads and runs what waited', async () => {
    const doomed = await startInstance(database, keyPrefix);
    instances.push(doomed);
    // Runs that sleep far longer than the test: only a kill ends them. They start on the only
    // instance there is, so the one about to die holds every one of them.
    const held: Run[] = [];
    for (let index = 0; index < 4; index++) {
      const thread = await doomed.client.threads.create();
      held.push(await doomed.client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 600_000 } }));
    }
    await eventually(async () => {
      for (const run of held)
        assert.equal((await doomed.client.runs.get(run.thread_id!, run.run_id)).status, 'running');
    });
    // Queued behind the first held run on its thread (multitask `enqueue`): it runs once the thread is free.
    const queued = await doomed.client.runs.create(held[0]!.thread_id!, 'chat', {
      input: { messages: [{ role: 'user', content: 'after the crash' }] },
      multitaskStrategy: 'enqueue',
    });

    const survivor = await startInstance(database, keyPrefix);
    instances.push(survivor);
    // A starting instance on a shared database leaves live leases alone.
    for (const run of held) {
      assert.equal((await survivor.client.runs.get(run.thread_id!, run.run_id)).status, 'running');
    }

    await stop(doomed, 'SIGKILL');

    const settled = await eventually(
      async () =>
        Promise.all(
          held.map(async (run) => {
            const found = await survivor.client.runs.get(run.thread_id!, run.run_id);
            assert.ok(found.status !== 'running' && found.status !== 'pending', `${run.run_id} is ${found.status}`);
            return found;
          }),
        ),
      { timeoutMs: 30_000 },
    );
    for (const run of settled) assert.equal(run.status, 'error');

    const after = await eventually(
      async () => {
        const run = await survivor.client.runs.get(queued.thread_id!, queued.run_id);
        assert.equal(run.status, 'success', `the queued run is ${run.status}`);
        return run;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(after.run_id, queued.run_id);
    const state = await survivor.client.threads.getState(queued.thread_id!);
    assert.equal(messagesOf(state.values).at(-2)?.content, 'after the crash');
    for (const run of held.slice(1)) {
      assert.notEqual((await survivor.client.threads.get(run.thread_id!)).status, 'busy');
    }
    // New work goes on as usual.
    const fresh = await survivor.client.threads.create();
    const values = await survivor.client.runs.wait(fresh.thread_id, 'chat', {
      input: { messages: [{ role: 'user', content: 'still here' }] },
    });
    assert.equal(messagesOf(values).length, 2);
    await stop(survivor, 'SIGTERM');
    assert.equal(survivor.child.exitCode, 0, survivor.output());
  });
});
