// The agent server's storage at scale: fills threads (each with a run and a store item, a cron
// every tenth; `plugins/receivers/agent_api/testing/seed.ts`) with bulk SQL on each backend, then
// times the searches a chat UI and a store client make, through the storage and store the server
// uses, and prints p50/p99 per search and size, the load average beside them, and this process's
// RSS after the searches.
//
//   node --import tsx bench/agent/data-scale.ts [--sizes 10000,100000,1000000] [--backends sqlite,postgres]
//                                               [--searches 25] [--owners 16]
//                                               [--database-uri postgres://postgres@127.0.0.1:5432/postgres]
//
// Every size gets a fresh SQLite directory and a fresh PostgreSQL database (created, then dropped).

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStorage } from '../../plugins/receivers/agent_api/internal/storage/postgres.ts';
import { openSqliteStorage } from '../../plugins/receivers/agent_api/internal/storage/sqlite.ts';
import type { Storage, ThreadQuery } from '../../plugins/receivers/agent_api/internal/storage/storage.ts';
import { SqliteStore } from '../../plugins/receivers/agent_api/internal/storage/store/sqlite.ts';
import type { ServerStore } from '../../plugins/receivers/agent_api/internal/storage/store.ts';
import { PostgresItemStore } from '../../plugins/receivers/agent_api/internal/storage/store/postgres.ts';
import { seedPostgres, seedSqlite, seeded } from '../../plugins/receivers/agent_api/testing/seed.ts';

const { values: options } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    backends: { type: 'string', default: 'sqlite,postgres' },
    searches: { type: 'string', default: '25' },
    owners: { type: 'string', default: '16' },
    'database-uri': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});

const owners = Number(options.owners);
const owner = (i: number) => seeded.owner((i * 7) % owners);
const page = { limit: 10, offset: 0, sort_by: 'created_at', sort_order: 'desc' } as const;

/** The thread searches timed: a page of 10 each, as a thread list asks for them, and a count. */
const THREAD_SEARCHES: Record<string, (i: number) => ThreadQuery> = {
  latest: () => page,
  owner: (i) => ({ ...page, metadata: { owner: owner(i) } }),
  'status+offset': () => ({ ...page, offset: 40, status: 'idle' }),
  'owner count': (i) => ({ ...page, limit: 0, metadata: { owner: owner(i) } }),
};

/** The store's searches timed: an owner's newest items, and the namespaces under `users`. */
const STORE_SEARCHES: Record<string, (store: ServerStore, i: number) => Promise<unknown>> = {
  'store items': (store, i) => store.search(['users', owner(i)], { limit: 10 }),
  'store namespaces': (store) => store.listNamespaces({ prefix: ['users'], maxDepth: 2, limit: 10, offset: 5 }),
};

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const load = () => `load ${loadavg()[0]!.toFixed(1)}`;

function report(backend: string, size: number, what: string): void {
  console.log(`${backend.padEnd(9)} ${String(size).padStart(8)} threads  ${what}`);
}

async function time(
  backend: string,
  size: number,
  name: string,
  searches: number,
  search: (i: number) => Promise<unknown>,
): Promise<void> {
  await search(0); // warm the statement and the pages it reads
  const times: number[] = [];
  for (let i = 1; i <= searches; i++) {
    const start = process.hrtime.bigint();
    await search(i);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const [p50, p99] = [percentile(times, 50), percentile(times, 99)].map((ms) => ms.toFixed(2).padStart(8));
  report(backend, size, `${name.padEnd(16)} p50 ${p50} ms  p99 ${p99} ms  ${load()}`);
}

async function measure(backend: string, size: number, storage: Storage, store: ServerStore, searches: number) {
  for (const [name, query] of Object.entries(THREAD_SEARCHES))
    await time(backend, size, name, searches, (i) => storage.threads.search(query(i)));
  for (const [name, search] of Object.entries(STORE_SEARCHES))
    await time(backend, size, name, searches, (i) => search(store, i));
  report(backend, size, `rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
}

async function onSqlite(size: number, searches: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'data-scale-'));
  try {
    const started = Date.now();
    const [agentPath, storePath] = [join(dir, 'agent.sqlite'), join(dir, 'store.sqlite')];
    await openSqliteStorage(agentPath).close();
    await new SqliteStore(storePath).close();
    const [agent, items] = [new Database(agentPath), new Database(storePath)];
    try {
      seedSqlite(agent, items, { threads: size, owners });
    } finally {
      agent.close();
      items.close();
    }
    report('sqlite', size, `filled in ${((Date.now() - started) / 1000).toFixed(0)} s  ${load()}`);
    const storage = openSqliteStorage(agentPath);
    const store = new SqliteStore(storePath);
    try {
      await measure('sqlite', size, storage, store, searches);
    } finally {
      await storage.close();
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onPostgres(size: number, searches: number): Promise<void> {
  const name = `data_scale_${Date.now()}`;
  const admin = new pg.Client({ connectionString: options['database-uri'] });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const uri = new URL(options['database-uri']);
  uri.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: uri.toString(), max: 4 });
  pool.on('error', () => undefined); // connections the database's drop ends
  try {
    const started = Date.now();
    await (await openPostgresStorage(uri.toString())).close();
    await seedPostgres(pool, { threads: size, owners });
    report('postgres', size, `filled in ${((Date.now() - started) / 1000).toFixed(0)} s  ${load()}`);
    const storage = await openPostgresStorage(uri.toString());
    try {
      await measure('postgres', size, storage, new PostgresItemStore(pool), searches);
    } finally {
      await storage.close();
    }
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

const searches = Number(options.searches);
for (const size of options.sizes.split(',').map(Number)) {
  for (const backend of options.backends.split(',')) {
    await (backend === 'sqlite' ? onSqlite(size, searches) : onPostgres(size, searches));
  }
}
