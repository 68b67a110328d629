// The storage contract's cases (`internal/storage/storage.ts`), for any implementation: a test file
// calls `storageContract` with a way to open a fresh database, and every case runs against it. What
// is checked is what the domain relies on: records come back as written, searches filter, sort and
// page as documented, deletes cascade, the run queue and cron ticks are claimed exactly once even
// by several handles on one database, and transactions commit or roll back as a whole.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CronRecord } from '../internal/storage/crons.ts';
import type { Assistant, AssistantVersion, RunRecord, Storage, Thread } from '../internal/storage/storage.ts';

/** A fresh, empty database for one case. */
export interface ContractDatabase {
  storage: Storage;
  /** Another handle on the same database, as a second server process would have (closed by the case). */
  openAnother(): Promise<Storage>;
  /** Closes what the case left open and removes the database. */
  drop(): Promise<void>;
}

const T0 = '2024-05-01T10:00:00.000Z';
const at = (seconds: number): string => new Date(Date.parse(T0) + seconds * 1000).toISOString();

export function assistant(id: string, fields: Partial<Assistant> = {}): Assistant {
  return {
    assistant_id: id,
    graph_id: 'agent',
    name: id,
    description: null,
    version: 1,
    config: {},
    context: null,
    metadata: {},
    created_at: T0,
    updated_at: T0,
    ...fields,
  };
}

export function thread(id: string, fields: Partial<Thread> = {}): Thread {
  return {
    thread_id: id,
    created_at: T0,
    updated_at: T0,
    metadata: {},
    status: 'idle',
    config: {},
    values: null,
    interrupts: null,
    ...fields,
  };
}

export function run(id: string, threadId: string, fields: Partial<RunRecord> = {}): RunRecord {
  return {
    run_id: id,
    thread_id: threadId,
    assistant_id: 'a1',
    created_at: T0,
    updated_at: T0,
    status: 'pending',
    metadata: {},
    kwargs: {
      input: { n: 1 },
      command: null,
      config: { configurable: {}, metadata: {} },
      context: null,
      stream_mode: ['values'],
      interrupt_before: null,
      interrupt_after: null,
      webhook: null,
      feedback_keys: null,
      temporary: false,
      subgraphs: false,
      resumable: false,
    },
    multitask_strategy: 'enqueue',
    error: null,
    attempt: 0,
    temporary: false,
    ...fields,
  };
}

export function cron(id: string, fields: Partial<CronRecord> = {}): CronRecord {
  return {
    cron_id: id,
    assistant_id: 'a1',
    thread_id: null,
    on_run_completed: 'delete',
    end_time: null,
    schedule: '*/5 * * * *',
    timezone: null,
    created_at: T0,
    updated_at: T0,
    user_id: null,
    payload: { assistant_id: 'a1' },
    next_run_date: at(300),
    metadata: {},
    enabled: true,
    auth: null,
    ...fields,
  };
}

const ids = <T>(items: T[], key: keyof T): unknown[] => items.map((item) => item[key]);

/** The lease the cases' claims take: 30 s. */
const LEASE_MS = 30_000;
const RESTART = { error: 'ServerRestart', message: 'cut off' };

export function storageContract(name: string, open: () => Promise<ContractDatabase>): void {
  /** Runs `body` on a fresh database and drops it afterwards, whatever happens. */
  const withDatabase =
    (body: (storage: Storage, database: ContractDatabase) => Promise<void>) => async (): Promise<void> => {
      const database = await open();
      try {
        await body(database.storage, database);
      } finally {
        await database.drop();
      }
    };

  describe(`${name} storage contract`, () => {
    it(
      'keeps assistants and their versions as written',
      withDatabase(async (storage) => {
        assert.equal(await storage.assistants.get('a1'), undefined);
        assert.equal(await storage.assistants.maxVersion('a1'), 0);
        const first = assistant('a1', {
          description: 'first',
          config: { configurable: { model: 'x' }, tags: ['t'] },
          context: { system_prompt: 'hi', nested: { list: [1, 'two', null] } },
          metadata: { team: 'blue', n: 3 },
        });
        await storage.assistants.insert(first);
        assert.deepEqual(await storage.assistants.get('a1'), first);
        // Inserting an assistant records its version row too.
        const { updated_at: _updated, ...versionOne } = first;
        assert.deepEqual(await storage.assistants.getVersion('a1', 1), versionOne);
        const second: AssistantVersion = { ...versionOne, version: 2, context: 'plain', metadata: { team: 'red' } };
        await storage.assistants.insertVersion(second);
        assert.equal(await storage.assistants.maxVersion('a1'), 2);
        await storage.assistants.update({ ...first, ...second, updated_at: at(5) });
        assert.deepEqual(await storage.assistants.get('a1'), { ...first, ...second, updated_at: at(5) });
        assert.deepEqual(
          ids(await storage.assistants.listVersions('a1', { limit: 10, offset: 0 }), 'version'),
          [2, 1],
          'newest version first',
        );
        assert.deepEqual(
          ids(
            await storage.assistants.listVersions('a1', { metadata: { team: 'blue' }, limit: 10, offset: 0 }),
            'version',
          ),
          [1],
        );
        assert.deepEqual(ids(await storage.assistants.listVersions('a1', { limit: 1, offset: 1 }), 'version'), [1]);
        assert.deepEqual(await storage.assistants.listVersions('a1', { limit: 10, offset: 5 }), []);
        assert.equal(await storage.assistants.getVersion('a1', 3), undefined);
      }),
    );

    it(
      'searches assistants by graph, name and metadata, sorted and paged, with the total',
      withDatabase(async (storage) => {
        await storage.assistants.insert(
          assistant('a1', { name: 'alpha', metadata: { team: 'blue' }, created_at: at(1) }),
        );
        await storage.assistants.insert(assistant('a2', { name: 'beta', graph_id: 'other', created_at: at(2) }));
        await storage.assistants.insert(
          assistant('a3', { name: 'alphabet', metadata: { team: 'blue', x: { y: 1 } }, created_at: at(3) }),
        );
        const query = { limit: 10, offset: 0, sort_by: 'created_at', sort_order: 'desc' } as const;
        assert.deepEqual(ids((await storage.assistants.search(query)).items, 'assistant_id'), ['a3', 'a2', 'a1']);
        assert.deepEqual(
          ids((await storage.assistants.search({ ...query, graph_id: 'agent' })).items, 'assistant_id'),
          ['a3', 'a1'],
        );
        assert.deepEqual(
          ids((await storage.assistants.search({ ...query, name: 'ALPHA' })).items, 'assistant_id'),
          ['a3', 'a1'],
          'name is a case-insensitive substring',
        );
        assert.deepEqual(
          ids((await storage.assistants.search({ ...query, metadata: { x: { y: 1 } } })).items, 'assistant_id'),
          ['a3'],
        );
        const byName = await storage.assistants.search({ ...query, sort_by: 'name', sort_order: 'asc', limit: 2 });
        assert.deepEqual(ids(byName.items, 'assistant_id'), ['a1', 'a3']);
        assert.equal(byName.total, 3, 'the total counts every match, not the page');
        const paged = await storage.assistants.search({ ...query, limit: 1, offset: 1 });
        assert.deepEqual(ids(paged.items, 'assistant_id'), ['a2']);
        assert.equal(paged.total, 3);
        const auth = await storage.assistants.search({ ...query, auth: { team: 'blue' } });
        assert.deepEqual(ids(auth.items, 'assistant_id'), ['a3', 'a1']);
      }),
    );

    it(
      'deletes an assistant with its versions, runs and crons',
      withDatabase(async (storage) => {
        await storage.assistants.insert(assistant('a1'));
        await storage.assistants.insert(assistant('a2'));
        await storage.threads.insert(thread('t1'));
        await storage.runs.insert(run('r1', 't1', { assistant_id: 'a1' }));
        await storage.runs.insert(run('r2', 't1', { assistant_id: 'a2' }));
        await storage.crons.insert(cron('c1', { assistant_id: 'a1' }));
        await storage.crons.insert(cron('c2', { assistant_id: 'a2' }));
        assert.equal(await storage.assistants.delete('a1'), true);
        assert.equal(await storage.assistants.delete('a1'), false);
        assert.equal(await storage.assistants.get('a1'), undefined);
        assert.equal(await storage.assistants.getVersion('a1', 1), undefined);
        assert.equal(await storage.runs.get('r1'), undefined);
        assert.equal(await storage.crons.get('c1'), undefined);
        assert.ok(await storage.runs.get('r2'));
        assert.ok(await storage.crons.get('c2'));
        assert.ok(await storage.threads.get('t1'), 'threads stay');
      }),
    );

    it(
      'keeps threads as written and searches them by ids, status, metadata and values',
      withDatabase(async (storage) => {
        const busy = thread('t1', {
          status: 'busy',
          metadata: { assistant_id: 'a1', graph_id: 'agent' },
          config: { configurable: { user: 'u' } },
          values: { messages: [{ role: 'user', content: 'hi' }] },
          interrupts: { task: [{ value: 'ask', id: 'i1' }] },
          created_at: at(1),
          updated_at: at(9),
        });
        await storage.threads.insert(busy);
        await storage.threads.insert(thread('t2', { metadata: { assistant_id: 'a2' }, created_at: at(2) }));
        await storage.threads.insert(thread('t3', { values: { done: true }, created_at: at(3), updated_at: at(3) }));
        assert.deepEqual(await storage.threads.get('t1'), busy);
        assert.deepEqual(
          await storage.threads.get('t2'),
          thread('t2', { metadata: { assistant_id: 'a2' }, created_at: at(2) }),
        );
        const query = { limit: 10, offset: 0, sort_by: 'created_at', sort_order: 'asc' } as const;
        assert.deepEqual(ids((await storage.threads.search(query)).items, 'thread_id'), ['t1', 't2', 't3']);
        assert.deepEqual(ids((await storage.threads.search({ ...query, ids: ['t3', 't1'] })).items, 'thread_id'), [
          't1',
          't3',
        ]);
        assert.deepEqual(ids((await storage.threads.search({ ...query, status: 'idle' })).items, 'thread_id'), [
          't2',
          't3',
        ]);
        assert.deepEqual(
          ids((await storage.threads.search({ ...query, metadata: { assistant_id: 'a1' } })).items, 'thread_id'),
          ['t1'],
        );
        assert.deepEqual(
          ids((await storage.threads.search({ ...query, values: { done: true } })).items, 'thread_id'),
          ['t3'],
          'a values filter never matches a thread without values',
        );
        const page = await storage.threads.search({ ...query, sort_by: 'updated_at', sort_order: 'desc', limit: 2 });
        assert.deepEqual(ids(page.items, 'thread_id'), ['t1', 't3']);
        assert.equal(page.total, 3);
        // A page that does not reach the end reports one match more than it reaches, not all of them.
        const first = await storage.threads.search({ ...query, limit: 1 });
        assert.deepEqual([ids(first.items, 'thread_id'), first.total], [['t1'], 2]);
        assert.equal((await storage.threads.search({ ...query, limit: 0 })).total, 3, 'a count counts every match');
        const past = await storage.threads.search({ ...query, limit: 2, offset: 5 });
        assert.deepEqual([past.items, past.total], [[], 3], 'a page past the end counts the matches');
        assert.deepEqual(await storage.threads.idsOfAssistant('a1'), ['t1']);
        await storage.threads.update({
          ...busy,
          status: 'interrupted',
          values: null,
          interrupts: null,
          updated_at: at(20),
        });
        assert.deepEqual(await storage.threads.get('t1'), {
          ...busy,
          status: 'interrupted',
          values: null,
          interrupts: null,
          updated_at: at(20),
        });
      }),
    );

    it(
      'deletes a thread with its runs and crons',
      withDatabase(async (storage) => {
        await storage.threads.insert(thread('t1'));
        await storage.threads.insert(thread('t2'));
        await storage.runs.insert(run('r1', 't1'));
        await storage.runs.insert(run('r2', 't2'));
        await storage.crons.insert(cron('c1', { thread_id: 't1', on_run_completed: null }));
        await storage.crons.insert(cron('c2', { thread_id: 't2', on_run_completed: null }));
        assert.equal(await storage.threads.delete('t1'), true);
        assert.equal(await storage.threads.delete('t1'), false);
        assert.equal(await storage.runs.get('r1'), undefined);
        assert.equal(await storage.crons.get('c1'), undefined);
        assert.ok(await storage.runs.get('r2'));
        assert.ok(await storage.crons.get('c2'));
      }),
    );

    it(
      'keeps runs as written and lists them per thread, oldest first',
      withDatabase(async (storage) => {
        await storage.threads.insert(thread('t1'));
        const failed = run('r1', 't1', {
          status: 'error',
          error: { error: 'ValueError', message: 'bad' },
          metadata: { source: 'cron' },
          temporary: true,
          attempt: 2,
          multitask_strategy: 'reject',
        });
        await storage.runs.insert(failed);
        await storage.runs.insert(run('r2', 't1', { status: 'running', created_at: at(1) }));
        await storage.runs.insert(run('r3', 't1', { created_at: at(2) }));
        await storage.runs.insert(run('other', 't2'));
        assert.deepEqual(await storage.runs.get('r1'), failed);
        assert.deepEqual(ids(await storage.runs.list('t1', { limit: 10, offset: 0 }), 'run_id'), ['r1', 'r2', 'r3']);
        assert.deepEqual(ids(await storage.runs.list('t1', { limit: 1, offset: 1 }), 'run_id'), ['r2']);
        assert.deepEqual(ids(await storage.runs.list('t1', { status: 'pending', limit: 10, offset: 0 }), 'run_id'), [
          'r3',
        ]);
        assert.deepEqual(
          ids(await storage.runs.list('t1', { metadata: { source: 'cron' }, limit: 10, offset: 0 }), 'run_id'),
          ['r1'],
        );
        assert.deepEqual(ids(await storage.runs.inflight('t1'), 'run_id'), ['r2', 'r3']);
        assert.deepEqual(ids(await storage.runs.withStatus('pending'), 'run_id'), ['r3', 'other']);
        const updated = { ...failed, status: 'success' as const, error: null, attempt: 3, updated_at: at(30) };
        await storage.runs.update(updated);
        assert.deepEqual(await storage.runs.get('r1'), updated);
        assert.equal(await storage.runs.delete('r1'), true);
        assert.equal(await storage.runs.delete('r1'), false);
        assert.equal(await storage.runs.get('r1'), undefined);
      }),
    );

    it(
      'claims the oldest due run, one running run per thread, in order within a thread',
      withDatabase(async (storage) => {
        const now = at(100);
        await storage.runs.insert(run('r1', 't1', { created_at: at(1) }));
        await storage.runs.insert(run('r2', 't1', { created_at: at(2) }));
        await storage.runs.insert(run('r3', 't2', { created_at: at(3) }));
        await storage.runs.insert(run('r4', 't3', { created_at: at(4) }));
        await storage.runs.insert(run('later', 't4', { created_at: at(500) }));
        const first = await storage.runs.claimNext('w1', LEASE_MS, now, new Set());
        assert.equal(first?.run_id, 'r1');
        assert.equal(first?.status, 'running');
        assert.equal(first?.attempt, 1);
        assert.equal(first?.updated_at, now);
        assert.deepEqual(await storage.runs.get('r1'), first);
        // r2 waits for r1 (same thread); r3 is excluded; r4 is next; `later` is not due.
        assert.equal((await storage.runs.claimNext('w1', LEASE_MS, now, new Set(['r3'])))?.run_id, 'r4');
        assert.equal((await storage.runs.claimNext('w1', LEASE_MS, now, new Set()))?.run_id, 'r3');
        assert.equal(await storage.runs.claimNext('w1', LEASE_MS, now, new Set()), undefined);
        assert.equal(await storage.runs.nextDue(now), at(500));
        await storage.runs.update({ ...first!, status: 'success' });
        assert.equal((await storage.runs.claimNext('w1', LEASE_MS, now, new Set()))?.run_id, 'r2');
        assert.equal((await storage.runs.claimNext('w1', LEASE_MS, at(600), new Set()))?.run_id, 'later');
        assert.equal(await storage.runs.nextDue(at(600)), undefined);
      }),
    );

    it(
      'gives each pending run to exactly one claimer, across handles on one database',
      withDatabase(async (storage, database) => {
        const count = 12;
        for (let i = 0; i < count; i++) await storage.runs.insert(run(`r${i}`, `t${i}`, { created_at: at(i) }));
        const other = await database.openAnother();
        try {
          const claims = await Promise.all(
            Array.from({ length: count * 2 }, (_, i) =>
              (i % 2 ? other : storage).runs.claimNext(`w${i % 2}`, LEASE_MS, at(100), new Set()),
            ),
          );
          const claimed = claims.filter((claim) => claim !== undefined).map((claim) => claim.run_id);
          assert.equal(claimed.length, count);
          assert.equal(new Set(claimed).size, count, 'no run claimed twice');
          for (const claim of claims) if (claim) assert.equal(claim.attempt, 1);
        } finally {
          await other.close();
        }
      }),
    );

    it(
      'gives the claimer a lease that only it renews, and reclaims the run once the lease expires',
      withDatabase(async (storage) => {
        await storage.runs.insert(run('r1', 't1', { created_at: at(1) }));
        await storage.runs.insert(run('r2', 't2', { created_at: at(2) }));
        assert.equal((await storage.runs.claimNext('A', LEASE_MS, at(100), new Set()))?.run_id, 'r1');
        assert.equal((await storage.runs.claimNext('B', LEASE_MS, at(100), new Set()))?.run_id, 'r2');
        // Both leases run until at(130): nothing to reclaim before.
        assert.deepEqual(await storage.runs.reclaimExpired(at(129), RESTART), []);
        // Only the owner extends its lease; unknown and other owners' runs are left out.
        assert.deepEqual(await storage.runs.renewLeases('A', ['r1', 'r2', 'nope'], LEASE_MS, at(120)), ['r1']);
        assert.deepEqual(await storage.runs.renewLeases('B', ['r1'], LEASE_MS, at(120)), []);
        assert.deepEqual(await storage.runs.renewLeases('A', [], LEASE_MS, at(120)), []);
        const reclaimed = await storage.runs.reclaimExpired(at(130), RESTART);
        assert.deepEqual(ids(reclaimed, 'run_id'), ['r2']);
        assert.equal(reclaimed[0]!.status, 'error');
        assert.deepEqual(reclaimed[0]!.error, RESTART);
        assert.deepEqual(await storage.runs.get('r2'), reclaimed[0]);
        assert.equal((await storage.runs.get('r1'))?.status, 'running', 'renewed until at(150)');
        // A reclaimed run is no longer its former owner's to renew.
        assert.deepEqual(await storage.runs.renewLeases('B', ['r2'], LEASE_MS, at(131)), []);
        assert.deepEqual(await storage.runs.reclaimExpired(at(149), RESTART), []);
        assert.deepEqual(ids(await storage.runs.reclaimExpired(at(150), RESTART), 'run_id'), ['r1']);
        assert.deepEqual(await storage.runs.reclaimExpired(at(500), RESTART), [], 'each run once');
        // A finished run keeps its status whatever its lease said.
        await storage.runs.insert(run('r3', 't3', { created_at: at(3) }));
        const claimed = (await storage.runs.claimNext('A', LEASE_MS, at(600), new Set()))!;
        await storage.runs.update({ ...claimed, status: 'success' });
        assert.deepEqual(await storage.runs.reclaimExpired(at(9000), RESTART), []);
        assert.equal((await storage.runs.get('r3'))?.status, 'success');
      }),
    );

    it(
      'reclaims running runs with no lease at once, and live leases only when asked for every lease',
      withDatabase(async (storage) => {
        // Left running by a server older than leases: no lease recorded.
        await storage.runs.insert(run('old', 't1', { status: 'running', attempt: 1 }));
        await storage.runs.insert(run('live', 't2', { created_at: at(1) }));
        await storage.runs.insert(run('queued', 't3', { created_at: at(2) }));
        assert.equal((await storage.runs.claimNext('A', LEASE_MS, at(100), new Set(['queued'])))?.run_id, 'live');
        assert.deepEqual(ids(await storage.runs.reclaimExpired(at(100), RESTART), 'run_id'), ['old']);
        assert.equal((await storage.runs.get('live'))?.status, 'running', 'a live lease is never reclaimed');
        assert.equal((await storage.runs.get('queued'))?.status, 'pending', 'pending runs are not touched');
        // One server per database, starting: whoever held the live lease is gone.
        assert.deepEqual(ids(await storage.runs.reclaimExpired(at(101), RESTART, { everyLease: true }), 'run_id'), [
          'live',
        ]);
        assert.equal((await storage.runs.get('queued'))?.status, 'pending');
      }),
    );

    it(
      'reclaims each expired run exactly once, across handles on one database',
      withDatabase(async (storage, database) => {
        const count = 12;
        for (let i = 0; i < count; i++) await storage.runs.insert(run(`r${i}`, `t${i}`, { created_at: at(i) }));
        for (let i = 0; i < count; i++) await storage.runs.claimNext(`w${i % 3}`, LEASE_MS, at(100), new Set());
        await storage.runs.insert(run('renewed', 'tr', { created_at: at(50) }));
        await storage.runs.claimNext('w0', LEASE_MS, at(200), new Set());
        const other = await database.openAnother();
        try {
          const sweeps = await Promise.all(
            Array.from({ length: 6 }, (_, i) =>
              (i % 2 ? other : storage).runs.reclaimExpired(at(200), { error: 'ServerRestart', message: `by ${i}` }),
            ),
          );
          const reclaimed = sweeps.flatMap((sweep) => ids(sweep, 'run_id'));
          assert.equal(reclaimed.length, count);
          assert.equal(new Set(reclaimed).size, count, 'no run reclaimed twice');
          assert.ok(!reclaimed.includes('renewed'));
          // Each run records the error of the one sweep that settled it.
          for (const [i, sweep] of sweeps.entries()) {
            for (const settled of sweep) {
              assert.deepEqual((await other.runs.get(settled.run_id))?.error, {
                error: 'ServerRestart',
                message: `by ${i}`,
              });
            }
          }
        } finally {
          await other.close();
        }
      }),
    );

    it(
      'keeps crons as written and searches them by assistant, thread, enabled and metadata',
      withDatabase(async (storage) => {
        const full = cron('c1', {
          thread_id: 't1',
          on_run_completed: null,
          end_time: at(9000),
          timezone: 'Europe/Paris',
          user_id: 'u1',
          payload: { assistant_id: 'a1', input: { q: 1 } },
          metadata: { owner: 'u1' },
          auth: { user: { identity: 'u1', role: 'admin' }, scopes: ['crons:write'] },
          created_at: at(1),
        });
        await storage.crons.insert(full);
        await storage.crons.insert(cron('c2', { assistant_id: 'a2', enabled: false, created_at: at(2) }));
        await storage.crons.insert(cron('c3', { next_run_date: null, created_at: at(3) }));
        assert.deepEqual(await storage.crons.get('c1'), full);
        const query = { limit: 10, offset: 0, sort_by: 'created_at', sort_order: 'asc' } as const;
        assert.deepEqual(ids((await storage.crons.search(query)).items, 'cron_id'), ['c1', 'c2', 'c3']);
        assert.deepEqual(ids((await storage.crons.search({ ...query, assistant_id: 'a1' })).items, 'cron_id'), [
          'c1',
          'c3',
        ]);
        assert.deepEqual(ids((await storage.crons.search({ ...query, thread_id: 't1' })).items, 'cron_id'), ['c1']);
        assert.deepEqual(ids((await storage.crons.search({ ...query, enabled: false })).items, 'cron_id'), ['c2']);
        assert.deepEqual(ids((await storage.crons.search({ ...query, metadata: { owner: 'u1' } })).items, 'cron_id'), [
          'c1',
        ]);
        const page = await storage.crons.search({ ...query, sort_order: 'desc', limit: 1, offset: 1 });
        assert.deepEqual(ids(page.items, 'cron_id'), ['c2']);
        assert.equal(page.total, 3);
        const changed = { ...full, schedule: '0 * * * *', enabled: false, metadata: {}, auth: null, updated_at: at(7) };
        await storage.crons.update(changed);
        assert.deepEqual(await storage.crons.get('c1'), changed);
        assert.equal(await storage.crons.delete('c1'), true);
        assert.equal(await storage.crons.delete('c1'), false);
      }),
    );

    it(
      'lists due crons earliest first and the next wake-up, skipping disabled and ended ones',
      withDatabase(async (storage) => {
        await storage.crons.insert(cron('late', { next_run_date: at(50) }));
        await storage.crons.insert(cron('early', { next_run_date: at(10) }));
        await storage.crons.insert(cron('off', { next_run_date: at(5), enabled: false }));
        await storage.crons.insert(cron('ended', { next_run_date: at(6), end_time: at(5) }));
        await storage.crons.insert(cron('future', { next_run_date: at(500) }));
        await storage.crons.insert(cron('never', { next_run_date: null }));
        assert.deepEqual(ids(await storage.crons.due(at(100), 10), 'cron_id'), ['early', 'late']);
        assert.deepEqual(ids(await storage.crons.due(at(100), 1), 'cron_id'), ['early']);
        assert.deepEqual(await storage.crons.due(at(1), 10), []);
        assert.equal(await storage.crons.earliestRun(), at(10));
      }),
    );

    it(
      'gives each cron tick to exactly one claimer, across handles on one database',
      withDatabase(async (storage, database) => {
        await storage.crons.insert(cron('c1', { next_run_date: at(60) }));
        const other = await database.openAnother();
        try {
          const results = await Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              (i % 2 ? other : storage).crons.claimTick('c1', at(60), at(120), at(61)),
            ),
          );
          assert.equal(results.filter(Boolean).length, 1);
          const claimed = await storage.crons.get('c1');
          assert.equal(claimed?.next_run_date, at(120));
          assert.equal(claimed?.updated_at, at(61));
          // A stale expectation, a missing cron and a disabled one claim nothing.
          assert.equal(await other.crons.claimTick('c1', at(60), at(120), at(62)), false);
          assert.equal(await storage.crons.claimTick('missing', at(60), at(120), at(62)), false);
          await storage.crons.update({ ...claimed!, enabled: false });
          assert.equal(await storage.crons.claimTick('c1', at(120), at(180), at(121)), false);
          await storage.crons.update({ ...claimed!, enabled: true });
          assert.equal(await storage.crons.claimTick('c1', at(120), null, at(121)), true, 'the last tick');
          assert.equal((await storage.crons.get('c1'))?.next_run_date, null);
        } finally {
          await other.close();
        }
      }),
    );

    it(
      'commits a transaction as a whole, and rolls a failed one back entirely',
      withDatabase(async (storage) => {
        await storage.crons.insert(cron('c1', { next_run_date: at(60) }));
        const failure = new Error('boom');
        await assert.rejects(
          storage.transaction(async (tx) => {
            assert.equal(await tx.crons.claimTick('c1', at(60), at(120), at(61)), true);
            await tx.threads.insert(thread('t1'));
            await tx.runs.insert(run('r1', 't1'));
            assert.ok(await tx.runs.get('r1'), 'a transaction reads its own writes');
            throw failure;
          }),
          (error) => error === failure,
        );
        assert.equal(await storage.threads.get('t1'), undefined);
        assert.equal(await storage.runs.get('r1'), undefined);
        assert.equal((await storage.crons.get('c1'))?.next_run_date, at(60), 'the tick is claimable again');
        const result = await storage.transaction(async (tx) => {
          assert.equal(await tx.crons.claimTick('c1', at(60), at(120), at(61)), true);
          await tx.threads.insert(thread('t1'));
          await tx.runs.insert(run('r1', 't1'));
          return 'done';
        });
        assert.equal(result, 'done');
        assert.ok(await storage.threads.get('t1'));
        assert.ok(await storage.runs.get('r1'));
        assert.equal((await storage.crons.get('c1'))?.next_run_date, at(120));
        // The storage is usable after both.
        await storage.transaction(async (tx) => tx.threads.insert(thread('t2')));
        assert.ok(await storage.threads.get('t2'));
      }),
    );

    it(
      'runs transactions as if one at a time: a read-then-write is not interleaved',
      // One handle: a server's concurrent requests share its storage. (Two SQLite handles in one
      // process cannot both hold transactions open across awaits: the second would wait for the
      // write lock synchronously, blocking the first. Processes have one handle each.)
      withDatabase(async (storage) => {
        await storage.threads.insert(thread('t1', { metadata: { n: 0 } }));
        const increment = () =>
          storage.transaction(async (tx) => {
            const current = (await tx.threads.get('t1'))!;
            // Yield between the read and the write, as domain code awaiting other work does.
            await new Promise((resolve) => setTimeout(resolve, 2));
            await tx.threads.update({ ...current, metadata: { n: Number(current.metadata.n) + 1 } });
          });
        await Promise.all(Array.from({ length: 8 }, () => increment()));
        assert.deepEqual((await storage.threads.get('t1'))?.metadata, { n: 8 });
      }),
    );

    it(
      'truncates runs, threads and assistants, keeping the assistants named',
      withDatabase(async (storage) => {
        await storage.assistants.insert(assistant('system'));
        await storage.assistants.insert(assistant('user'));
        await storage.threads.insert(thread('t1'));
        await storage.runs.insert(run('r1', 't1'));
        await storage.truncate({ runs: true }, new Set());
        assert.equal(await storage.runs.get('r1'), undefined);
        assert.ok(await storage.threads.get('t1'));
        await storage.runs.insert(run('r2', 't1'));
        await storage.truncate({ threads: true }, new Set());
        assert.equal(await storage.threads.get('t1'), undefined);
        assert.equal(await storage.runs.get('r2'), undefined, 'runs go with their threads');
        await storage.truncate({ assistants: true }, new Set(['system']));
        assert.ok(await storage.assistants.get('system'));
        assert.equal(await storage.assistants.get('user'), undefined);
        assert.equal(await storage.assistants.getVersion('user', 1), undefined);
      }),
    );

    it(
      'closes idempotently',
      withDatabase(async (_storage, database) => {
        const other = await database.openAnother();
        await other.close();
        await other.close();
      }),
    );
  });
}
