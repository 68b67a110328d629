// The PostgreSQL storage against the storage contract's cases (`testing/storage-contract.ts`),
// each case on a database of its own, created and dropped here; and its migrations. Needs a
// server: TEST_POSTGRES_URI (default postgres://postgres@127.0.0.1:5432/postgres, trust auth);
// skipped when none answers.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { POSTGRES_MIGRATIONS, migratePostgres, openPostgresStorage } from './internal/storage/postgres.ts';
import type { Storage } from './internal/storage/storage.ts';
import { searchOracleContract } from './testing/search-oracle-contract.ts';
import { storageContract } from './testing/storage-contract.ts';
import type { ContractDatabase } from './testing/storage-contract.ts';
import { ADMIN_URI, freshDatabase, postgresAvailable } from './testing/postgres.ts';

const available = await postgresAvailable();

if (!available) {
  describe('PostgreSQL storage contract', () => {
    it('needs a PostgreSQL server (TEST_POSTGRES_URI)', { skip: `no server at ${ADMIN_URI}` }, () => {});
  });
} else {
  const openPostgresContract = async (): Promise<ContractDatabase> => {
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
  };
  storageContract('PostgreSQL', openPostgresContract);
  describe('PostgreSQL storage searches', () => {
    searchOracleContract('PostgreSQL', openPostgresContract, { runs: 20, queriesPerData: 10 });
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
        const all = POSTGRES_MIGRATIONS.map((migration) => migration.version);
        assert.deepEqual(applied.map((versions) => versions.join(',')).sort(), ['', '', '', all.join(',')]);
        const rows = (await pools[0]!.query('SELECT version FROM schema_migrations ORDER BY version')).rows;
        assert.deepEqual(
          rows,
          all.map((version) => ({ version })),
        );
        const later = all.length + 1;
        await pools[0]!.query(`INSERT INTO schema_migrations VALUES (${later}, 'later', 'now')`);
        await assert.rejects(
          migratePostgres(pools[0]!),
          new RegExp(`schema version ${later}, newer than this server knows \\(${all.length}\\)`),
        );
      } finally {
        for (const pool of pools) await pool.end();
        await database.drop();
      }
    });
  });
}
