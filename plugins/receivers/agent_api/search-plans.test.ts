// The searches use an index once a table has thousands of rows: the plans of the statements the
// storage runs (`internal/storage/search-queries.ts`, `store.ts`), as SQLite's `EXPLAIN QUERY PLAN`
// and PostgreSQL's `EXPLAIN (FORMAT JSON)` give them, on tables filled with bulk SQL. A plan passes
// when SQLite names an index for every table it reads, and when PostgreSQL reads no big table with
// a sequential scan. Also: paging stays consistent while rows are inserted, and a search does not
// read a large thread it does not return.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStorage } from './internal/storage/postgres.ts';
import { assistantSearch, cronSearch, runSearch, threadSearch } from './internal/storage/search-queries.ts';
import type { Statement } from './internal/storage/search-queries.ts';
import type { Dialect } from './internal/storage/sql-filters.ts';
import { registerSqliteFilterFunctions } from './internal/storage/sql-filters.ts';
import { openSqliteStorage } from './internal/storage/sqlite.ts';
import type { Storage } from './internal/storage/storage.ts';
import { STORE_MIGRATIONS, storeSearch } from './internal/storage/store.ts';
import { openSqliteFile } from './internal/storage/sqlite-file.ts';
import { freshDatabase, postgresAvailable } from './testing/postgres.ts';
import type { TestDatabase } from './testing/postgres.ts';
import { thread } from './testing/storage-contract.ts';
import { tempDir } from '../../../src/testkit/files.ts';

const THREADS = 5000;

/** The statements of the searches a chat UI, a run list, a cron list and the store make. */
function statements(dialect: Dialect): { name: string; statement: Statement }[] {
  const page = { limit: 10, offset: 0, sort_order: 'desc' as const };
  const threads = {
    latest: threadSearch(dialect, { ...page, sort_by: 'created_at' }),
    owner: threadSearch(dialect, { ...page, sort_by: 'created_at', metadata: { owner: 'user-7' } }),
    idle: threadSearch(dialect, { ...page, offset: 40, sort_by: 'created_at', status: 'idle' }),
    byId: threadSearch(dialect, { ...page, sort_by: 'thread_id', status: 'idle' }),
    updated: threadSearch(dialect, { ...page, sort_by: 'updated_at', auth: { owner: 'user-7' } }),
    values: threadSearch(dialect, { ...page, sort_by: 'created_at', values: { topic: 'topic-3' } }),
    ids: threadSearch(dialect, { ...page, sort_by: 'created_at', ids: ['thread-1', 'thread-2'] }),
  };
  const crons = {
    assistant: cronSearch(dialect, { ...page, sort_by: 'created_at', assistant_id: 'assistant-3' }),
    thread: cronSearch(dialect, { ...page, sort_by: 'created_at', thread_id: 'thread-9' }),
  };
  return [
    ...Object.entries(threads).flatMap(([name, search]) => [
      { name: `threads ${name}`, statement: search.page },
      { name: `threads ${name} count`, statement: search.count },
    ]),
    ...Object.entries(crons).flatMap(([name, search]) => [
      { name: `crons ${name}`, statement: search.page },
      { name: `crons ${name} count`, statement: search.count },
    ]),
    {
      name: 'assistants of a graph',
      statement: assistantSearch(dialect, { ...page, sort_by: 'created_at', graph_id: 'g' }).page,
    },
    { name: 'runs of a thread', statement: runSearch(dialect, 'thread-5', { limit: 10, offset: 0 }) },
    {
      name: 'runs of a thread by status',
      statement: runSearch(dialect, 'thread-5', { status: 'success', limit: 10, offset: 0 }),
    },
    { name: 'store items under a prefix', statement: storeSearch(dialect, ['users', 'user-7'], undefined, 10, 0) },
    { name: 'store items, newest', statement: storeSearch(dialect, [], undefined, 10, 0) },
  ];
}

const BIG_TABLES = new Set(['threads', 'runs', 'crons', 'store_items', 'thread_fields']);

describe('SQLite search plans', () => {
  let dir: string;
  let db: Database.Database;
  let store: Database.Database;

  before(async () => {
    dir = tempDir('agent-api-plans-');
    await openSqliteStorage(join(dir, 'agent.sqlite')).close();
    db = new Database(join(dir, 'agent.sqlite'));
    registerSqliteFilterFunctions(db);
    db.exec(`
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${THREADS - 1})
      INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts)
      SELECT 'thread-' || i, printf('2024-01-01T00:%05d', i), printf('2024-01-02T00:%05d', i),
        json_object('owner', 'user-' || (i % 500), 'n', i),
        CASE i % 4 WHEN 0 THEN 'idle' WHEN 1 THEN 'busy' WHEN 2 THEN 'error' ELSE 'interrupted' END,
        '{}', json_object('topic', 'topic-' || (i % 300)), NULL FROM n;
      INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
        multitask_strategy, error, attempt, temporary)
      SELECT 'run-' || thread_id, thread_id, 'assistant-1', created_at, created_at, 'success', '{}', '{}', 'enqueue',
        NULL, 1, 0 FROM threads;
      INSERT INTO crons (cron_id, assistant_id, thread_id, end_time, schedule, created_at, updated_at, payload,
        next_run_date, metadata, enabled)
      SELECT 'cron-' || thread_id, 'assistant-' || (rowid % 50), thread_id, NULL, '* * * * *', created_at, created_at,
        '{}', created_at, '{}', 1 FROM threads;
    `);
    db.exec('ANALYZE');
    store = openSqliteFile(join(dir, 'store.sqlite'), STORE_MIGRATIONS).db;
    store.exec(`
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${THREADS - 1})
      INSERT INTO store_items (namespace, key, value, created_at, updated_at)
      SELECT 'users.user-' || (i % 500), 'item-' || i, json_object('n', i), printf('2024-01-01T00:%05d', i),
        printf('2024-01-01T00:%05d', i) FROM n;
      ANALYZE;
    `);
  });

  after(() => {
    db?.close();
    store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`names an index for every table each search reads, with ${THREADS} threads`, () => {
    for (const { name, statement } of statements('sqlite')) {
      const target = name.startsWith('store') ? store : db;
      const plan = target.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`).all(...statement.params) as {
        detail: string;
      }[];
      const details = plan.map((row) => row.detail);
      for (const detail of details) {
        const scanned = /^(?:SCAN|SEARCH) (\w+)/.exec(detail)?.[1];
        if (scanned === undefined || scanned === 'json_each') continue;
        assert.match(
          detail,
          /USING (?:COVERING )?INDEX|USING (?:INTEGER )?PRIMARY KEY/,
          `${name}: ${details.join(' | ')}`,
        );
      }
      assert.ok(
        details.some((detail) => /INDEX|PRIMARY KEY/.test(detail)),
        `${name}: ${details.join(' | ')}`,
      );
    }
  });
});

const available = await postgresAvailable();

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)];
}

describe('PostgreSQL search plans', { skip: available ? false : 'no PostgreSQL server' }, () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let storage: Storage;

  before(async () => {
    database = await freshDatabase();
    storage = await openPostgresStorage(database.uri);
    pool = new pg.Pool({ connectionString: database.uri, max: 2 });
    pool.on('error', () => undefined);
    await pool.query(`
      INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts)
      SELECT 'thread-' || i, '2024-01-01T00:' || lpad(i::text, 5, '0'), '2024-01-02T00:' || lpad(i::text, 5, '0'),
        jsonb_build_object('owner', 'user-' || (i % 500), 'n', i),
        (ARRAY['idle', 'busy', 'error', 'interrupted'])[i % 4 + 1], '{}',
        jsonb_build_object('topic', 'topic-' || (i % 300)), NULL
      FROM generate_series(0, ${THREADS - 1}) i;
      INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
        multitask_strategy, error, attempt, temporary)
      SELECT 'run-' || thread_id, thread_id, 'assistant-1', created_at, created_at, 'success', '{}', '{}', 'enqueue',
        NULL, 1, false FROM threads;
      INSERT INTO crons (cron_id, assistant_id, thread_id, end_time, schedule, created_at, updated_at, payload,
        next_run_date, metadata, enabled)
      SELECT 'cron-' || thread_id, 'assistant-' || (hashtext(thread_id) & 49), thread_id, NULL, '* * * * *',
        created_at, created_at, '{}', created_at, '{}', true FROM threads;
      INSERT INTO store_items (namespace, key, value, created_at, updated_at)
      SELECT 'users.user-' || (i % 500), 'item-' || i, jsonb_build_object('n', i), '2024-01-01T00:' || lpad(i::text, 5, '0'),
        '2024-01-01T00:' || lpad(i::text, 5, '0') FROM generate_series(0, ${THREADS - 1}) i;
    `);
    await pool.query('VACUUM ANALYZE');
  });

  after(async () => {
    await storage?.close();
    await pool?.end();
    await database?.drop();
  });

  it(`reads no big table with a sequential scan, with ${THREADS} threads`, async () => {
    for (const { name, statement } of statements('postgres')) {
      const [row] = (await pool.query(`EXPLAIN (FORMAT JSON) ${statement.sql}`, statement.params)).rows as {
        'QUERY PLAN': { Plan: PlanNode }[];
      }[];
      const plan = nodes(row!['QUERY PLAN'][0]!.Plan);
      const scans = plan.filter(
        (node) => node['Node Type'] === 'Seq Scan' && BIG_TABLES.has(node['Relation Name'] ?? ''),
      );
      assert.deepEqual(
        scans.map((node) => node['Relation Name']),
        [],
        `${name}: ${plan.map((node) => `${node['Node Type']} ${node['Relation Name'] ?? ''}`).join(' | ')}`,
      );
    }
  });

  it('does not read a 1 MB thread that a search does not return', async () => {
    // Incompressible, so that it really takes 1 MB of TOAST pages.
    const big = Array.from({ length: 16_384 }, (_, i) => `${i.toString(36)}-${Math.random().toString(36)}`).join(' ');
    await storage.insertThread(
      thread('big', { metadata: { owner: 'someone-else', blob: big }, values: { blob: big } }),
    );
    await pool.query('ANALYZE threads');
    const search = threadSearch('postgres', {
      limit: 10,
      offset: 0,
      sort_by: 'created_at',
      sort_order: 'desc',
      metadata: { owner: 'user-7' },
    });
    const [row] = (await pool.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${search.page.sql}`, search.page.params))
      .rows as { 'QUERY PLAN': { Plan: PlanNode }[] }[];
    const top = row!['QUERY PLAN'][0]!.Plan;
    const blocks = (top['Shared Hit Blocks'] ?? 0) + (top['Shared Read Blocks'] ?? 0);
    assert.ok(blocks < 64, `the search read ${blocks} blocks; the large thread alone takes over 128`);
    const page = await storage.searchThreads({
      limit: 10,
      offset: 0,
      sort_by: 'created_at',
      sort_order: 'desc',
      metadata: { owner: 'user-7' },
    });
    assert.equal(page.total, THREADS / 500);
  });

  it('keeps paging consistent while threads are inserted', async () => {
    const query = {
      limit: 7,
      offset: 0,
      sort_by: 'created_at' as const,
      sort_order: 'asc' as const,
      metadata: { owner: 'user-11' },
    };
    const seen: string[] = [];
    for (let offset = 0; ; offset += query.limit) {
      const page = await storage.searchThreads({ ...query, offset });
      seen.push(...page.items.map((t) => t.thread_id));
      // A newer thread of the same owner arrives between two pages.
      await storage.insertThread(
        thread(`late-${offset}`, { created_at: '2025-01-01T00:00:00.000Z', metadata: { owner: 'user-11' } }),
      );
      if (page.items.length < query.limit) break;
    }
    const original = seen.filter((id) => !id.startsWith('late-'));
    assert.equal(new Set(seen).size, seen.length, 'no thread is seen twice');
    assert.equal(original.length, THREADS / 500, 'every thread there before paging began is seen');
  });
});
