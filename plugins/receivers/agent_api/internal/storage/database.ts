// The agent server's database: embedded SQLite files under `<data_dir>/agent/`
// (`openSqliteDatabase`), or one PostgreSQL database that several servers may share
// (`openPostgresDatabase`); `server/backend.ts` chooses by `storage.database_uri`. Either way the domain gets the same three parts — the storage (`storage.ts`), the
// checkpoint database (`checkpoints.ts`) and the store (`store.ts`) — and a cheap reachability
// check for `/ready`. On PostgreSQL all three share one pool.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import type { CheckpointDatabase } from './checkpoints.ts';
import { SqliteCheckpointDatabase } from './checkpoints.ts';
import { PostgresCheckpointDatabase } from './checkpoints-postgres.ts';
import { createPostgresPool, postgresStorageOnPool } from './postgres.ts';
import { openSqliteStorage } from './sqlite.ts';
import type { Storage } from './storage.ts';
import { SqliteStore } from './store/sqlite.ts';
import type { ServerStore } from './store.ts';
import { PostgresItemStore } from './store/postgres.ts';

export interface AgentDatabase {
  readonly kind: 'sqlite' | 'postgres';
  /** Where the data is, for logs: the SQLite directory, or the PostgreSQL URI without its password. */
  readonly location: string;
  readonly storage: Storage;
  readonly checkpoints: CheckpointDatabase;
  readonly store: ServerStore;
  /**
   * Why the database cannot be reached, or undefined when it can. Cheap: a PostgreSQL answer is
   * kept for `READY_CACHE_MS`, and concurrent callers share one check.
   */
  unavailable(): Promise<string | undefined>;
  /** Closes everything. Idempotent. */
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** `<data_dir>/agent`, for SQLite. */
  readonly dataDir: string;
  /** `postgres://…`; empty: SQLite. */
  readonly databaseUri: string;
  readonly poolSize: number;
  readonly statementTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly logger: Logger;
}

/** How long a reachability answer is reused. */
const READY_CACHE_MS = 1500;

/** Embedded SQLite files under `dataDir` (`<data_dir>/agent`). */
export async function openSqliteDatabase(dataDir: string): Promise<AgentDatabase> {
  await mkdir(dataDir, { recursive: true });
  const storage = openSqliteStorage(join(dataDir, 'agent.sqlite'));
  const checkpoints = new SqliteCheckpointDatabase(join(dataDir, 'checkpoints.sqlite'));
  const store = new SqliteStore(join(dataDir, 'store.sqlite'));
  return {
    kind: 'sqlite',
    location: dataDir,
    storage,
    checkpoints,
    store,
    unavailable: async () => undefined,
    close: async () => {
      await storage.close();
      await checkpoints.close();
      await store.close();
    },
  };
}

/** The URI as logs may show it: without its password. */
export function redactUri(uri: string): string {
  try {
    const url = new URL(uri);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(unparsable URI)';
  }
}

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

/** Node's socket errors that mean the database could not be reached. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/**
 * Whether `error` says the database is unreachable or unavailable for now (so the request may be
 * retried: 503, not 500): a refused or dropped connection, a connection timeout, the server
 * shutting down or ending the session (SQLSTATE class 08, 57P01–57P03), too many connections
 * (53300), or a statement cancelled by `statement_timeout` (57014).
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  if (error instanceof AggregateError && error.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1)))
    return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    if (/^08/.test(code) || ['57P01', '57P02', '57P03', '53300', '57014'].includes(code)) return true;
  }
  const message = error instanceof Error ? error.message : '';
  if (
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Cannot use a pool after calling end/.test(
      message,
    )
  )
    return true;
  return isDatabaseUnavailable((error as { cause?: unknown }).cause, depth + 1);
}
