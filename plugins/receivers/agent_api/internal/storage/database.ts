// The agent server's database: embedded SQLite files under `<data_dir>/agent/`
// (`openSqliteDatabase`), or one PostgreSQL database that several servers may share
// (`openPostgresDatabase`); `server/backend.ts` chooses by `storage.database_uri`. Either way the domain gets the same three parts — the storage (`storage.ts`), the
// checkpoint database (`checkpoints.ts`) and the store (`store.ts`) — and a cheap reachability
// check for `/ready`. On PostgreSQL all three share one pool.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { CheckpointDatabase } from './checkpoints.ts';
import { SqliteCheckpointDatabase } from './checkpoints.ts';
import { openSqliteStorage } from './sqlite.ts';
import type { Storage } from './storage.ts';
import { SqliteStore } from './store/sqlite.ts';
import type { ServerStore } from './store.ts';

export interface AgentDatabase {
  readonly kind: 'sqlite' | 'postgres';
  /** Where the data is, for logs: the SQLite directory, or the PostgreSQL URI without its password. */
  readonly location: string;
  readonly storage: Storage;
  readonly checkpoints: CheckpointDatabase;
  readonly store: ServerStore;
  /**
   * Why the database cannot be reached, or undefined when it can. Cheap: a PostgreSQL answer is
   * kept for a moment (`database-postgres.ts`), and concurrent callers share one check.
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

/**
 * One PostgreSQL database (`options.databaseUri`), its three parts sharing one pool. Its modules
 * (`database-postgres.ts`: pg, the PostgreSQL checkpointer and storage) are imported here, on
 * first use, so that a server on SQLite never loads them.
 */
export async function openPostgresDatabase(options: DatabaseOptions): Promise<AgentDatabase> {
  const postgres = await import('./database-postgres.ts');
  return postgres.openPostgresDatabase(options);
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
