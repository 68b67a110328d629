// The embedded storage: one SQLite file (better-sqlite3, WAL) holding assistants, their versions,
// threads and runs. JSON columns hold the free-form objects. Searches are single statements
// (`search-queries.ts`): the top-level scalars of threads' metadata and values are indexed in
// `thread_fields`, which triggers keep in step with `threads`, and the rest of a filter is decided
// by `tp_contains`/`tp_auth` (`sql-filters.ts`) on the rows the indexes leave.

import { Mutex } from './mutex.ts';
import { claimedRun, json } from './records.ts';
import type { Row } from './records.ts';
import { CRON_SCHEMA, SqliteCronOps, records } from './sqlite-crons.ts';
import { openSqliteFile } from './sqlite-file.ts';
import type { SqliteMigration } from './sqlite-file.ts';
import { assistantSearch, cronSearch, runSearch, settlePage, threadSearch, versionSearch } from './search-queries.ts';
import type { SearchStatements } from './search-queries.ts';
import { fieldProbe, registerSqliteFilterFunctions } from './sql-filters.ts';
import { bindOperations, composeStorage, leaseExpiry } from './storage.ts';
import type { CronQuery, CronRecord } from './crons.ts';
import type {
  Assistant,
  AssistantQuery,
  AssistantVersion,
  JsonObject,
  Page,
  RunQuery,
  RunRecord,
  RunStatus,
  Storage,
  SynchronousStorageOps,
  Thread,
  ThreadQuery,
} from './storage.ts';

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

/** The operations, synchronous (crons in `SqliteCronOps`); `openSqliteStorage` serialises access. */
class SqliteOps extends SqliteCronOps implements SynchronousStorageOps {
  /** SQLite runs one transaction at a time: nothing more to lock. */
  lockAssistant(): void {}

  searchCrons(query: CronQuery): Page<CronRecord> {
    return this.page(cronSearch('sqlite', query), records.toCron);
  }

  /** A search's page and its total (`settlePage`: counted only when the page does not tell it). */
  private page<T>(search: SearchStatements, toRecord: (row: Row) => T): Page<T> {
    const read = search.limit > 0 ? (this.prepare(search.page.sql).all(...search.page.params) as Row[]) : [];
    const { rows, total } = settlePage(search, read);
    const counted = total ?? Number((this.prepare(search.count.sql).get(...search.count.params) as Row).total);
    return { items: rows.map(toRecord), total: counted };
  }

  getAssistant(id: string): Assistant | undefined {
    const row = this.prepare('SELECT * FROM assistants WHERE assistant_id = ?').get(id) as Row | undefined;
    return row && records.toAssistant(row);
  }

  insertAssistant(a: Assistant): void {
    this.prepare(
      `INSERT INTO assistants (assistant_id, graph_id, name, description, version, config, context, metadata, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(...records.assistantInsert(a));
    this.insertAssistantVersion({ ...a });
  }

  updateAssistant(a: Assistant): void {
    this.prepare(
      `UPDATE assistants SET graph_id = ?, name = ?, description = ?, version = ?, config = ?, context = ?,
       metadata = ?, updated_at = ? WHERE assistant_id = ?`,
    ).run(...records.assistantUpdate(a));
  }

  insertAssistantVersion(v: AssistantVersion): void {
    this.prepare(
      `INSERT INTO assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(...records.versionInsert(v));
  }

  getAssistantVersion(id: string, version: number): AssistantVersion | undefined {
    const row = this.prepare('SELECT * FROM assistant_versions WHERE assistant_id = ? AND version = ?').get(
      id,
      version,
    ) as Row | undefined;
    return row && records.toVersion(row);
  }

  maxAssistantVersion(id: string): number {
    const row = this.prepare('SELECT MAX(version) AS v FROM assistant_versions WHERE assistant_id = ?').get(id) as Row;
    return Number(row.v ?? 0);
  }

  listAssistantVersions(
    id: string,
    query: { metadata?: JsonObject; limit: number; offset: number },
  ): AssistantVersion[] {
    const { sql, params } = versionSearch('sqlite', id, query);
    return (this.prepare(sql).all(...params) as Row[]).map(records.toVersion);
  }

  searchAssistants(query: AssistantQuery): Page<Assistant> {
    return this.page(assistantSearch('sqlite', query), records.toAssistant);
  }

  deleteAssistant(id: string): boolean {
    this.prepare('DELETE FROM assistant_versions WHERE assistant_id = ?').run(id);
    this.prepare('DELETE FROM runs WHERE assistant_id = ?').run(id);
    return this.prepare('DELETE FROM assistants WHERE assistant_id = ?').run(id).changes > 0;
  }

  getThread(id: string): Thread | undefined {
    const row = this.prepare('SELECT * FROM threads WHERE thread_id = ?').get(id) as Row | undefined;
    return row && records.toThread(row);
  }

  insertThread(t: Thread): void {
    this.prepare(
      `INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(...records.threadInsert(t));
  }

  updateThread(t: Thread): void {
    this.prepare(
      `UPDATE threads SET updated_at = ?, metadata = ?, status = ?, config = ?, state_values = ?, interrupts = ?
       WHERE thread_id = ?`,
    ).run(...records.threadUpdate(t));
  }

  deleteThread(id: string): boolean {
    this.prepare('DELETE FROM runs WHERE thread_id = ?').run(id);
    return this.prepare('DELETE FROM threads WHERE thread_id = ?').run(id).changes > 0;
  }

  searchThreads(query: ThreadQuery): Page<Thread> {
    const listed = threadSearch('sqlite', query, 'list');
    if (listed.fields.length === 0 || query.limit === 0) return this.page(listed, records.toThread);
    // Listing the threads a field names reads its matches (m); walking the sort order's index and
    // probing each row's fields reads about page × threads / m rows. The walk is cheaper when every
    // field names at least √(page × threads) of them, which a count capped there tells, at a cost
    // bounded by the cap.
    const threads = Number((this.prepare('SELECT max(rowid) AS n FROM threads').get() as Row).n ?? 0);
    const cap = Math.ceil(Math.sqrt((query.offset + query.limit + 1) * Math.max(threads, 1)));
    const common = listed.fields.every((field) => {
      const probe = fieldProbe(field, cap);
      return Number((this.prepare(probe.sql).get(...probe.params) as Row).n) >= cap;
    });
    return this.page(common ? threadSearch('sqlite', query, 'probe') : listed, records.toThread);
  }

  threadIdsOfAssistant(assistantId: string): string[] {
    return (
      this.prepare("SELECT thread_id FROM threads WHERE json_extract(metadata, '$.assistant_id') = ?").all(
        assistantId,
      ) as Row[]
    ).map((row) => String(row.thread_id));
  }

  getRun(id: string): RunRecord | undefined {
    const row = this.prepare('SELECT * FROM runs WHERE run_id = ?').get(id) as Row | undefined;
    return row && records.toRun(row);
  }

  insertRun(r: RunRecord): void {
    this.prepare(
      `INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
       multitask_strategy, error, attempt, temporary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(...records.runInsert(r));
  }

  updateRun(r: RunRecord): void {
    this.prepare(
      'UPDATE runs SET updated_at = ?, status = ?, metadata = ?, kwargs = ?, error = ?, attempt = ? WHERE run_id = ?',
    ).run(...records.runUpdate(r));
  }

  deleteRun(id: string): boolean {
    return this.prepare('DELETE FROM runs WHERE run_id = ?').run(id).changes > 0;
  }

  listRuns(threadId: string, query: RunQuery): RunRecord[] {
    const { sql, params } = runSearch('sqlite', threadId, query);
    return (this.prepare(sql).all(...params) as Row[]).map(records.toRun);
  }

  inflightRuns(threadId: string): RunRecord[] {
    return (
      this.prepare("SELECT * FROM runs WHERE thread_id = ? AND status IN ('pending', 'running') ORDER BY seq").all(
        threadId,
      ) as Row[]
    ).map(records.toRun);
  }

  claimNextRun(owner: string, leaseMs: number, now: string, exclude: ReadonlySet<string>): RunRecord | undefined {
    const candidates = this.prepare(
      `SELECT * FROM runs r WHERE r.status = 'pending' AND r.created_at <= ?
         AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'running')
         AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.thread_id = r.thread_id AND p.status = 'pending' AND p.seq < r.seq)
         ORDER BY r.created_at, r.seq LIMIT 64`,
    ).all(now) as Row[];
    // The update is conditional, so that of several processes sharing the database file only one
    // takes a run; the lease is set by the same statement.
    for (const row of candidates) {
      if (exclude.has(String(row.run_id))) continue;
      const run = claimedRun(records.toRun(row), now);
      const taken = this.prepare(
        `UPDATE runs SET status = 'running', attempt = ?, updated_at = ?, lease_owner = ?, lease_expires_at = ?
         WHERE run_id = ? AND status = 'pending'`,
      ).run(run.attempt, now, owner, leaseExpiry(now, leaseMs), run.run_id).changes;
      if (taken === 1) return run;
    }
    return undefined;
  }

  renewLeases(owner: string, runIds: readonly string[], leaseMs: number, now: string): string[] {
    const renew = this.prepare(
      "UPDATE runs SET lease_expires_at = ? WHERE run_id = ? AND lease_owner = ? AND status = 'running'",
    );
    const until = leaseExpiry(now, leaseMs);
    return runIds.filter((id) => renew.run(until, id, owner).changes === 1);
  }

  reclaimExpired(
    now: string,
    error: { error: string; message: string },
    options: { everyLease?: boolean } = {},
  ): RunRecord[] {
    const expired = options.everyLease ? '' : 'AND (lease_expires_at IS NULL OR lease_expires_at <= ?)';
    const params = options.everyLease ? [] : [now];
    const rows = this.prepare(`SELECT * FROM runs WHERE status = 'running' ${expired} ORDER BY seq`).all(
      ...params,
    ) as Row[];
    const settle = this.prepare(
      `UPDATE runs SET status = 'error', error = ?, updated_at = ?, lease_owner = NULL, lease_expires_at = NULL
       WHERE run_id = ? AND status = 'running' ${expired}`,
    );
    const reclaimed: RunRecord[] = [];
    // Conditional, as a claim is: of several processes sharing the file, one settles each run.
    for (const row of rows) {
      if (settle.run(json(error), now, row.run_id, ...params).changes !== 1) continue;
      reclaimed.push({ ...records.toRun(row), status: 'error', error, updated_at: now });
    }
    return reclaimed;
  }

  nextDueRun(now: string): string | undefined {
    const row = this.prepare("SELECT MIN(created_at) AS at FROM runs WHERE status = 'pending' AND created_at > ?").get(
      now,
    ) as Row;
    return (row.at as string | null) ?? undefined;
  }

  runsWithStatus(status: RunStatus): RunRecord[] {
    return (this.prepare('SELECT * FROM runs WHERE status = ? ORDER BY seq').all(status) as Row[]).map(records.toRun);
  }

  truncate(what: { runs?: boolean; threads?: boolean; assistants?: boolean }, keep: ReadonlySet<string>): void {
    if (what.runs) this.prepare('DELETE FROM runs').run();
    if (what.threads) {
      this.prepare('DELETE FROM runs').run();
      this.prepare('DELETE FROM threads').run();
    }
    if (what.assistants) {
      const ids = (this.prepare('SELECT assistant_id FROM assistants').all() as Row[]).map((row) =>
        String(row.assistant_id),
      );
      for (const id of ids) if (!keep.has(id)) this.deleteAssistant(id);
    }
  }
}

/**
 * Opens (creating or migrating if needed) the database file; `:memory:` works for tests. Calls are
 * serialised by a mutex, which a transaction holds from `BEGIN IMMEDIATE` to its end, so a
 * transaction may await between statements without other callers interleaving; across processes
 * SQLite's write lock does the same.
 */
export function openSqliteStorage(path: string): Storage {
  const { db } = openSqliteFile(path, AGENT_MIGRATIONS);
  registerSqliteFilterFunctions(db);
  const mutex = new Mutex();
  const ops = new SqliteOps(db);
  const inside = bindOperations(ops, async (run) => run());
  let closed = false;
  return composeStorage(
    bindOperations(ops, (run) => mutex.run(run)),
    {
      transaction: <T>(fn: (tx: typeof inside) => Promise<T>): Promise<T> =>
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
        await mutex.run(() => db.close());
      },
    },
  );
}
