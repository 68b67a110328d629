// Two server instances on one PostgreSQL database, as their storages see it: there is no lock per
// database, so what keeps them right is per thread (and per assistant). Hundreds of runs on many
// threads, created and executed by both at once, each run executed once and each thread's runs in
// the order they were created; and the read-decide-write steps of the domain (a multitask `reject`,
// `if_not_exists`, a new assistant version) decided once across both.

import assert from 'node:assert/strict';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { openPostgresStorage } from './internal/storage/postgres.ts';
import type { Storage } from './internal/storage/storage.ts';
import { freshDatabase, postgresAvailable } from './testing/postgres.ts';
import type { TestDatabase } from './testing/postgres.ts';
import { assistant, run, thread } from './testing/storage-contract.ts';

const available = await postgresAvailable();

const THREADS = 30;
const RUNS = 300;
const WORKERS_PER_INSTANCE = 4;

describe('PostgreSQL storage shared by two instances', { skip: available ? false : 'no PostgreSQL server' }, () => {
  let database: TestDatabase;
  let instances: Storage[];

  before(async () => {
    database = await freshDatabase();
    instances = [await openPostgresStorage(database.uri), await openPostgresStorage(database.uri)];
  });

  after(async () => {
    for (const instance of instances ?? []) await instance.close();
    await database?.drop();
  });

  it(`executes ${RUNS} runs on ${THREADS} threads once each, each thread's in order`, async () => {
    const executed = new Map<string, number>();
    const order = new Map<string, string[]>();
    const executing = new Map<string, string>();
    const overlaps: string[] = [];
    let creating = true;

    // Both instances create runs at once, each in a transaction as the run service does.
    const create = async (instance: Storage, n: number): Promise<void> => {
      const threadId = `thread-${n % THREADS}`;
      await instance.transaction(async (tx) => {
        if (!(await tx.threads.get(threadId))) await tx.threads.insert(thread(threadId, { status: 'busy' }));
        await tx.runs.inflight(threadId);
        await tx.runs.insert(run(`run-${n}`, threadId, { created_at: new Date().toISOString() }));
      });
    };
    const creators = Promise.allSettled(Array.from({ length: RUNS }, (_, n) => create(instances[n % 2]!, n))).finally(
      () => (creating = false),
    );

    const work = async (instance: Storage, owner: string): Promise<void> => {
      for (;;) {
        const claimed = await instance.runs.claimNext(owner, 30_000, new Date().toISOString(), new Set());
        if (!claimed) {
          if (!creating && (await instance.runs.withStatus('pending')).length === 0) return;
          await new Promise((resolve) => setTimeout(resolve, 5));
          continue;
        }
        const other = executing.get(claimed.thread_id);
        if (other) overlaps.push(`${claimed.run_id} started while ${other} ran on ${claimed.thread_id}`);
        executing.set(claimed.thread_id, claimed.run_id);
        executed.set(claimed.run_id, (executed.get(claimed.run_id) ?? 0) + 1);
        order.set(claimed.thread_id, [...(order.get(claimed.thread_id) ?? []), claimed.run_id]);
        await yieldToLoop();
        executing.delete(claimed.thread_id);
        await instance.transaction(async (tx) => {
          const current = await tx.runs.get(claimed.run_id);
          if (current?.status !== 'running') return;
          await tx.runs.update({ ...current, status: 'success', updated_at: new Date().toISOString() });
          const t = await tx.threads.get(claimed.thread_id);
          if (t && (await tx.runs.inflight(t.thread_id)).length === 0)
            await tx.threads.update({ ...t, status: 'idle' });
        });
      }
    };
    const workers = instances.flatMap((instance, i) =>
      Array.from({ length: WORKERS_PER_INSTANCE }, (_, w) => work(instance, `instance-${i}/worker-${w}`)),
    );
    const [creations] = await Promise.all([creators, ...workers]);
    assert.deepEqual(
      creations.filter((outcome) => outcome.status === 'rejected').map((outcome) => String(outcome.reason)),
      [],
      'every run was created',
    );

    assert.deepEqual(overlaps, [], 'no two runs of a thread executed at once');
    assert.equal(executed.size, RUNS, 'every run executed');
    assert.deepEqual(
      [...executed].filter(([, times]) => times !== 1),
      [],
      'no run executed twice',
    );
    for (let t = 0; t < THREADS; t++) {
      const threadId = `thread-${t}`;
      const created = (await instances[0]!.runs.list(threadId, { limit: RUNS, offset: 0 })).map((r) => r.run_id);
      assert.deepEqual(order.get(threadId), created, `${threadId} ran its runs in the order they were created`);
    }
  });

  it('decides a multitask reject, if_not_exists and a new assistant version once across both', async () => {
    for (let round = 0; round < 20; round++) {
      const threadId = `reject-${round}`;
      // Both create the thread if it does not exist, and a run if none is in flight (`reject`).
      const outcomes = await Promise.allSettled(
        instances.map((instance, i) =>
          instance.transaction(async (tx) => {
            if (!(await tx.threads.get(threadId))) await tx.threads.insert(thread(threadId));
            if ((await tx.runs.inflight(threadId)).length > 0) throw new Error('rejected: a run is in flight');
            await tx.runs.insert(run(`${threadId}-run-${i}`, threadId));
          }),
        ),
      );
      assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected'], `round ${round}`);
      assert.match(String((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason), /rejected/);
      assert.equal((await instances[0]!.runs.inflight(threadId)).length, 1);
    }

    await instances[0]!.assistants.insert(assistant('shared'));
    await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        instances[n % 2]!.transaction(async (tx) => {
          await tx.assistants.lock('shared');
          const current = (await tx.assistants.get('shared'))!;
          const version = (await tx.assistants.maxVersion('shared')) + 1;
          const { updated_at: _updated, ...fields } = current;
          await tx.assistants.insertVersion({ ...fields, version, metadata: { n } });
          await tx.assistants.update({ ...current, version });
        }),
      ),
    );
    assert.equal(await instances[1]!.assistants.maxVersion('shared'), 21, 'twenty versions, numbered in turn');
    assert.equal((await instances[1]!.assistants.get('shared'))?.version, 21);
  });
});
