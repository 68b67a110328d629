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
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Run } from '@langchain/langgraph-sdk';
import { eventually } from '../src/testkit/eventually.ts';
import { freshDatabase, postgresAvailable } from '../plugins/receivers/agent_api/testing/postgres.ts';
import type { TestDatabase } from '../plugins/receivers/agent_api/testing/postgres.ts';
import { deleteKeys, redisAvailable, TEST_REDIS_URI } from '../plugins/receivers/agent_api/testing/redis.ts';
import { messagesOf } from '../plugins/receivers/agent_api/testing/types.ts';
import { REPO_ROOT, startTracepipe } from './support/proxy_process.ts';
import type { TracepipeProcess } from './support/proxy_process.ts';

const REDIS_URI = TEST_REDIS_URI;
const LEASE_MS = 2000;

const skip = !(await postgresAvailable())
  ? 'no PostgreSQL answers (TEST_POSTGRES_URI)'
  : !(await redisAvailable(REDIS_URI))
    ? 'no Redis answers (TEST_REDIS_URI)'
    : false;

type Instance = TracepipeProcess;

/** Starts one `tracepipe --config configs/cluster.yaml` and resolves once its agent server listens. */
function startInstance(database: TestDatabase, keyPrefix: string): Promise<Instance> {
  return startTracepipe({
    config: 'configs/cluster.yaml',
    set: { 'receivers.agent_api.runs.lease_ms': LEASE_MS, 'receivers.agent_api.broker.key_prefix': keyPrefix },
    env: {
      DATABASE_URI: database.uri,
      REDIS_URI,
      LANGGRAPH_JSON: join(REPO_ROOT, 'examples/graphs/langgraph.json'),
    },
  });
}

describe('agent server cluster: kill -9 of an instance with runs in flight', { skip }, () => {
  let database: TestDatabase;
  const keyPrefix = `tracepipe-test:${randomUUID()}:`;
  const instances: Instance[] = [];

  before(async () => {
    database = await freshDatabase('agent_api_cluster');
  });
  after(async () => {
    for (const instance of instances) await instance.stop('SIGKILL');
    await database?.drop();
    await deleteKeys(REDIS_URI, keyPrefix);
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

    await doomed.stop('SIGKILL');

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
    await survivor.stop('SIGTERM');
    assert.equal(survivor.child.exitCode, 0, survivor.output());
  });
});
