// The one place that opens a SQLite file of the agent server (agent.sqlite, checkpoints.sqlite,
// store.sqlite) and configures it, and the versioned migrations of the files whose schema is ours.
// Several processes may open one file (servers sharing a data directory for crons), so every file
// waits for a writer instead of failing at once, and migrations are applied under SQLite's write
// lock with the applied versions read again once the lock is held.

import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { backgroundCheckpoints } from './wal-checkpoints.ts';

/** How long a statement waits for another connection's write lock before failing with SQLITE_BUSY. */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * One step of a file's schema. Versions start at 1 and go up by one; a step once released never
 * changes (a change is a new step). `sql` runs inside the migration transaction, so it must not
 * begin or end transactions itself.
 */
export interface SqliteMigration {
  version: number;
  name: string;
  sql: string;
}

export interface MigrationOutcome {
  /** Versions applied by this call, in order; empty when the file was up to date. */
  applied: number[];
  /**
   * The file had tables but no recorded version: it was made before migrations were versioned,
   * and the first migration (written to create only what is missing) adopted it.
   */
  adopted: boolean;
}

export interface OpenedSqliteFile {
  db: SqliteDatabase;
  migrations: MigrationOutcome;
  /** Closes `db` (use this rather than `db.close()`: the log's checkpoints stop first). */
  close(): void;
}

/**
 * Opens (creating if needed) the file at `path` — `:memory:` works for tests — configured as every
 * agent server file is, and brings its schema up to the last of `migrations` (none: the schema is
 * someone else's, as the checkpointer's is).
 */
export function openSqliteFile(path: string, migrations: readonly SqliteMigration[] = []): OpenedSqliteFile {
  const db = new Database(path);
  try {
    // First, so that even switching the journal mode waits for a process opening the file too.
    db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    // Readers do not block the writer, and a commit is one append to the log.
    useWriteAheadLog(db);
    // In WAL mode NORMAL loses no committed data on a process crash, only on a power loss.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    // Statement journals and temporary B-trees in memory: a transaction's statement journal passing
    // 64 KiB (a batch of checkpoint inserts does) was otherwise spilled to a new file in the
    // temporary directory, created, written and unlinked, every few runs.
    db.pragma('temp_store = MEMORY');
    const outcome = migrateSqlite(db, migrations, path);
    // A file's log is checkpointed on a worker thread (`wal-checkpoints.ts`); an in-memory database has none.
    const detach = db.memory ? () => {} : backgroundCheckpoints.attach(db, resolve(path));
    return {
      db,
      migrations: outcome,
      close: () => {
        detach();
        db.close();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Switches the file to WAL. On a new file another process may be switching it at the same moment,
 * and SQLite answers SQLITE_BUSY at once there instead of calling the busy handler; so wait and
 * retry, within the busy timeout, as every other statement waits. (The mode is stored in the file:
 * once one process has switched it, the others find it switched.)
 */
function useWriteAheadLog(db: SqliteDatabase): void {
  const deadline = Date.now() + SQLITE_BUSY_TIMEOUT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      // Opening is synchronous (the constructors of the storages are), so the wait is too.
      Atomics.wait(pause, 0, 0, 5);
    }
  }
}

const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`;

/**
 * Applies the migrations `db` has not recorded in `schema_migrations`, in one transaction: all of
 * them or none. `BEGIN IMMEDIATE` takes the write lock first (waiting up to the busy timeout), and
 * the recorded versions are read under it, so of two processes opening a file at once one applies
 * the migrations and the other finds them applied. A file recording a version this code does not
 * know (a newer server wrote it) is refused rather than used with a schema it does not understand.
 */
export function migrateSqlite(
  db: SqliteDatabase,
  migrations: readonly SqliteMigration[],
  label = 'database',
): MigrationOutcome {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`Migration ${migration.name} must have version ${index + 1}.`);
  });
  if (migrations.length === 0) return { applied: [], adopted: false };
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(MIGRATIONS_TABLE);
    const recorded = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as {
      version: number | null;
    };
    const current = recorded.version ?? 0;
    if (current > migrations.length) {
      throw new Error(
        `${label} has schema version ${current}, newer than this server knows (${migrations.length}); ` +
          'run a server at least as new as the one that wrote it.',
      );
    }
    const tables = db
      .prepare(
        "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'",
      )
      .get() as { n: number };
    const adopted = current === 0 && tables.n > 0;
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    const applied: number[] = [];
    for (const migration of migrations.slice(current)) {
      db.exec(migration.sql);
      record.run(migration.version, migration.name, new Date().toISOString());
      applied.push(migration.version);
    }
    db.exec('COMMIT');
    return { applied, adopted };
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
