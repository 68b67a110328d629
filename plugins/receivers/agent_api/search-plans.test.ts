// The searches use an index once a table has thousands of rows: the plans of the statements the
// storage runs (`internal/storage/search-queries.ts`, `store.ts`), as SQLite's `EXPLAIN QUERY PLAN`
// and PostgreSQL's `EXPLAIN (FORMAT JSON)` give them, on tables filled with bulk SQL
// (`testing/seed.ts`). A plan passes when SQLite names an index for every table it reads, and when
// PostgreSQL reads no big table with a sequential scan. Also: paging stays consistent while rows are inserted, and a search does not
// read a large thread it does not return.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStorage } from './internal/storage/postgres.ts';
import type { CronQuery } from './internal/storage/crons.ts';
import { assistantSearch, cronSearch, runSearch, threadSearch } from './internal/storage/search-queries.ts';
import type { SearchStatements, Statement } from './internal/storage/search-queries.ts';
import type { Dialect } from './internal/storage/sql-filters.ts';
import { registerSqliteFilterFunctions } from './internal/storage/sql-filters.ts';
import { openSqliteStorage } from './internal/storage/sqlite.ts';
import type { Storage, ThreadQuery } from './internal/storage/storage.ts';
import { namespacesOperation, storeSearch } from './internal/storage/store.ts';
import { STORE_MIGRATIONS } from './internal/storage/store/sqlite.ts';
import { namespaceListing, registerNamespaceFunctions } from './internal/storage/store/namespaces.ts';
import { openSqliteFile } from './internal/storage/sqlite-file.ts';
import type { OpenedSqliteFile } from './internal/storage/sqlite-file.ts';
import { freshDatabase, postgresAvailable } from './testing/postgres.ts';
import type { TestDatabase } from './testing/postgres.ts';
import { seedPostgres, seedSqlite, seeded } from './testing/seed.ts';
import { thread } from './testing/storage-contract.ts';
import { tempDir } from 'tracepipe/testing';

// Asked before any suite starts: the SQLite suites' fills block the event loop for seconds, longer
// than the question waits for an answer.
const available = await postgresAvailable();

const THREADS = 5000;
const PLAN = { threads: THREADS, owners: 500 };

/** The statements of the searches a chat UI, a run list, a cron list and the store make. */
function statements(dialect: Dialect): { name: string; statement: Statement }[] {
  const page = { limit: 10, offset: 0, sort_order: 'desc' as const };
  const owner = seeded.owner(7);
  const threads: Record<string, ThreadQuery> = {
    latest: { ...page, sort_by: 'created_at' },
    owner: { ...page, sort_by: 'created_at', metadata: { owner } },
    idle: { ...page, offset: 40, sort_by: 'created_at', status: 'idle' },
    byId: { ...page, sort_by: 'thread_id', status: 'idle' },
    updated: { ...page, sort_by: 'updated_at', auth: { owner } },
    values: { ...page, sort_by: 'created_at', values: { topic: seeded.topic(3) } },
    ids: { ...page, sort_by: 'created_at', ids: [seeded.threadId(1), seeded.threadId(2)] },
  };
  const crons: Record<string, CronQuery> = {
    assistant: { ...page, sort_by: 'created_at', assistant_id: seeded.assistant(3) },
    thread: { ...page, sort_by: 'created_at', thread_id: seeded.threadId(10) },
  };
  // A page; the count of a page past the end (offset 40); the count route's (limit 0).
  const searches = <Q>(kind: string, query: Q & { offset: number; limit: number }, of: (q: Q) => SearchStatements) => [
    { name: kind, statement: of(query).page },
    { name: `${kind}, past the end`, statement: of({ ...query, offset: 40 }).count },
    { name: `${kind} count`, statement: of({ ...query, limit: 0 }).count },
  ];
  return [
    // SQLite, for a field that names many threads: walk the sort order's index, probe `thread_fields`.
    { name: 'threads owner, probing fields', statement: threadSearch(dialect, threads.owner!, 'probe').page },
    ...Object.entries(threads).flatMap(([name, query]) =>
      searches(`threads ${name}`, query, (q: ThreadQuery) => threadSearch(dialect, q)),
    ),
    ...Object.entries(crons).flatMap(([name, query]) =>
      searches(`crons ${name}`, query, (q: CronQuery) => cronSearch(dialect, q)),
    ),
    {
      name: 'assistants of a graph',
      statement: assistantSearch(dialect, { ...page, sort_by: 'created_at', graph_id: 'g' }).page,
    },
    { name: 'runs of a thread', statement: runSearch(dialect, seeded.threadId(5), { limit: 10, offset: 0 }) },
    {
      name: 'runs of a thread by status',
      statement: runSearch(dialect, seeded.threadId(5), { status: 'success', limit: 10, offset: 0 }),
    },
    { name: 'store items under a prefix', statement: storeSearch(dialect, ['users', owner], undefined, 10, 0) },
    { name: 'store items, newest', statement: storeSearch(dialect, [], undefined, 10, 0) },
    {
      name: 'store items under a prefix holding many, newest first',
      statement: storeSearch(dialect, ['users'], undefined, 10, 0, { walkNewest: true }),
    },
    {
      name: 'store namespaces under a prefix, two labels deep',
      statement: namespaceListing(
        dialect,
        namespacesOperation({ prefix: ['users'], suffix: ['notes'], maxDepth: 2, limit: 10, offset: 5 }),
        { page: true },
      ),
    },
    {
      name: 'store namespaces, whole',
      statement: namespaceListing(dialect, namespacesOperation({}), { page: false }),
    },
  ];
}

/**
 * Rows a statement makes rather than reads from a table: a filter's parameter (`json_each`), a
 * capped count's subquery (`matches`), the namespace listing's walk (`walk`, `step`) and its
 * first step, a `SELECT` of no table (`CONSTANT ROW`).
 */
const DERIVED = new Set(['json_each', 'matches', 'walk', 'step', 'CONSTANT']);

const BIG_TABLES = new Set(['threads', 'runs', 'crons', 'store_items', 'thread_fields']);

describe('SQLite search plans', () => {
  let dir: string;
  let db: Database.Database;
  let storeFile: OpenedSqliteFile;
  let store: Database.Database;

  before(async () => {
    dir = tempDir('agent-api-plans-');
    await openSqliteStorage(join(dir, 'agent.sqlite')).close();
    db = new Database(join(dir, 'agent.sqlite'));
    registerSqliteFilterFunctions(db);
    storeFile = openSqliteFile(join(dir, 'store.sqlite'), STORE_MIGRATIONS);
    store = storeFile.db;
    registerNamespaceFunctions(store);
    seedSqlite(db, store, PLAN);
  });

  after(() => {
    db?.close();
    storeFile?.close();
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
        if (scanned === undefined || DERIVED.has(scanned)) continue;
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

describe('SQLite thread searches on fields', () => {
  it('answer alike whether they list the threads a field names or probe each row on the sort index', async () => {
    const dir = tempDir('agent-api-fields-');
    const storage = openSqliteStorage(join(dir, 'agent.sqlite'));
    try {
      await storage.close();
      const db = new Database(join(dir, 'agent.sqlite'));
      const storeFile = openSqliteFile(join(dir, 'store.sqlite'), STORE_MIGRATIONS);
      const store = storeFile.db;
      registerSqliteFilterFunctions(db);
      seedSqlite(db, store, { threads: 2000, owners: 4 });
      const query = {
        limit: 10,
        offset: 15,
        sort_by: 'updated_at',
        sort_order: 'asc',
        metadata: { owner: seeded.owner(1), source: 'web' },
      } as const;
      const ids = (fields: 'list' | 'probe') => {
        const { sql, params } = threadSearch('sqlite', query, fields).page;
        return (db.prepare(sql).all(...params) as { thread_id: string }[]).map((row) => row.thread_id);
      };
      const listed = ids('list');
      assert.equal(listed.length, 11);
      assert.deepEqual(ids('probe'), listed);
      db.close();
      storeFile.close();
      // Through the storage, which chooses: the same page (a quarter of the threads is one owner's).
      const reopened = openSqliteStorage(join(dir, 'agent.sqlite'));
      const page = await reopened.threads.search(query);
      assert.deepEqual(
        page.items.map((t) => t.thread_id),
        listed.slice(0, 10),
      );
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

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
    await seedPostgres(pool, PLAN);
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
    await storage.threads.insert(
      thread('big', { metadata: { owner: 'someone-else', blob: big }, values: { blob: big } }),
    );
    await pool.query('ANALYZE threads');
    const search = threadSearch('postgres', {
      limit: 10,
      offset: 0,
      sort_by: 'created_at',
      sort_order: 'desc',
      metadata: { owner: seeded.owner(7) },
    });
    const [row] = (await pool.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${search.page.sql}`, search.page.params))
      .rows as { 'QUERY PLAN': { Plan: PlanNode }[] }[];
    const top = row!['QUERY PLAN'][0]!.Plan;
    const blocks = (top['Shared Hit Blocks'] ?? 0) + (top['Shared Read Blocks'] ?? 0);
    assert.ok(blocks < 64, `the search read ${blocks} blocks; the large thread alone takes over 128`);
    const page = await storage.threads.search({
      limit: 10,
      offset: 0,
      sort_by: 'created_at',
      sort_order: 'desc',
      metadata: { owner: seeded.owner(7) },
    });
    assert.equal(page.total, THREADS / PLAN.owners);
  });

  it('keeps paging consistent while threads are inserted', async () => {
    const query = {
      limit: 7,
      offset: 0,
      sort_by: 'created_at' as const,
      sort_order: 'asc' as const,
      metadata: { owner: seeded.owner(11) },
    };
    const seen: string[] = [];
    for (let offset = 0; ; offset += query.limit) {
      const page = await storage.threads.search({ ...query, offset });
      seen.push(...page.items.map((t) => t.thread_id));
      // A newer thread of the same owner arrives between two pages.
      await storage.threads.insert(
        thread(`late-${offset}`, { created_at: '2025-01-01T00:00:00.000Z', metadata: { owner: seeded.owner(11) } }),
      );
      if (page.items.length < query.limit) break;
    }
    const original = seen.filter((id) => !id.startsWith('late-'));
    assert.equal(new Set(seen).size, seen.length, 'no thread is seen twice');
    assert.equal(original.length, THREADS / PLAN.owners, 'every thread there before paging began is seen');
  });
});
