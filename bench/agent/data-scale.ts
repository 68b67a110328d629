// The agent server's storage at scale: fills threads (each with a run, a cron every tenth, and a
// store item) with bulk SQL — not through the API, so that a million rows take minutes — on each
// backend, then times the searches a chat UI makes through the storage the server uses, and prints
// p50/p99 per search and size, and this process's RSS after the searches.
//
//   node --import tsx bench/agent/data-scale.ts [--sizes 10000,100000,1000000] [--backends sqlite,postgres]
//                                               [--searches 25]
//                                               [--database-uri postgres://postgres@127.0.0.1:5432/postgres]
//
// Every size gets a fresh SQLite file and a fresh PostgreSQL database (created, then dropped).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStorage } from '../../plugins/receivers/agent_api/internal/storage/postgres.ts';
import { openSqliteStorage } from '../../plugins/receivers/agent_api/internal/storage/sqlite.ts';
import type { Storage, ThreadQuery } from '../../plugins/receivers/agent_api/internal/storage/storage.ts';

const { values: options } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    backends: { type: 'string', default: 'sqlite,postgres' },
    searches: { type: 'string', default: '25' },
    'database-uri': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});

const OWNERS = 1000;
const METADATA_PAD = 'x'.repeat(1200);

/** The searches timed: a page of 10 each, as a thread list asks for them. */
const SEARCHES: Record<string, (i: number) => ThreadQuery> = {
  latest: () => ({ limit: 10, offset: 0, sort_by: 'created_at', sort_order: 'desc' }),
  owner: (i) => ({
    limit: 10,
    offset: 0,
    sort_by: 'created_at',
    sort_order: 'desc',
    metadata: { owner: `user-${(i * 37) % OWNERS}` },
  }),
  'status+offset': () => ({ limit: 10, offset: 40, sort_by: 'created_at', sort_order: 'desc', status: 'idle' }),
  count: (i) => ({ limit: 0, offset: 0, sort_by: 'created_at', sort_order: 'desc', metadata: { owner: `user-${i}` } }),
};

function fillSqlite(path: string, size: number): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const series = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${size - 1})`;
  db.exec(`
    ${series} INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts)
    SELECT printf('thread-%08d', i), printf('2024-01-01T%012d', i), printf('2024-01-01T%012d', i),
      json_object('owner', 'user-' || (i % ${OWNERS}), 'graph_id', 'chat', 'pad', '${METADATA_PAD}'),
      CASE i % 4 WHEN 0 THEN 'idle' WHEN 1 THEN 'busy' WHEN 2 THEN 'error' ELSE 'interrupted' END,
      '{}', json_object('topic', 'topic-' || (i % 300)), NULL FROM n;
    INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
      multitask_strategy, error, attempt, temporary)
    SELECT 'run-' || thread_id, thread_id, 'assistant-1', created_at, created_at, 'success', '{}', '{}', 'enqueue',
      NULL, 1, 0 FROM threads;
    INSERT INTO crons (cron_id, assistant_id, thread_id, end_time, schedule, created_at, updated_at, payload,
      next_run_date, metadata, enabled)
    SELECT 'cron-' || thread_id, 'assistant-1', thread_id, NULL, '0 * * * *', created_at, created_at, '{}',
      '2030-01-01T00:00:00.000Z', '{}', 1 FROM threads WHERE rowid % 10 = 0;
    ANALYZE;
  `);
  db.close();
}

async function fillPostgres(uri: string, size: number): Promise<void> {
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  try {
    await client.query(`
      INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts)
      SELECT 'thread-' || lpad(i::text, 8, '0'), '2024-01-01T' || lpad(i::text, 12, '0'), '2024-01-01T' || lpad(i::text, 12, '0'),
        jsonb_build_object('owner', 'user-' || (i % ${OWNERS}), 'graph_id', 'chat', 'pad', '${METADATA_PAD}'),
        (ARRAY['idle', 'busy', 'error', 'interrupted'])[i % 4 + 1], '{}',
        jsonb_build_object('topic', 'topic-' || (i % 300)), NULL
      FROM generate_series(0, ${size - 1}) i;
      INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
        multitask_strategy, error, attempt, temporary)
      SELECT 'run-' || thread_id, thread_id, 'assistant-1', created_at, created_at, 'success', '{}', '{}', 'enqueue',
        NULL, 1, false FROM threads;
      INSERT INTO store_items (namespace, key, value, created_at, updated_at)
      SELECT 'users.user-' || (i % ${OWNERS}), 'item-' || i, jsonb_build_object('n', i), '2024-01-01', '2024-01-01'
      FROM generate_series(0, ${size - 1}) i;
    `);
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function measure(backend: string, size: number, storage: Storage, searches: number): Promise<void> {
  for (const [name, query] of Object.entries(SEARCHES)) {
    await storage.searchThreads(query(0)); // warm the statement and the pages it reads
    const times: number[] = [];
    for (let i = 1; i <= searches; i++) {
      const start = process.hrtime.bigint();
      await storage.searchThreads(query(i));
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    times.sort((a, b) => a - b);
    console.log(
      `${backend.padEnd(9)} ${String(size).padStart(8)} threads  ${name.padEnd(14)} p50 ${percentile(times, 50).toFixed(2).padStart(8)} ms  p99 ${percentile(times, 99).toFixed(2).padStart(8)} ms`,
    );
  }
  console.log(
    `${backend.padEnd(9)} ${String(size).padStart(8)} threads  rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
  );
}

const searches = Number(options.searches);
for (const size of options.sizes.split(',').map(Number)) {
  for (const backend of options.backends.split(',')) {
    const started = Date.now();
    if (backend === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'data-scale-'));
      try {
        const path = join(dir, 'agent.sqlite');
        await openSqliteStorage(path).close();
        fillSqlite(path, size);
        console.log(
          `sqlite    ${String(size).padStart(8)} threads  filled in ${((Date.now() - started) / 1000).toFixed(0)} s`,
        );
        const storage = openSqliteStorage(path);
        await measure('sqlite', size, storage, searches);
        await storage.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    } else {
      const name = `data_scale_${Date.now()}`;
      const admin = new pg.Client({ connectionString: options['database-uri'] });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      const uri = new URL(options['database-uri']);
      uri.pathname = `/${name}`;
      try {
        await (await openPostgresStorage(uri.toString())).close();
        await fillPostgres(uri.toString(), size);
        console.log(
          `postgres  ${String(size).padStart(8)} threads  filled in ${((Date.now() - started) / 1000).toFixed(0)} s`,
        );
        const storage = await openPostgresStorage(uri.toString());
        await measure('postgres', size, storage, searches);
        await storage.close();
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      }
    }
  }
}
