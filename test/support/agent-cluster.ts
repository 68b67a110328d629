// What the end-to-end tests of several agent server processes on one PostgreSQL database share
// (test/cluster.e2e.test.ts with a Redis broker, test/cluster-postgres.e2e.test.ts without one):
// starting `tracepipe --config configs/cluster.yaml`, waiting for `/ready`, JSON requests that
// must answer a given status, SQL on the test database, bounded concurrency, and the check that
// runs created on many threads at once each executed once and in their thread's order.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { eventually } from '../../src/testkit/eventually.ts';
import { request } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import { admin } from '../../plugins/receivers/agent_api/testing/postgres.ts';
import type { TestDatabase } from '../../plugins/receivers/agent_api/testing/postgres.ts';
import { REPO_ROOT, startTracepipe } from './proxy_process.ts';
import type { TracepipeProcess } from './proxy_process.ts';

export type Json = Record<string, unknown>;

/** One `tracepipe` process of the cluster. */
export interface Instance extends TracepipeProcess {
  readonly name: string;
}

/**
 * Starts `tracepipe --config configs/cluster.yaml` on free ports; resolves once it listens. With
 * `redis`, the instances share that broker under `keyPrefix`; without, PostgreSQL notifications
 * carry wake-ups and run ends between them.
 */
export async function startInstance(
  name: string,
  databaseUri: string,
  redis?: { readonly uri: string; readonly keyPrefix: string },
): Promise<Instance> {
  const instance = await startTracepipe({
    name,
    config: 'configs/cluster.yaml',
    ...(redis ? { set: { 'receivers.agent_api.broker.key_prefix': redis.keyPrefix } } : {}),
    cleanEnv: true,
    env: {
      DATABASE_URI: databaseUri,
      REDIS_URI: redis?.uri ?? '',
      LANGGRAPH_JSON: join(REPO_ROOT, 'examples/graphs/langgraph.json'),
    },
  });
  return { ...instance, name };
}

/** Waits for `/ready` to answer 200 (the database reachable, the schema migrated). */
export async function ready(instance: Instance): Promise<void> {
  await eventually(
    async () => {
      const response = await fetch(`${instance.url}/ready`);
      assert.equal(response.status, 200, `${instance.name}'s /ready: ${response.status} ${await response.text()}`);
    },
    { timeoutMs: 30_000 },
  );
}

/** A JSON request that must answer `expected`; returns the parsed body. */
export async function call<T = Json>(
  instance: Instance,
  method: string,
  path: string,
  body?: unknown,
  expected = 200,
): Promise<T> {
  const response = await request(instance.url, method, path, body === undefined ? {} : { body });
  assert.equal(
    response.status,
    expected,
    `${method} ${path} on ${instance.name}: ${response.status} ${response.text.slice(0, 500)}`,
  );
  return response.json as T;
}

export async function query<T extends Json>(database: TestDatabase, sql: string, params: unknown[] = []): Promise<T[]> {
  return admin(async (client) => (await client.query(sql, params)).rows as T[], database.uri);
}

/** `fn` over `items`, at most `limit` at a time; the results in the items' order. */
export async function pooled<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await fn(items[index]!, index);
      }
    }),
  );
  return results;
}

export const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
export const human = (text: string) => ({ messages: [{ type: 'human', content: text }] });

/**
 * Creates `runsPerThread` runs of the `chat` graph on each of `threads` new threads, all threads at
 * once and each thread's runs one after another (`enqueue`: the earlier ones may still be waiting
 * or running), the requests going round robin over `instances`; then checks that every run ended
 * `success` after one claim (attempt 1), and that each thread's state holds every run's message
 * and answer once, in creation order — which it does only if the thread's runs executed one at a
 * time, in order, each once.
 */
export async function runManyOnThreads(
  instances: readonly Instance[],
  database: TestDatabase,
  { threads, runsPerThread, concurrency = 24 }: { threads: number; runsPerThread: number; concurrency?: number },
): Promise<void> {
  const pick = (n: number) => instances[n % instances.length]!;
  const created = await pooled(range(0, threads - 1), concurrency, async (t) => {
    const thread = await call<{ thread_id: string }>(pick(t), 'POST', '/threads', {});
    const runIds: string[] = [];
    for (let n = 0; n < runsPerThread; n++) {
      const run = await call<{ run_id: string }>(pick(t + n), 'POST', `/threads/${thread.thread_id}/runs`, {
        assistant_id: 'chat',
        input: human(`thread ${t} message ${n}`),
        multitask_strategy: 'enqueue',
      });
      runIds.push(run.run_id);
    }
    return { t, threadId: thread.thread_id, runIds };
  });
  const runIds = created.flatMap((thread) => thread.runIds);
  await eventually(
    async () => {
      const rows = await query<{ status: string; n: string }>(
        database,
        'SELECT status, count(*) AS n FROM runs WHERE run_id = ANY($1) GROUP BY status',
        [runIds],
      );
      assert.deepEqual(
        rows.map((row) => [row.status, Number(row.n)]),
        [['success', runIds.length]],
      );
    },
    { timeoutMs: 120_000, intervalMs: 250 },
  );
  const attempts = await query<{ attempt: number; n: string }>(
    database,
    'SELECT attempt, count(*) AS n FROM runs WHERE run_id = ANY($1) GROUP BY attempt',
    [runIds],
  );
  assert.deepEqual(
    attempts.map((row) => [row.attempt, Number(row.n)]),
    [[1, runIds.length]],
  );
  await pooled(created, concurrency, async ({ t, threadId }) => {
    const state = await call<{ values: { messages: { type: string; content: string }[] } }>(
      pick(t + 1),
      'GET',
      `/threads/${threadId}/state`,
    );
    assert.deepEqual(
      state.values.messages.map((message) => [message.type, message.content]),
      range(0, runsPerThread - 1).flatMap((n) => [
        ['human', `thread ${t} message ${n}`],
        ['ai', `You said: thread ${t} message ${n}`],
      ]),
      `thread ${threadId}`,
    );
  });
}
