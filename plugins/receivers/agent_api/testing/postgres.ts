// For tests on PostgreSQL: a server at TEST_POSTGRES_URI (default
// postgres://postgres@127.0.0.1:5432/postgres, trust auth), and a database of its own per test,
// created and dropped here. Suites skip themselves when no server answers (`postgresAvailable`),
// except in a CI run (.ci/run starts the server): there a missing server fails the suite.

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { requireServiceUnderCi } from './services.ts';

export const ADMIN_URI = process.env.TEST_POSTGRES_URI ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let available: Promise<boolean> | undefined;

/**
 * Whether a PostgreSQL server answers at `ADMIN_URI` (asked once per process). The connect timeout
 * is generous: on a loaded machine a short one answered false and skipped whole suites unseen.
 */
export function postgresAvailable(): Promise<boolean> {
  available ??= (async () => {
    const client = new pg.Client({ connectionString: ADMIN_URI, connectionTimeoutMillis: 15_000 });
    try {
      await client.connect();
      return true;
    } catch (error) {
      requireServiceUnderCi('PostgreSQL', ADMIN_URI, error);
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return available;
}

/** Runs `fn` on a connection to the server's `postgres` database. */
export async function admin<T>(fn: (client: pg.Client) => Promise<T>, uri = ADMIN_URI): Promise<T> {
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  readonly name: string;
  readonly uri: string;
  /** Drops the database, ending whatever is still connected to it. */
  drop(): Promise<void>;
}

/** A new, empty database. */
export async function freshDatabase(prefix = 'agent_api_test'): Promise<TestDatabase> {
  const name = `${prefix}_${randomUUID().replaceAll('-', '')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const uri = new URL(ADMIN_URI);
  uri.pathname = `/${name}`;
  return {
    name,
    uri: uri.toString(),
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** Ends every connection to `database` (as a database restart or failover would); returns how many. */
export async function terminateConnections(database: TestDatabase): Promise<number> {
  return admin(async (client) => {
    const result = await client.query(
      'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database.name],
    );
    return result.rowCount ?? 0;
  });
}
