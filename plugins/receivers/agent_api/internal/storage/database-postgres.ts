// The PostgreSQL side of the agent server's database (`database.ts`): one database that several
// servers may share, the storage, checkpoints and store on one pool. In a module of its own so that
// `pg`, the PostgreSQL checkpointer and the PostgreSQL storage load only for a server configured
// with `storage.database_uri`; `database.ts` imports it when one is.

import pg from 'pg';
import type { CheckpointDatabase } from './checkpoints.ts';
import { PostgresCheckpointDatabase } from './checkpoints-postgres.ts';
import type { AgentDatabase, DatabaseOptions } from './database.ts';
import { redactUri } from './database.ts';
import { createPostgresPool, postgresStorageOnPool } from './postgres.ts';
import type { Storage } from './storage.ts';
import { PostgresItemStore } from './store/postgres.ts';

/** How long a reachability answer is reused. */
const READY_CACHE_MS = 1500;

/** One PostgreSQL database (`options.databaseUri`), its three parts sharing one pool. */
export async function openPostgresDatabase(options: DatabaseOptions): Promise<AgentDatabase> {
  const { logger } = options;
  let idleErrors = 0;
  const pool = createPostgresPool(options.databaseUri, {
    max: options.poolSize,
    statementTimeoutMs: options.statementTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs,
    onIdleError: (error) => {
      // Once per burst: a restarting database drops every idle connection at once.
      if (idleErrors++ === 0)
        logger.warn({ err: error }, 'PostgreSQL dropped an idle connection; it is replaced when needed.');
      setTimeout(() => (idleErrors = 0), 10_000).unref();
    },
  });
  let storage: Storage;
  let checkpoints: CheckpointDatabase;
  try {
    storage = await postgresStorageOnPool(pool);
    checkpoints = await PostgresCheckpointDatabase.open(pool);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new Error(`Cannot open the PostgreSQL database ${redactUri(options.databaseUri)}: ${describe(error)}`, {
      cause: error,
    });
  }
  const store = new PostgresItemStore(pool);
  const probe = reachability(options);
  let closed = false;
  return {
    kind: 'postgres',
    location: redactUri(options.databaseUri),
    storage,
    checkpoints,
    store,
    unavailable: probe,
    close: async () => {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  if (error instanceof Error) return error.message || (error as NodeJS.ErrnoException).code || error.name;
  return String(error);
}

/**
 * `SELECT 1` on a connection of its own (not the pool's: runs holding every pooled connection do
 * not make the database unreachable), the answer kept for a moment and shared by concurrent callers.
 */
function reachability(options: DatabaseOptions): () => Promise<string | undefined> {
  let checked: { at: number; answer: Promise<string | undefined> } | undefined;
  const check = async (): Promise<string | undefined> => {
    const client = new pg.Client({
      connectionString: options.databaseUri,
      connectionTimeoutMillis: Math.min(options.connectTimeoutMs || 2000, 2000),
      query_timeout: 2000,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return undefined;
    } catch (error) {
      return `database unreachable: ${describe(error)}`;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  return () => {
    const now = Date.now();
    if (!checked || now - checked.at > READY_CACHE_MS) checked = { at: now, answer: check() };
    return checked.answer;
  };
}
