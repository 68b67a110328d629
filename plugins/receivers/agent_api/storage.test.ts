// The SQLite storage: the storage contract's cases (`testing/storage-contract.ts`), the versioned
// migrations of the SQLite files (a fresh file, a file an earlier server made before versions were
// recorded, processes opening one file at once, a newer file, a failing step), and the metadata
// filter rule.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { containsJson } from './internal/storage/json-match.ts';
import { AGENT_MIGRATIONS, openSqliteStorage } from './internal/storage/sqlite.ts';
import { migrateSqlite, openSqliteFile } from './internal/storage/sqlite-file.ts';
import type { SqliteMigration } from './internal/storage/sqlite-file.ts';
import { STORE_MIGRATIONS, SqliteStore } from './internal/storage/store/sqlite.ts';
import type { Storage } from './internal/storage/storage.ts';
import { searchOracleContract } from './testing/search-oracle-contract.ts';
import { run, storageContract } from './testing/storage-contract.ts';
import type { ContractDatabase } from './testing/storage-contract.ts';
import { tempDir, runGroup } from 'tracepipe/testing';

const ALL_VERSIONS = AGENT_MIGRATIONS.map((migration) => migration.version);

const openSqliteContract = async (): Promise<ContractDatabase> => {
  const dir = tempDir('agent-api-storage-');
  const path = join(dir, 'agent.sqlite');
  const handles: Storage[] = [openSqliteStorage(path)];
  return {
    storage: handles[0]!,
    openAnother: async () => {
      const handle = openSqliteStorage(path);
      handles.push(handle);
      return handle;
    },
    drop: async () => {
      for (const handle of handles) await handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

storageContract('SQLite', openSqliteContract);
describe('SQLite storage searches', () => {
  searchOracleContract('SQLite', openSqliteContract, { runs: 60, queriesPerData: 10 });
});

/** A file made by the server before migrations were versioned (`testdata/storage/README.md`). */
function unversionedFile(dir: string, name: 'agent' | 'store'): string {
  const path = join(dir, `${name}.sqlite`);
  writeFileSync(
    path,
    gunzipSync(readFileSync(join(import.meta.dirname, `testdata/storage/${name}-unversioned.sqlite.gz`))),
  );
  return path;
}

function schemaOf(path: string): { type: string; name: string; sql: string | null }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(
        "SELECT type, name, sql FROM sqlite_master WHERE name <> 'schema_migrations' AND name NOT LIKE 'sqlite_autoindex_schema_migrations%' ORDER BY type, name",
      )
      .all() as { type: string; name: string; sql: string | null }[];
  } finally {
    db.close();
  }
}

function recordedVersions(path: string): number[] {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map(
      (row) => row.version,
    );
  } finally {
    db.close();
  }
}

describe('agent_api SQLite migrations', () => {
  it('creates a new file at the last version, and applies nothing on the next open', () => {
    const dir = tempDir('agent-api-storage-');
    try {
      const path = join(dir, 'agent.sqlite');
      const first = openSqliteFile(path, AGENT_MIGRATIONS);
      assert.deepEqual(first.migrations, { applied: ALL_VERSIONS, adopted: false });
      assert.equal(first.db.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(first.db.pragma('busy_timeout', { simple: true }), 5000);
      assert.equal(first.db.pragma('foreign_keys', { simple: true }), 1);
      // 2 = MEMORY: statement journals are not spilled to files in the temporary directory.
      assert.equal(first.db.pragma('temp_store', { simple: true }), 2);
      first.close();
      const again = openSqliteFile(path, AGENT_MIGRATIONS);
      assert.deepEqual(again.migrations, { applied: [], adopted: false });
      again.close();
      assert.deepEqual(recordedVersions(path), ALL_VERSIONS);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('adopts agent.sqlite made before versions were recorded, keeping its schema and data', async () => {
    const dir = tempDir('agent-api-storage-');
    try {
      const path = unversionedFile(dir, 'agent');
      const before = schemaOf(path);
      const opened = openSqliteFile(path, AGENT_MIGRATIONS.slice(0, 1));
      assert.deepEqual(opened.migrations, { applied: [1], adopted: true });
      opened.close();
      assert.deepEqual(schemaOf(path), before, 'no table, index or trigger changed');
      assert.deepEqual(recordedVersions(path), [1]);

      // The later steps apply to it as to any file.
      const storage = openSqliteStorage(path);
      assert.deepEqual(recordedVersions(path), ALL_VERSIONS);
      try {
        const assistant = await storage.assistants.get('a-legacy');
        assert.equal(assistant?.description, 'made before migrations');
        assert.deepEqual(assistant?.context, { system_prompt: 'old' });
        assert.equal(await storage.assistants.maxVersion('a-legacy'), 2);
        assert.deepEqual((await storage.threads.get('t-legacy'))?.values, { messages: ['hi'] });
        assert.equal((await storage.runs.get('r-legacy'))?.status, 'success');
        assert.equal((await storage.crons.get('c-legacy'))?.schedule, '*/5 * * * *');
        // And it goes on working: new runs queue after the old ones.
        await storage.runs.insert(run('r-new', 't-new', { created_at: '2024-05-01T10:00:01.000Z' }));
        assert.equal(
          (await storage.runs.claimNext('w1', 30_000, '2024-05-01T11:00:00.000Z', new Set()))?.run_id,
          'r-new',
        );
        // The cron trigger made before versions still fires.
        await storage.threads.delete('t-legacy');
        assert.equal(await storage.crons.get('c-legacy'), undefined);
      } finally {
        await storage.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('adopts store.sqlite made before versions were recorded, keeping its items', async () => {
    const dir = tempDir('agent-api-storage-');
    try {
      const path = unversionedFile(dir, 'store');
      const before = schemaOf(path);
      const adopted = openSqliteFile(path, STORE_MIGRATIONS.slice(0, 1));
      assert.deepEqual(adopted.migrations, { applied: [1], adopted: true });
      adopted.close();
      assert.deepEqual(schemaOf(path), before, 'no table or index changed');
      // The later steps apply to it as to any file.
      const store = new SqliteStore(path);
      try {
        assert.deepEqual((await store.get(['users', 'u1'], 'prefs'))?.value, { theme: 'dark' });
      } finally {
        await store.close();
      }
      assert.deepEqual(
        recordedVersions(path),
        STORE_MIGRATIONS.map((migration) => migration.version),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('migrates a file once when several processes open it at the same moment', async () => {
    const dir = tempDir('agent-api-storage-');
    try {
      const path = join(dir, 'agent.sqlite');
      const startAt = Date.now() + 1500;
      const script = join(import.meta.dirname, 'testdata/storage-open.ts');
      const outcomes = await Promise.all(
        Array.from({ length: 4 }, () =>
          runGroup(process.execPath, ['--import', 'tsx', script, path, String(startAt)], { timeoutMs: 120_000 }).then(
            ({ code, stdout, stderr }) => {
              assert.equal(code, 0, stderr);
              return JSON.parse(stdout) as { applied: number[] };
            },
          ),
        ),
      );
      assert.deepEqual(
        outcomes.map((outcome) => outcome.applied.join(',')).sort(),
        ['', '', '', ALL_VERSIONS.join(',')],
        'one process applied the migrations, the others found them applied',
      );
      assert.deepEqual(recordedVersions(path), ALL_VERSIONS);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a file a newer server migrated further', () => {
    const dir = tempDir('agent-api-storage-');
    try {
      const path = join(dir, 'agent.sqlite');
      const newer: SqliteMigration[] = [
        ...AGENT_MIGRATIONS,
        { version: AGENT_MIGRATIONS.length + 1, name: 'a later step', sql: 'CREATE TABLE later (id TEXT);' },
      ];
      openSqliteFile(path, newer).close();
      assert.throws(
        () => openSqliteStorage(path),
        new RegExp(
          `schema version ${ALL_VERSIONS.length + 1}, newer than this server knows \\(${ALL_VERSIONS.length}\\)`,
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('applies the pending steps in one transaction: a failing step leaves the file as it was', () => {
    const db = new Database(':memory:');
    try {
      migrateSqlite(db, AGENT_MIGRATIONS);
      const broken: SqliteMigration[] = [
        ...AGENT_MIGRATIONS,
        { version: ALL_VERSIONS.length + 1, name: 'good', sql: 'CREATE TABLE extra (id TEXT);' },
        { version: ALL_VERSIONS.length + 2, name: 'bad', sql: 'CREATE TABLE extra (id TEXT);' },
      ];
      assert.throws(() => migrateSqlite(db, broken), /already exists/);
      assert.equal(db.inTransaction, false);
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE name = 'extra'").all();
      assert.deepEqual(tables, [], 'the good step was rolled back with the bad one');
      assert.deepEqual(
        (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
        ALL_VERSIONS,
      );
      assert.throws(
        () => migrateSqlite(db, [{ version: 2, name: 'gap', sql: '' }]),
        /must have version 1/,
        'versions are numbered from 1 without gaps',
      );
    } finally {
      db.close();
    }
  });
});

describe('agent_api metadata filters', () => {
  it('match by containment (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        // Null filter values never match (a key must be present and non-null), so drop them.
        const clean = JSON.parse(JSON.stringify(value), (_key, item) => (item === null ? undefined : item)) ?? {};
        assert.ok(containsJson(clean, {}), 'the empty filter matches anything');
        for (const [key, item] of Object.entries(clean)) {
          assert.ok(containsJson(clean, { [key]: item }), 'each present key matches itself');
        }
      }),
    );
    assert.equal(containsJson({ a: { b: 1, c: 2 } }, { a: { b: 1 } }), true);
    assert.equal(containsJson({ a: { b: 1 } }, { a: { b: 2 } }), false);
    assert.equal(containsJson({ a: null }, { a: null }), false, 'a null filter value never matches');
    assert.equal(containsJson(null, { a: 1 }), false);
    assert.equal(containsJson({ tags: ['x', 'y'] }, { tags: ['y'] }), true);
  });
});
