// The embedded storage: one SQLite file (better-sqlite3, WAL) holding assistants, their versions,
// threads, runs and crons, each resource's repository in its folder (`threads/sqlite.ts`, ...).
// This module holds the file's schema and composes the repositories into the storage. JSON columns
// hold the free-form objects.

import { SqliteAssistants, deleteAssistant } from './assistants/sqlite.ts';
import { CRON_SCHEMA, SqliteCrons } from './crons/sqlite.ts';
import { Mutex } from './mutex.ts';
import type { Row } from './records.ts';
import { SqliteRuns } from './runs/sqlite.ts';
import { openSqliteFile } from './sqlite-file.ts';
import type { SqliteMigration } from './sqlite-file.ts';
import { SqliteStatements } from './sqlite-session.ts';
import type { SqliteSession } from './sqlite-session.ts';
import { registerSqliteFilterFunctions } from './sql-filters.ts';
import type { Storage, StorageOps, TruncateTables } from './storage.ts';
import { SqliteThreads } from './threads/sqlite.ts';

// The schema before migrations were versioned, unchanged. `IF NOT EXISTS` throughout, so that
// migration 1 adopts a file an earlier server made (it creates only what is missing).
const BASELINE_SCHEMA = `
CREATE TABLE IF NOT EXISTS assistants (
  assistant_id TEXT PRIMARY KEY, graph_id TEXT NOT NULL, name TEXT NOT NULL, description TEXT,
  version INTEGER NOT NULL, config TEXT NOT NULL, context TEXT NOT NULL, metadata TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS assistant_versions (
  assistant_id TEXT NOT NULL, version INTEGER NOT NULL, graph_id TEXT NOT NULL, name TEXT NOT NULL,
  description TEXT, config TEXT NOT NULL, context TEXT NOT NULL, metadata TEXT NOT NULL,
  created_at TEXT NOT NULL, PRIMARY KEY (assistant_id, version));
CREATE TABLE IF NOT EXISTS threads (
  thread_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  metadata TEXT NOT NULL, status TEXT NOT NULL, config TEXT NOT NULL, state_values TEXT,
  interrupts TEXT);
CREATE TABLE IF NOT EXISTS runs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL UNIQUE, thread_id TEXT NOT NULL,
  assistant_id TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  status TEXT NOT NULL, metadata TEXT NOT NULL, kwargs TEXT NOT NULL,
  multitask_strategy TEXT NOT NULL, error TEXT, attempt INTEGER NOT NULL, temporary INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS runs_thread ON runs (thread_id, seq);
CREATE INDEX IF NOT EXISTS runs_status ON runs (status, created_at);
CREATE INDEX IF NOT EXISTS runs_assistant ON runs (assistant_id);
`;

/** A top-level scalar of a JSON object as `thread_fields` keeps it (`j`: a row of `json_each`). */
const FIELD = (source: 0 | 1, column: string, thread: string): string => `
  SELECT ${thread}, ${source}, j.key,
    CASE j.type WHEN 'text' THEN 's' WHEN 'integer' THEN 'n' WHEN 'real' THEN 'n' WHEN 'true' THEN 'b'
      WHEN 'false' THEN 'b' ELSE 'z' END,
    COALESCE(j.atom, 0)
  FROM json_each(${column}) j
  WHERE json_type(${column}) = 'object' AND j.type NOT IN ('object', 'array')`;

const INSERT_FIELDS = 'INSERT OR IGNORE INTO thread_fields (thread_id, source, key, kind, value)';

// The indexes of the searches (`search-queries.ts`): one per sort order of threads (alone and after
// a status), and `thread_fields`, the top-level scalars of each thread's metadata (source 0) and
// values (source 1) by key and value, which answers equality filters on them (a user's threads)
// from an index. Triggers keep it in step with `threads`; the last statement fills it for the
// threads a file already holds.
const SEARCH_SCHEMA = `
CREATE INDEX threads_created ON threads (created_at, thread_id);
CREATE INDEX threads_updated ON threads (updated_at, thread_id);
CREATE INDEX threads_status_id ON threads (status, thread_id);
CREATE INDEX threads_status_created ON threads (status, created_at, thread_id);
CREATE INDEX threads_status_updated ON threads (status, updated_at, thread_id);
CREATE INDEX assistants_graph ON assistants (graph_id);
CREATE TABLE thread_fields (
  thread_id TEXT NOT NULL, source INTEGER NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL, value NOT NULL,
  PRIMARY KEY (source, key, kind, value, thread_id)) WITHOUT ROWID;
CREATE INDEX thread_fields_thread ON thread_fields (thread_id, source);
CREATE TRIGGER thread_fields_insert AFTER INSERT ON threads BEGIN
  ${INSERT_FIELDS} ${FIELD(0, 'NEW.metadata', 'NEW.thread_id')};
  ${INSERT_FIELDS} ${FIELD(1, 'NEW.state_values', 'NEW.thread_id')};
END;
CREATE TRIGGER thread_fields_metadata AFTER UPDATE OF metadata ON threads
  WHEN OLD.metadata IS NOT NEW.metadata BEGIN
  DELETE FROM thread_fields WHERE thread_id = OLD.thread_id AND source = 0;
  ${INSERT_FIELDS} ${FIELD(0, 'NEW.metadata', 'NEW.thread_id')};
END;
CREATE TRIGGER thread_fields_values AFTER UPDATE OF state_values ON threads
  WHEN OLD.state_values IS NOT NEW.state_values BEGIN
  DELETE FROM thread_fields WHERE thread_id = OLD.thread_id AND source = 1;
  ${INSERT_FIELDS} ${FIELD(1, 'NEW.state_values', 'NEW.thread_id')};
END;
CREATE TRIGGER thread_fields_delete AFTER DELETE ON threads BEGIN
  DELETE FROM thread_fields WHERE thread_id = OLD.thread_id;
END;
${INSERT_FIELDS} ${FIELD(0, 't.metadata', 't.thread_id').replace('FROM json_each', 'FROM threads t, json_each')};
${INSERT_FIELDS} ${FIELD(1, 't.state_values', 't.thread_id').replace('FROM json_each', 'FROM threads t, json_each')};
`;

/** The schema of `agent.sqlite`, step by step (see `sqlite-file.ts`). Append; never edit a step. */
export const AGENT_MIGRATIONS: readonly SqliteMigration[] = [
  { version: 1, name: 'assistants, threads, runs and crons', sql: BASELINE_SCHEMA + CRON_SCHEMA },
  {
    version: 2,
    name: 'run leases',
    sql: `
ALTER TABLE runs ADD COLUMN lease_owner TEXT;
ALTER TABLE runs ADD COLUMN lease_expires_at TEXT;
CREATE INDEX runs_lease ON runs (status, lease_expires_at);
`,
  },
  { version: 3, name: 'search indexes', sql: SEARCH_SCHEMA },
];

/** The repositories working through `session`, and `truncate`. */
function sqliteOps(session: SqliteSession): StorageOps {
  return {
    assistants: new SqliteAssistants(session),
    threads: new SqliteThreads(session),
    runs: new SqliteRuns(session),
    crons: new SqliteCrons(session),
    truncate: (what: TruncateTables, keep: ReadonlySet<string>) =>
      session.run((sql) => {
        if (what.runs) sql.prepare('DELETE FROM runs').run();
        if (what.threads) {
          sql.prepare('DELETE FROM runs').run();
          sql.prepare('DELETE FROM threads').run();
        }
        if (what.assistants) {
          const ids = (sql.prepare('SELECT assistant_id FROM assistants').all() as Row[]).map((row) =>
            String(row.assistant_id),
          );
          for (const id of ids) if (!keep.has(id)) deleteAssistant(sql, id);
        }
      }),
  };
}

/**
 * Opens (creating or migrating if needed) the database file; `:memory:` works for tests. Calls are
 * serialised by a mutex, which a transaction holds from `BEGIN IMMEDIATE` to its end, so a
 * transaction may await between statements without other callers interleaving; across processes
 * SQLite's write lock does the same.
 */
export function openSqliteStorage(path: string): Storage {
  const file = openSqliteFile(path, AGENT_MIGRATIONS);
  const { db } = file;
  registerSqliteFilterFunctions(db);
  const mutex = new Mutex();
  const sql = new SqliteStatements(db);
  const outside = sqliteOps({ sql, run: (work) => mutex.run(() => work(sql)) });
  const inside = sqliteOps({ sql, run: async (work) => work(sql) });
  let closed = false;
  return Object.freeze({
    ...outside,
    transaction: <T>(fn: (tx: StorageOps) => Promise<T>): Promise<T> =>
      mutex.run(async () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const result = await fn(inside);
          db.exec('COMMIT');
          return result;
        } catch (error) {
          db.exec('ROLLBACK');
          throw error;
        }
      }),
    close: async (): Promise<void> => {
      if (closed) return;
      closed = true;
      await mutex.run(() => file.close());
    },
  });
}
