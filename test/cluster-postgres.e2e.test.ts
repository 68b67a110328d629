// The agent server as two real `tracepipe --config configs/cluster.yaml` processes on one
// PostgreSQL database and no Redis (plugins/receivers/agent_api/README.md, "Several servers
// without Redis: PostgreSQL notifications"): wake-ups and the ends of runs travel between them as
// `LISTEN`/`NOTIFY` on the database. Many runs on many threads at once, created on both: each
// executes once, and each thread's runs in the order they were created, never two at once.
//
// Needs PostgreSQL (TEST_POSTGRES_URI, a fresh database, dropped afterwards); skipped when it does
// not answer. The same check with a Redis broker: test/cluster.e2e.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freshDatabase, postgresAvailable } from '../plugins/receivers/agent_api/testing/postgres.ts';
import type { TestDatabase } from '../plugins/receivers/agent_api/testing/postgres.ts';
import { call, query, ready, runManyOnThreads, startInstance } from './support/agent-cluster.ts';
import type { Instance } from './support/agent-cluster.ts';

const skip = !(await postgresAvailable())
  ? 'no PostgreSQL answers at TEST_POSTGRES_URI (default postgres://postgres@127.0.0.1:5432/postgres)'
  : false;

describe('configs/cluster.yaml without Redis: two tracepipe processes on one PostgreSQL database', { skip }, () => {
  let database: TestDatabase;
  const instances: Instance[] = [];

  before(async () => {
    database = await freshDatabase('agent_api_e2e_pg');
    // The first migrates the empty database; the second starts once it has.
    instances.push(await startInstance('A', database.uri));
    await ready(instances[0]!);
    instances.push(await startInstance('B', database.uri));
    await ready(instances[1]!);
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await database?.drop();
  });

  test('they signal each other through PostgreSQL, with no broker configured', async () => {
    // Each keeps one listening connection of its own (README: `application_name`).
    const listeners = await query<{ n: string }>(
      database,
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tracepipe agent runs listener'",
    );
    assert.equal(Number(listeners[0]!.n), 2);
    // A run created on one and waited for on the other ends there, whichever executes it.
    const [a, b] = instances as [Instance, Instance];
    const thread = await call<{ thread_id: string }>(a, 'POST', '/threads', {});
    const run = await call<{ run_id: string }>(a, 'POST', `/threads/${thread.thread_id}/runs`, {
      assistant_id: 'chat',
      input: { messages: [{ type: 'human', content: 'hello' }] },
    });
    await call(b, 'GET', `/threads/${thread.thread_id}/runs/${run.run_id}/join`);
    const ended = await call<{ status: string }>(b, 'GET', `/threads/${thread.thread_id}/runs/${run.run_id}`);
    assert.equal(ended.status, 'success');
  });

  test('200 runs on 20 threads, created on both at once: each executed once, in its thread’s order', async () => {
    await runManyOnThreads(instances, database, { threads: 20, runsPerThread: 10 });
  });
});
