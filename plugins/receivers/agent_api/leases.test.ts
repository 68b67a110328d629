// Run leases across instances, at the level of the storage and the worker pool: several pools, each
// with its own owner name and its own storage handle on one database (SQLite file, and PostgreSQL
// when TEST_POSTGRES_URI answers), as server processes sharing it have. A pool whose renewals stop
// (a process killed with -9: nothing settles its runs) loses its runs to another instance's
// recovery once the lease has expired; a pool that keeps renewing never does. The clock is the
// tests' own and the lease an hour long, so no real timer fires and nothing sleeps: renewals and
// sweeps are called by the test at the moments it chooses.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { eventually } from 'tracepipe/testing';
import { silentLogger } from 'tracepipe';
import { isoOf } from './internal/api/clock.ts';
import { StreamBroker } from './internal/runs/broker.ts';
import type { StopReason } from './internal/runs/graph-runner.ts';
import { RESTART_ERROR, RunRecovery } from './internal/runs/recovery.ts';
import { WorkerPool } from './internal/runs/worker-pool.ts';
import type { RunExecutor } from './internal/runs/worker-pool.ts';
import { openPostgresStorage } from './internal/storage/postgres.ts';
import { openSqliteStorage } from './internal/storage/sqlite.ts';
import type { RunRecord, Storage } from './internal/storage/storage.ts';
import { run, thread } from './testing/storage-contract.ts';

const HOUR = 3_600_000;
const LEASE_MS = HOUR;
const T0 = Date.parse('2024-05-01T10:00:00.000Z');

/** A runner that holds each run until the test releases it, or until it is aborted. */
class HeldRunner implements RunExecutor {
  readonly started: string[] = [];
  readonly aborted: { runId: string; reason: StopReason }[] = [];
  private readonly held = new Map<string, () => void>();
  private released = false;

  execute(record: RunRecord): Promise<boolean> {
    this.started.push(record.run_id);
    if (this.released) return Promise.resolve(false);
    return new Promise((resolve) => this.held.set(record.run_id, () => resolve(false)));
  }

  abort(runId: string, reason: StopReason): boolean {
    const release = this.held.get(runId);
    if (!release) return false;
    this.aborted.push({ runId, reason });
    this.held.delete(runId);
    release();
    return true;
  }

  /** Ends every run held, and any run started from now on at once. */
  releaseAll(): void {
    this.released = true;
    for (const release of this.held.values()) release();
    this.held.clear();
  }
}

/** Handles on one fresh database, as separate processes would have; `drop` closes them and removes it. */
interface Database {
  open(): Promise<Storage>;
  drop(): Promise<void>;
}

function sqliteDatabase(): Database {
  const dir = mkdtempSync(join(tmpdir(), 'agent-api-leases-'));
  const handles: Storage[] = [];
  return {
    open: async () => {
      const handle = openSqliteStorage(join(dir, 'agent.sqlite'));
      handles.push(handle);
      return handle;
    },
    drop: async () => {
      for (const handle of handles) await handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const ADMIN_URI = process.env.TEST_POSTGRES_URI ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URI, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const postgresAvailable = await admin(async () => true).catch(() => false);

async function postgresDatabase(): Promise<Database> {
  const name = `agent_api_leases_${randomUUID().replaceAll('-', '')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const uri = new URL(ADMIN_URI);
  uri.pathname = `/${name}`;
  const handles: Storage[] = [];
  return {
    open: async () => {
      const handle = await openPostgresStorage(uri.toString(), { max: 4 });
      handles.push(handle);
      return handle;
    },
    drop: async () => {
      for (const handle of handles) await handle.close();
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** One server instance as far as runs go: its storage handle, worker pool (owner `name`) and recovery. */
function instance(storage: Storage, name: string, now: () => number, workers = 2) {
  const runner = new HeldRunner();
  const logger = silentLogger();
  const pool = new WorkerPool(storage, runner, workers, logger, { owner: name, leaseMs: LEASE_MS, now });
  const recovery = new RunRecovery({
    storage,
    broker: new StreamBroker({ maxEvents: 100, maxFinishedRuns: 100 }),
    leaseMs: LEASE_MS,
    logger,
    now,
    onReclaimed: () => pool.notify(),
  });
  return { name, storage, runner, pool, recovery };
}

function leaseCases(backend: string, create: () => Promise<Database>): void {
  describe(`agent_api run leases (${backend})`, () => {
    it('reclaims the run of an instance whose renewals stopped once its lease expired, never a renewed one', async () => {
      const database = await create();
      let clock = T0;
      const now = () => clock;
      const instances: ReturnType<typeof instance>[] = [];
      try {
        const seed = await database.open();
        const created = isoOf(T0 - 1000);
        for (const id of ['t-dies', 't-lives']) await seed.threads.insert(thread(id, { status: 'busy' }));
        await seed.runs.insert(run('cut-off', 't-dies', { created_at: created }));
        // Queued behind `cut-off` on the same thread: it may start once that one is settled.
        await seed.runs.insert(run('next', 't-dies', { created_at: isoOf(T0 - 500) }));

        // A takes `cut-off`, then C takes `kept` (inserted once A holds its run).
        // One worker for A: it holds `cut-off` until it is killed, so its idle worker cannot poll
        // `kept` away from C on a slow machine, nor take `next` once `cut-off` is reclaimed.
        const a = instance(await database.open(), 'A', now, 1);
        const b = instance(await database.open(), 'B', now);
        const c = instance(await database.open(), 'C', now);
        instances.push(a, b, c);
        a.pool.start();
        await eventually(() => assert.deepEqual(a.runner.started, ['cut-off']));
        await seed.runs.insert(run('kept', 't-lives', { created_at: created }));
        c.pool.start();
        await eventually(() => assert.deepEqual(c.runner.started, ['kept']));
        b.pool.start();

        // A is killed (-9): it renews no more, and nothing settles its run. C goes on renewing.
        clock = T0 + 0.6 * HOUR;
        await c.pool.renewLeases();
        clock = T0 + 0.9 * HOUR;
        assert.deepEqual(await b.recovery.reclaim(), [], 'no lease has expired yet');
        clock = T0 + 1.2 * HOUR;
        await c.pool.renewLeases();
        const reclaimed = await b.recovery.reclaim();
        assert.deepEqual(
          reclaimed.map((r) => r.run_id),
          ['cut-off'],
        );
        assert.deepEqual(await c.recovery.reclaim(), [], 'each run is reclaimed once');

        const settled = (await seed.runs.get('cut-off'))!;
        assert.equal(settled.status, 'error');
        assert.deepEqual(settled.error, RESTART_ERROR);
        // The thread records the failure and stays busy with its queued run, which now starts.
        assert.equal((await seed.threads.get('t-dies'))?.status, 'busy');
        await eventually(() => assert.ok(b.runner.started.includes('next') || c.runner.started.includes('next')));
        assert.equal((await seed.runs.get('next'))?.status, 'running');

        // The run whose owner renews is never reclaimed, however long it runs.
        for (let hour = 2; hour <= 5; hour++) {
          clock = T0 + (hour - 0.5) * HOUR;
          await c.pool.renewLeases();
          clock = T0 + hour * HOUR;
          for (const other of [a, b]) {
            assert.ok(!(await other.recovery.reclaim()).some((r) => r.run_id === 'kept'));
          }
        }
        assert.equal((await seed.runs.get('kept'))?.status, 'running');
        assert.deepEqual(c.runner.aborted, []);

        // Had A only stalled, its next renewal finds the run gone and stops executing it.
        assert.deepEqual(a.runner.aborted, []);
        await a.pool.renewLeases();
        assert.deepEqual(a.runner.aborted, [{ runId: 'cut-off', reason: 'lost' }]);
        assert.equal((await seed.runs.get('cut-off'))?.status, 'error', 'the first outcome stands');
      } finally {
        for (const { runner, pool, recovery } of instances) {
          runner.releaseAll();
          await recovery.stop();
          await pool.stop();
        }
        await database.drop();
      }
    });
  });
}

leaseCases('SQLite, one file', async () => sqliteDatabase());

if (postgresAvailable) {
  leaseCases('PostgreSQL', postgresDatabase);
} else {
  describe('agent_api run leases (PostgreSQL)', () => {
    it('needs a PostgreSQL server (TEST_POSTGRES_URI)', { skip: `no server at ${ADMIN_URI}` }, () => {});
  });
}
