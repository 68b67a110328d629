// The PostgreSQL storage against the storage contract's cases (`testing/storage-contract.ts`),
// each case on a database of its own, created and dropped here; and its migrations. Needs a
// server: TEST_POSTGRES_URI (default postgres://postgres@127.0.0.1:5432/postgres, trust auth);
// skipped when none answers.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { migratePostgres, openPostgresStorage } from './internal/storage/postgres.ts';
import type { Storage } from './internal/storage/storage.ts';
import { storageContract } from './testing/storage-contract.ts';

const ADMIN_URI = process.env.TEST_POSTGRES_URI ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URI, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URI });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A new, empty database; returns its URI and a function that drops it. */
async function freshDatabase(): Promise<{ uri: string; drop: () => Promise<void> }> {
  const name = `agent_api_storage_${randomUUID().replaceAll('-', '')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const uri = new URL(ADMIN_URI);
  uri.pathname = `/${name}`;
  return {
    uri: uri.toString(),
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

const available = await reachable();

if (!available) {
  describe('PostgreSQL storage contract', () => {
    it('needs a PostgreSQL server (TEST_POSTGRES_URI)', { skip: `no server at ${ADMIN_URI}` }, () => {});
  });
} else {
  storageContract('PostgreSQL', async () => {
    const database = await freshDatabase();
    const handles: Storage[] = [await openPostgresStorage(database.uri)];
    return {
      storage: handles[0]!,
      openAnother: async () => {
        const handle = await openPostgresStorage(database.uri);
        handles.push(handle);
        return handle;
      },
      drop: async () => {
        for (const handle of handles) await handle.close();
        await database.drop();
      },
    };
  });

  describe('agent_api PostgreSQL migrations', () => {
    it('migrates a database once when several servers start together', async () => {
      const database = await freshDatabase();
      const pools = Array.from({ length: 4 }, () => {
        const pool = new pg.Pool({ connectionString: database.uri, max: 2 });
        // Dropping the database ends connections the pool may still be closing.
        pool.on('error', () => undefined);
        return pool;
      });
      try {
        const applied = await Promise.all(pools.map((pool) => migratePostgres(pool)));
        assert.deepEqual(applied.map((versions) => versions.join(',')).sort(), ['', '', '', '1,2']);
        const rows = (await pools[0]!.query('SELECT version FROM schema_migrations ORDER BY version')).rows;
        assert.deepEqual(rows, [{ version: 1 }, { version: 2 }]);
        await pools[0]!.query("INSERT INTO schema_migrations VALUES (3, 'later', 'now')");
        await assert.rejects(migratePostgres(pools[0]!), /schema version 3, newer than this server knows \(2\)/);
      } finally {
        for (const pool of pools) await pool.end();
        await database.drop();
      }
    });
  });
}
