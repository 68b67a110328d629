// The PostgreSQL storage (`pg`, one pool): the same contract as the embedded SQLite one, for
// several server processes sharing one database. This module holds the schema, the pool and the
// transactions, and composes the repositories (`threads/postgres.ts`, ...) into the storage.
//
// There is no lock per database: a transaction is "as if one at a time" per thread (and per
// assistant), because its first operation on a thread locks the thread's row (`SELECT … FOR
// UPDATE`, in the statement that reads it; a transaction-scoped advisory lock on its id while the
// row does not exist: `PostgresSession.lockedRow`), which another transaction on the same thread
// waits for; transactions on other threads run side by side. Operations outside a transaction are single
// statements (or a few that commit together): run claims are one `UPDATE … FOR UPDATE SKIP
// LOCKED`, cron ticks and lease recovery conditional updates. Searches are single statements
// (`search-queries.ts`) answered from indexes: JSONB `@>` on GIN, sort columns in byte order
// (`COLLATE "C"`), as the SQLite backend orders them.

import pg from 'pg';
import type { PoolClient } from 'pg';
import { PostgresAssistants, deleteAssistant } from './assistants/postgres.ts';
import { PostgresCrons } from './crons/postgres.ts';
import { PostgresSession } from './postgres-session.ts';
import type { Connect } from './postgres-session.ts';
import type { Row } from './records.ts';
import { PostgresRuns } from './runs/postgres.ts';
import type { Storage, StorageOps, TruncateTables } from './storage.ts';
import { PostgresThreads } from './threads/postgres.ts';

/** Steps of the PostgreSQL schema, recorded in `schema_migrations` as SQLite's are. Append only. */
export const POSTGRES_MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'assistants, threads, runs and crons',
    sql: `
CREATE TABLE assistants (
  assistant_id TEXT PRIMARY KEY, graph_id TEXT NOT NULL, name TEXT NOT NULL, description TEXT,
  version INTEGER NOT NULL, config JSONB NOT NULL, context JSONB NOT NULL, metadata JSONB NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL, updated_at TEXT COLLATE "C" NOT NULL);
CREATE TABLE assistant_versions (
  assistant_id TEXT NOT NULL, version INTEGER NOT NULL, graph_id TEXT NOT NULL, name TEXT NOT NULL,
  description TEXT, config JSONB NOT NULL, context JSONB NOT NULL, metadata JSONB NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL, PRIMARY KEY (assistant_id, version));
CREATE TABLE threads (
  thread_id TEXT PRIMARY KEY, created_at TEXT COLLATE "C" NOT NULL, updated_at TEXT COLLATE "C" NOT NULL,
  metadata JSONB NOT NULL, status TEXT NOT NULL, config JSONB NOT NULL, state_values JSONB,
  interrupts JSONB);
CREATE INDEX threads_assistant ON threads ((metadata->>'assistant_id'));
CREATE TABLE runs (
  seq BIGSERIAL PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, thread_id TEXT NOT NULL,
  assistant_id TEXT NOT NULL, created_at TEXT COLLATE "C" NOT NULL, updated_at TEXT COLLATE "C" NOT NULL,
  status TEXT NOT NULL, metadata JSONB NOT NULL, kwargs JSONB NOT NULL,
  multitask_strategy TEXT NOT NULL, error JSONB, attempt INTEGER NOT NULL, temporary BOOLEAN NOT NULL);
CREATE INDEX runs_thread ON runs (thread_id, seq);
CREATE INDEX runs_status ON runs (status, created_at);
CREATE INDEX runs_assistant ON runs (assistant_id);
CREATE TABLE crons (
  cron_id TEXT PRIMARY KEY, assistant_id TEXT NOT NULL, thread_id TEXT, on_run_completed TEXT,
  end_time TEXT COLLATE "C", schedule TEXT NOT NULL, timezone TEXT, created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL, user_id TEXT, payload JSONB NOT NULL, next_run_date TEXT COLLATE "C",
  metadata JSONB NOT NULL, enabled BOOLEAN NOT NULL, auth JSONB);
CREATE INDEX crons_due ON crons (next_run_date) WHERE enabled;
CREATE INDEX crons_thread ON crons (thread_id);
CREATE INDEX crons_assistant ON crons (assistant_id);
`,
  },
  {
    version: 2,
    name: 'store items',
    // The items of the LangGraph store (`store/postgres.ts`), as `store.sqlite` keeps them.
    sql: `
CREATE TABLE store_items (
  namespace TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL, value JSONB NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL, updated_at TEXT COLLATE "C" NOT NULL, PRIMARY KEY (namespace, key));
CREATE INDEX store_items_updated ON store_items (updated_at);
`,
  },
  {
    version: 3,
    name: 'run leases',
    sql: `
ALTER TABLE runs ADD COLUMN lease_owner TEXT;
ALTER TABLE runs ADD COLUMN lease_expires_at TEXT COLLATE "C";
CREATE INDEX runs_lease ON runs (status, lease_expires_at);
`,
  },
  {
    version: 4,
    name: 'search indexes',
    // The indexes of the searches (`search-queries.ts`): threads by each sort order, alone and after
    // a status; containment (`@>`) on metadata and values through GIN (`jsonb_path_ops`: smaller,
    // and `@>` is the only operator the searches use); ids compared in byte order.
    sql: `
CREATE INDEX threads_id ON threads (thread_id COLLATE "C");
CREATE INDEX threads_created ON threads (created_at, thread_id COLLATE "C");
CREATE INDEX threads_updated ON threads (updated_at, thread_id COLLATE "C");
CREATE INDEX threads_status_id ON threads (status COLLATE "C", thread_id COLLATE "C");
CREATE INDEX threads_status_created ON threads (status, created_at, thread_id COLLATE "C");
CREATE INDEX threads_status_updated ON threads (status, updated_at, thread_id COLLATE "C");
CREATE INDEX threads_metadata ON threads USING GIN (metadata jsonb_path_ops);
CREATE INDEX threads_values ON threads USING GIN (state_values jsonb_path_ops);
CREATE INDEX assistants_graph ON assistants (graph_id);
CREATE INDEX assistants_metadata ON assistants USING GIN (metadata jsonb_path_ops);
CREATE INDEX crons_metadata ON crons USING GIN (metadata jsonb_path_ops);
CREATE INDEX store_items_newest ON store_items (updated_at, namespace, key);
CREATE INDEX store_items_value ON store_items USING GIN (value jsonb_path_ops);
`,
  },
];

/** The migration lock's key (an advisory lock; any fixed number, the same in every process). */
const MIGRATION_LOCK = 7_351_001;

/** SQLSTATE of a transaction PostgreSQL ended to break a deadlock; it is run again, at most this often. */
const DEADLOCK_DETECTED = '40P01';
const DEADLOCK_ATTEMPTS = 5;

/**
 * Runs `fn` in a transaction on `client`. A failed ROLLBACK (the connection is gone) does not hide
 * the error that caused it: it marks the client broken, so that `release` drops it from the pool.
 */
async function inTransaction<T>(client: PoolClient, fn: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await fn();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((failure: unknown) => brokenClients.add(client, failure));
    throw error;
  }
}

/** Clients whose connection failed while checked out; released with the error, the pool drops them. */
const brokenClients = {
  failures: new WeakMap<PoolClient, Error>(),
  add(client: PoolClient, failure: unknown): void {
    this.failures.set(client, failure instanceof Error ? failure : new Error(String(failure)));
  },
  release(client: PoolClient): void {
    const failure = this.failures.get(client);
    this.failures.delete(client);
    client.release(failure);
  },
};

/**
 * Runs `fn` while holding the migration lock (a session advisory lock on a connection of its
 * own), so that of several servers starting together one migrates at a time. Not re-entrant:
 * `fn` must not call `migratePostgres` on the same pool.
 */
export async function withMigrationLock<T>(pool: pg.Pool, fn: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

/**
 * Applies the steps the database has not recorded, under a session advisory lock (so that of
 * several processes starting together one migrates and the others wait, then find it migrated),
 * in one transaction. A database recording a version this code does not know is refused.
 */
export async function migratePostgres(pool: pg.Pool): Promise<number[]> {
  return withMigrationLock(pool, async () => {
    const client = await pool.connect();
    try {
      return await inTransaction(client, async () => {
        await client.query(
          'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
        );
        const [row] = (await client.query('SELECT MAX(version) AS version FROM schema_migrations')).rows as Row[];
        const current = Number(row?.version ?? 0);
        if (current > POSTGRES_MIGRATIONS.length) {
          throw new Error(
            `The database has schema version ${current}, newer than this server knows (${POSTGRES_MIGRATIONS.length}).`,
          );
        }
        const applied: number[] = [];
        for (const migration of POSTGRES_MIGRATIONS.slice(current)) {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
            migration.version,
            migration.name,
            new Date().toISOString(),
          ]);
          applied.push(migration.version);
        }
        return applied;
      });
    } finally {
      brokenClients.release(client);
    }
  });
}

export interface PostgresPoolOptions {
  /** Most connections open at once (pg's `max`); default 10. */
  readonly max?: number;
  /** Statements running longer are cancelled by the server (`statement_timeout`); 0: no limit. */
  readonly statementTimeoutMs?: number;
  /** Giving up on opening a connection after this long; 0: no limit (pg's default). */
  readonly connectTimeoutMs?: number;
  /**
   * Hears of errors on connections no operation is using (the server restarted or ended them):
   * the pool drops such a connection and opens a new one when needed, so they are no operation's
   * failure — but without a listener they would end the process.
   */
  readonly onIdleError?: (error: Error) => void;
}

/**
 * A pool on `connectionString` (a `postgres://` URI) that never lets a dropped connection end the
 * process: idle ones are reported to `onIdleError`, and a connection that fails while checked out
 * between two statements fails its next statement (the operation's error) instead of emitting an
 * unheard `error` event.
 */
export function createPostgresPool(connectionString: string, options: PostgresPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(options.connectTimeoutMs ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
  });
  pool.on('error', (error) => options.onIdleError?.(error));
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * The storage on `pool` (which stays the caller's: `close` does not end it), after migrating the
 * database.
 */
export async function postgresStorageOnPool(pool: pg.Pool): Promise<Storage> {
  await migratePostgres(pool);
  const outside: Connect = async (together, fn) => {
    const client = await pool.connect();
    try {
      // A single statement commits on its own: no BEGIN and COMMIT round trips around it.
      return together ? await inTransaction(client, () => fn(client)) : await fn(client);
    } finally {
      brokenClients.release(client);
    }
  };
  return Object.freeze({
    ...postgresOps(new PostgresSession(outside)),
    transaction: async <T>(fn: (tx: StorageOps) => Promise<T>): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        try {
          const inside: Connect = async (_together, body) => body(client);
          return await inTransaction(client, () => fn(postgresOps(new PostgresSession(inside, new Set()))));
        } catch (error) {
          // Two transactions that lock two threads in opposite orders: PostgreSQL ends one of them
          // (deadlock_detected), which then runs again from the start, as if it had come second.
          if ((error as { code?: unknown }).code !== DEADLOCK_DETECTED || attempt >= DEADLOCK_ATTEMPTS) throw error;
        } finally {
          brokenClients.release(client);
        }
      }
    },
    close: async () => undefined,
  });
}

/** The repositories working through `session`, and `truncate`. */
function postgresOps(session: PostgresSession): StorageOps {
  return {
    assistants: new PostgresAssistants(session),
    threads: new PostgresThreads(session),
    runs: new PostgresRuns(session),
    crons: new PostgresCrons(session),
    truncate: (what: TruncateTables, keep: ReadonlySet<string>) =>
      session.write(async (client) => {
        if (what.runs) await client.query('DELETE FROM runs');
        if (what.threads) {
          await client.query('DELETE FROM runs');
          // As the SQLite trigger does: crons go with their threads.
          await client.query('DELETE FROM crons WHERE thread_id IN (SELECT thread_id FROM threads)');
          await client.query('DELETE FROM threads');
        }
        if (what.assistants) {
          const ids = (await client.query('SELECT assistant_id FROM assistants')).rows.map((row: Row) =>
            String(row.assistant_id),
          );
          for (const id of ids) if (!keep.has(id)) await deleteAssistant(client, id);
        }
      }),
  };
}

/**
 * Connects to `connectionString` (a `postgres://` URI), migrates, and returns the storage, which
 * owns its pool (`close` ends it).
 */
export async function openPostgresStorage(
  connectionString: string,
  options: PostgresPoolOptions = {},
): Promise<Storage> {
  const pool = createPostgresPool(connectionString, options);
  let storage: Storage;
  try {
    storage = await postgresStorageOnPool(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  let closed = false;
  return Object.freeze({
    ...storage,
    close: async () => {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  });
}
