// The embedded storage: one SQLite file (better-sqlite3, WAL) holding assistants, their versions,
// threads and runs. JSON columns hold the free-form objects; metadata filters are applied in
// process, which suits the single-node, development-sized deployments this backend is for.

import { matchesAuthFilters } from '../auth/filters.ts';
import { containsJson } from './json-match.ts';
import { Mutex } from './mutex.ts';
import { CRON_SCHEMA, SqliteCronOps } from './sqlite-crons.ts';
import { openSqliteFile } from './sqlite-file.ts';
import type { SqliteMigration } from './sqlite-file.ts';
import { bindOperations, composeStorage, leaseExpiry } from './storage.ts';
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
];

type Row = Record<string, unknown>;

/** A JSON column read back; its type is the record field it fills (the storage wrote it from one). */
const parse = <T>(text: unknown): T => (text === null || text === undefined ? null : JSON.parse(String(text))) as T;
const json = (value: unknown): string => JSON.stringify(value ?? null);

function toAssistant(row: Row): Assistant {
  return {
    assistant_id: String(row.assistant_id),
    graph_id: String(row.graph_id),
    name: String(row.name),
    description: (row.description as string | null) ?? null,
    version: Number(row.version),
    config: parse(row.config) ?? {},
    context: parse(row.context),
    metadata: parse(row.metadata) ?? {},
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
  };
}

function toVersion(row: Row): AssistantVersion {
  return {
    assistant_id: String(row.assistant_id),
    version: Number(row.version),
    graph_id: String(row.graph_id),
    name: String(row.name),
    description: (row.description as string | null) ?? null,
    config: parse(row.config) ?? {},
    context: parse(row.context),
    metadata: parse(row.metadata) ?? {},
    created_at: String(row.created_at),
  };
}

function toThread(row: Row): Thread {
  return {
    thread_id: String(row.thread_id),
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
    metadata: parse(row.metadata) ?? {},
    status: row.status as Thread['status'],
    config: parse(row.config) ?? {},
    values: parse(row.state_values),
    interrupts: parse(row.interrupts),
  };
}

function toRun(row: Row): RunRecord {
  return {
    run_id: String(row.run_id),
    thread_id: String(row.thread_id),
    assistant_id: String(row.assistant_id),
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
    status: row.status as RunStatus,
    metadata: parse(row.metadata) ?? {},
    kwargs: parse(row.kwargs) ?? {},
    multitask_strategy: row.multitask_strategy as RunRecord['multitask_strategy'],
    error: parse(row.error),
    attempt: Number(row.attempt),
    temporary: Number(row.temporary) === 1,
  };
}

function compare(a: unknown, b: unknown): number {
  return a === b ? 0 : String(a) < String(b) ? -1 : 1;
}

function page<T>(rows: T[], limit: number, offset: number): Page<T> {
  return { items: rows.slice(offset, offset + limit), total: rows.length };
}

/** The operations, synchronous (crons in `SqliteCronOps`); `openSqliteStorage` serialises access. */
class SqliteOps extends SqliteCronOps implements SynchronousStorageOps {
  getAssistant(id: string): Assistant | undefined {
    const row = this.prepare('SELECT * FROM assistants WHERE assistant_id = ?').get(id) as Row | undefined;
    return row && toAssistant(row);
  }

  insertAssistant(a: Assistant): void {
    this.db
      .prepare(
        `INSERT INTO assistants (assistant_id, graph_id, name, description, version, config, context, metadata, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        a.assistant_id,
        a.graph_id,
        a.name,
        a.description,
        a.version,
        json(a.config),
        json(a.context),
        json(a.metadata),
        a.created_at,
        a.updated_at,
      );
    this.insertAssistantVersion({ ...a });
  }

  updateAssistant(a: Assistant): void {
    this.db
      .prepare(
        `UPDATE assistants SET graph_id = ?, name = ?, description = ?, version = ?, config = ?, context = ?,
         metadata = ?, updated_at = ? WHERE assistant_id = ?`,
      )
      .run(
        a.graph_id,
        a.name,
        a.description,
        a.version,
        json(a.config),
        json(a.context),
        json(a.metadata),
        a.updated_at,
        a.assistant_id,
      );
  }

  insertAssistantVersion(v: AssistantVersion): void {
    this.db
      .prepare(
        `INSERT INTO assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        v.assistant_id,
        v.version,
        v.graph_id,
        v.name,
        v.description,
        json(v.config),
        json(v.context),
        json(v.metadata),
        v.created_at,
      );
  }

  getAssistantVersion(id: string, version: number): AssistantVersion | undefined {
    const row = this.prepare('SELECT * FROM assistant_versions WHERE assistant_id = ? AND version = ?').get(
      id,
      version,
    ) as Row | undefined;
    return row && toVersion(row);
  }

  maxAssistantVersion(id: string): number {
    const row = this.prepare('SELECT MAX(version) AS v FROM assistant_versions WHERE assistant_id = ?').get(id) as Row;
    return Number(row.v ?? 0);
  }

  listAssistantVersions(
    id: string,
    query: { metadata?: JsonObject; limit: number; offset: number },
  ): AssistantVersion[] {
    const rows = (
      this.prepare('SELECT * FROM assistant_versions WHERE assistant_id = ? ORDER BY version DESC').all(id) as Row[]
    )
      .map(toVersion)
      .filter((v) => !query.metadata || containsJson(v.metadata, query.metadata));
    return rows.slice(query.offset, query.offset + query.limit);
  }

  searchAssistants(query: AssistantQuery): Page<Assistant> {
    const rows = (
      query.graph_id !== undefined
        ? (this.prepare('SELECT * FROM assistants WHERE graph_id = ?').all(query.graph_id) as Row[])
        : (this.prepare('SELECT * FROM assistants').all() as Row[])
    )
      .map(toAssistant)
      .filter((a) => query.name === undefined || a.name.toLowerCase().includes(query.name.toLowerCase()))
      .filter((a) => !query.metadata || containsJson(a.metadata, query.metadata))
      .filter((a) => matchesAuthFilters(a.metadata, query.auth));
    const sign = query.sort_order === 'asc' ? 1 : -1;
    rows.sort(
      (a, b) => sign * compare(a[query.sort_by], b[query.sort_by]) || sign * compare(a.assistant_id, b.assistant_id),
    );
    return page(rows, query.limit, query.offset);
  }

  deleteAssistant(id: string): boolean {
    this.prepare('DELETE FROM assistant_versions WHERE assistant_id = ?').run(id);
    this.prepare('DELETE FROM runs WHERE assistant_id = ?').run(id);
    return this.prepare('DELETE FROM assistants WHERE assistant_id = ?').run(id).changes > 0;
  }

  getThread(id: string): Thread | undefined {
    const row = this.prepare('SELECT * FROM threads WHERE thread_id = ?').get(id) as Row | undefined;
    return row && toThread(row);
  }

  insertThread(t: Thread): void {
    this.db
      .prepare(
        `INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        t.thread_id,
        t.created_at,
        t.updated_at,
        json(t.metadata),
        t.status,
        json(t.config),
        json(t.values),
        json(t.interrupts),
      );
  }

  updateThread(t: Thread): void {
    this.db
      .prepare(
        `UPDATE threads SET updated_at = ?, metadata = ?, status = ?, config = ?, state_values = ?, interrupts = ?
         WHERE thread_id = ?`,
      )
      .run(t.updated_at, json(t.metadata), t.status, json(t.config), json(t.values), json(t.interrupts), t.thread_id);
  }

  deleteThread(id: string): boolean {
    this.prepare('DELETE FROM runs WHERE thread_id = ?').run(id);
    return this.prepare('DELETE FROM threads WHERE thread_id = ?').run(id).changes > 0;
  }

  searchThreads(query: ThreadQuery): Page<Thread> {
    const rows = (
      query.status !== undefined
        ? (this.prepare('SELECT * FROM threads WHERE status = ?').all(query.status) as Row[])
        : (this.prepare('SELECT * FROM threads').all() as Row[])
    )
      .map(toThread)
      .filter((t) => !query.ids || query.ids.includes(t.thread_id))
      .filter((t) => !query.metadata || containsJson(t.metadata, query.metadata))
      // Unlike the reference server, a values filter never matches a thread that has no values.
      .filter((t) => !query.values || containsJson(t.values, query.values))
      .filter((t) => matchesAuthFilters(t.metadata, query.auth));
    const sign = query.sort_order === 'asc' ? 1 : -1;
    rows.sort((a, b) => sign * compare(a[query.sort_by], b[query.sort_by]) || sign * compare(a.thread_id, b.thread_id));
    return page(rows, query.limit, query.offset);
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
    return row && toRun(row);
  }

  insertRun(r: RunRecord): void {
    this.db
      .prepare(
        `INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
         multitask_strategy, error, attempt, temporary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        r.run_id,
        r.thread_id,
        r.assistant_id,
        r.created_at,
        r.updated_at,
        r.status,
        json(r.metadata),
        json(r.kwargs),
        r.multitask_strategy,
        r.error ? json(r.error) : null,
        r.attempt,
        r.temporary ? 1 : 0,
      );
  }

  updateRun(r: RunRecord): void {
    this.db
      .prepare(
        'UPDATE runs SET updated_at = ?, status = ?, metadata = ?, kwargs = ?, error = ?, attempt = ? WHERE run_id = ?',
      )
      .run(
        r.updated_at,
        r.status,
        json(r.metadata),
        json(r.kwargs),
        r.error ? json(r.error) : null,
        r.attempt,
        r.run_id,
      );
  }

  deleteRun(id: string): boolean {
    return this.prepare('DELETE FROM runs WHERE run_id = ?').run(id).changes > 0;
  }

  listRuns(threadId: string, query: RunQuery): RunRecord[] {
    const rows = (
      query.status !== undefined
        ? (this.prepare('SELECT * FROM runs WHERE thread_id = ? AND status = ? ORDER BY seq').all(
            threadId,
            query.status,
          ) as Row[])
        : (this.prepare('SELECT * FROM runs WHERE thread_id = ? ORDER BY seq').all(threadId) as Row[])
    )
      .map(toRun)
      .filter((r) => !query.metadata || containsJson(r.metadata, query.metadata));
    return rows.slice(query.offset, query.offset + query.limit);
  }

  inflightRuns(threadId: string): RunRecord[] {
    return (
      this.prepare("SELECT * FROM runs WHERE thread_id = ? AND status IN ('pending', 'running') ORDER BY seq").all(
        threadId,
      ) as Row[]
    ).map(toRun);
  }

  claimNextRun(owner: string, leaseMs: number, now: string, exclude: ReadonlySet<string>): RunRecord | undefined {
    const candidates = this.db
      .prepare(
        `SELECT * FROM runs r WHERE r.status = 'pending' AND r.created_at <= ?
         AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'running')
         AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.thread_id = r.thread_id AND p.status = 'pending' AND p.seq < r.seq)
         ORDER BY r.created_at, r.seq LIMIT 64`,
      )
      .all(now) as Row[];
    // The update is conditional, so that of several processes sharing the database file only one
    // takes a run; the lease is set by the same statement.
    for (const row of candidates) {
      if (exclude.has(String(row.run_id))) continue;
      const run = toRun(row);
      run.status = 'running';
      run.attempt += 1;
      run.updated_at = now;
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
      reclaimed.push({ ...toRun(row), status: 'error', error, updated_at: now });
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
    return (this.prepare('SELECT * FROM runs WHERE status = ? ORDER BY seq').all(status) as Row[]).map(toRun);
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
