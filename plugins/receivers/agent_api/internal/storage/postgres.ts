// The PostgreSQL storage (`pg`, one pool): the same contract as the embedded SQLite one, for
// several server processes sharing one database. There is no lock per database: a transaction is
// "as if one at a time" per thread (and per assistant), because its first operation on a thread
// takes a transaction-scoped advisory lock on that thread's id (`lock`), which another transaction
// on the same thread waits for; transactions on other threads run side by side. Operations outside
// a transaction are single statements (or a few that commit together): run claims are one
// `UPDATE … FOR UPDATE SKIP LOCKED`, cron ticks and lease recovery conditional updates. Searches are single statements (`search-queries.ts`) answered from indexes: JSONB `@>`
// on GIN, sort columns in byte order (`COLLATE "C"`), as the SQLite backend orders them.

import pg from 'pg';
import type { PoolClient } from 'pg';
import type { CronQuery, CronRecord } from './crons.ts';
import { RecordCodec, json, str } from './records.ts';
import type { Row } from './records.ts';
import { assistantSearch, cronSearch, runSearch, settlePage, threadSearch, versionSearch } from './search-queries.ts';
import type { SearchStatements } from './search-queries.ts';
import { composeStorage, leaseExpiry } from './storage.ts';
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
  StorageOps,
  Thread,
  ThreadQuery,
} from './storage.ts';

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
    // The items of the LangGraph store (`store-postgres.ts`), as `store.sqlite` keeps them.
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

/** Records to and from PostgreSQL's rows: `pg` parses JSONB columns and reads booleans as such. */
const records = new RecordCodec({
  readJson: <T>(value: unknown) => (value ?? null) as T | null,
  readBool: (value) => value === true,
  writeNullableJson: (value) => (value === null ? null : json(value)),
  writeBool: (value) => value,
});

/**
 * Runs statements: on one transaction's client, or on a pooled client, in a transaction of their
 * own when `together` (several statements that must commit together) and on their own otherwise.
 */
type Session = <T>(together: boolean, fn: (client: PoolClient) => Promise<T>) => Promise<T>;

/**
 * The locks a transaction holds (advisory, released at its end), by key: `thread:<id>`,
 * `assistant:<id>`. Outside a transaction there are none: each operation is one statement, or
 * several committed together.
 */
type HeldLocks = Set<string>;

class PostgresOps implements StorageOps {
  constructor(
    private readonly session: Session,
    private readonly held?: HeldLocks,
  ) {}

  private async rows(sql: string, params: unknown[] = []): Promise<Row[]> {
    return this.session(false, async (client) => (await client.query(sql, params)).rows as Row[]);
  }

  /** Statements that commit together. */
  private write<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.session(true, fn);
  }

  /** One statement, atomic on its own. */
  private one<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.session(false, fn);
  }

  /**
   * In a transaction, takes the lock `key` until the transaction ends (once: a transaction holds
   * each lock at most once); outside one, nothing. This is what keeps a transaction "as if one at
   * a time" for the thread (or assistant) it reads and then writes: another transaction on the
   * same thread waits here, before its first read of it, and reads what this one committed.
   * `shared`: readers that only need the row to stay (runs created for an assistant) share it.
   */
  private async lock(key: string, shared = false): Promise<void> {
    if (!this.held || this.held.has(key) || (shared && this.held.has(`${key}#shared`))) return;
    this.held.add(shared ? `${key}#shared` : key);
    const take = shared ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
    await this.session(false, (client) => client.query(`SELECT ${take}(hashtextextended($1, 0))`, [key]));
  }

  private lockThread(threadId: string): Promise<void> {
    return this.lock(`thread:${threadId}`);
  }

  async lockAssistant(assistantId: string): Promise<void> {
    await this.lock(`assistant:${assistantId}`);
  }

  async getAssistant(id: string): Promise<Assistant | undefined> {
    await this.lock(`assistant:${id}`, true);
    const [row] = await this.rows('SELECT * FROM assistants WHERE assistant_id = $1', [id]);
    return row && records.toAssistant(row);
  }

  async insertAssistant(a: Assistant): Promise<void> {
    await this.lockAssistant(a.assistant_id);
    await this.write(async (client) => {
      await client.query(
        `INSERT INTO assistants (assistant_id, graph_id, name, description, version, config, context, metadata, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        records.assistantInsert(a),
      );
      await insertVersion(client, a);
    });
  }

  async updateAssistant(a: Assistant): Promise<void> {
    await this.lockAssistant(a.assistant_id);
    await this.one((client) =>
      client.query(
        `UPDATE assistants SET graph_id = $1, name = $2, description = $3, version = $4, config = $5, context = $6,
         metadata = $7, updated_at = $8 WHERE assistant_id = $9`,
        records.assistantUpdate(a),
      ),
    );
  }

  async insertAssistantVersion(v: AssistantVersion): Promise<void> {
    await this.lockAssistant(v.assistant_id);
    await this.one((client) => insertVersion(client, v));
  }

  async getAssistantVersion(id: string, version: number): Promise<AssistantVersion | undefined> {
    const [row] = await this.rows('SELECT * FROM assistant_versions WHERE assistant_id = $1 AND version = $2', [
      id,
      version,
    ]);
    return row && records.toVersion(row);
  }

  async maxAssistantVersion(id: string): Promise<number> {
    await this.lockAssistant(id);
    const [row] = await this.rows('SELECT MAX(version) AS v FROM assistant_versions WHERE assistant_id = $1', [id]);
    return Number(row?.v ?? 0);
  }

  async listAssistantVersions(
    id: string,
    query: { metadata?: JsonObject; limit: number; offset: number },
  ): Promise<AssistantVersion[]> {
    const { sql, params } = versionSearch('postgres', id, query);
    return (await this.rows(sql, params)).map(records.toVersion);
  }

  async searchAssistants(query: AssistantQuery): Promise<Page<Assistant>> {
    return this.page(assistantSearch('postgres', query), records.toAssistant);
  }

  /** A search's page and its total (`settlePage`: counted only when the page does not tell it). */
  private async page<T>(search: SearchStatements, toRecord: (row: Row) => T): Promise<Page<T>> {
    const read = search.limit > 0 ? await this.rows(search.page.sql, search.page.params) : [];
    const { rows, total } = settlePage(search, read);
    const counted = total ?? Number((await this.rows(search.count.sql, search.count.params))[0]?.total);
    return { items: rows.map(toRecord), total: counted };
  }

  async deleteAssistant(id: string): Promise<boolean> {
    await this.lockAssistant(id);
    return this.write((client) => deleteAssistant(client, id));
  }

  async getThread(id: string): Promise<Thread | undefined> {
    await this.lockThread(id);
    const [row] = await this.rows('SELECT * FROM threads WHERE thread_id = $1', [id]);
    return row && records.toThread(row);
  }

  async insertThread(t: Thread): Promise<void> {
    await this.lockThread(t.thread_id);
    await this.one((client) =>
      client.query(
        `INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        records.threadInsert(t),
      ),
    );
  }

  async updateThread(t: Thread): Promise<void> {
    await this.lockThread(t.thread_id);
    await this.one((client) =>
      client.query(
        `UPDATE threads SET updated_at = $1, metadata = $2, status = $3, config = $4, state_values = $5, interrupts = $6
         WHERE thread_id = $7`,
        records.threadUpdate(t),
      ),
    );
  }

  async deleteThread(id: string): Promise<boolean> {
    await this.lockThread(id);
    return this.write(async (client) => {
      await client.query('DELETE FROM runs WHERE thread_id = $1', [id]);
      await client.query('DELETE FROM crons WHERE thread_id = $1', [id]);
      return ((await client.query('DELETE FROM threads WHERE thread_id = $1', [id])).rowCount ?? 0) > 0;
    });
  }

  async searchThreads(query: ThreadQuery): Promise<Page<Thread>> {
    return this.page(threadSearch('postgres', query), records.toThread);
  }

  async threadIdsOfAssistant(assistantId: string): Promise<string[]> {
    return (await this.rows("SELECT thread_id FROM threads WHERE metadata->>'assistant_id' = $1", [assistantId])).map(
      (row) => String(row.thread_id),
    );
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const [row] = await this.rows('SELECT * FROM runs WHERE run_id = $1', [id]);
    if (!row || !this.held || this.held.has(`thread:${String(row.thread_id)}`)) return row && records.toRun(row);
    // In a transaction, the run is read again once its thread is locked: what was read before
    // may have been changed by the transaction that held the lock.
    await this.lockThread(String(row.thread_id));
    return this.getRun(id);
  }

  async insertRun(r: RunRecord): Promise<void> {
    await this.lockThread(r.thread_id);
    await this.one((client) =>
      client.query(
        `INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
         multitask_strategy, error, attempt, temporary) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        records.runInsert(r),
      ),
    );
  }

  async updateRun(r: RunRecord): Promise<void> {
    await this.lockThread(r.thread_id);
    await this.one((client) =>
      client.query(
        'UPDATE runs SET updated_at = $1, status = $2, metadata = $3, kwargs = $4, error = $5, attempt = $6 WHERE run_id = $7',
        records.runUpdate(r),
      ),
    );
  }

  async deleteRun(id: string): Promise<boolean> {
    return this.one(
      async (client) => ((await client.query('DELETE FROM runs WHERE run_id = $1', [id])).rowCount ?? 0) > 0,
    );
  }

  async listRuns(threadId: string, query: RunQuery): Promise<RunRecord[]> {
    await this.lockThread(threadId);
    const { sql, params } = runSearch('postgres', threadId, query);
    return (await this.rows(sql, params)).map(records.toRun);
  }

  async inflightRuns(threadId: string): Promise<RunRecord[]> {
    await this.lockThread(threadId);
    return (
      await this.rows("SELECT * FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY seq", [
        threadId,
      ])
    ).map(records.toRun);
  }

  async claimNextRun(
    owner: string,
    leaseMs: number,
    now: string,
    exclude: ReadonlySet<string>,
  ): Promise<RunRecord | undefined> {
    // One statement: the oldest due run whose thread has nothing running and no older pending run,
    // locked with SKIP LOCKED so that concurrent claimers (in this process or others) each take a
    // different row instead of queueing on the same one, and claimed by the same statement, with
    // its lease. A claimer that read the thread before another claim committed still picks the
    // same (oldest) run of it, which it then skips: a thread's runs start one at a time, in order.
    const [row] = (
      await this.one((client) =>
        client.query(
          `UPDATE runs SET status = 'running', attempt = attempt + 1, updated_at = $1, lease_owner = $2,
             lease_expires_at = $3
           WHERE seq = (
             SELECT r.seq FROM runs r WHERE r.status = 'pending' AND r.created_at <= $1
               AND NOT (r.run_id = ANY($4::text[]))
               AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = r.thread_id AND o.status = 'running')
               AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.thread_id = r.thread_id AND p.status = 'pending'
                 AND p.seq < r.seq)
             ORDER BY r.created_at, r.seq LIMIT 1 FOR UPDATE SKIP LOCKED)
           AND status = 'pending'
           RETURNING *`,
          [now, owner, leaseExpiry(now, leaseMs), [...exclude]],
        ),
      )
    ).rows as Row[];
    return row && records.toRun(row);
  }

  async renewLeases(owner: string, runIds: readonly string[], leaseMs: number, now: string): Promise<string[]> {
    if (runIds.length === 0) return [];
    const renewed = await this.one(
      async (client) =>
        (
          await client.query(
            `UPDATE runs SET lease_expires_at = $1 WHERE run_id = ANY($2::text[]) AND lease_owner = $3
             AND status = 'running' RETURNING run_id`,
            [leaseExpiry(now, leaseMs), [...runIds], owner],
          )
        ).rows as Row[],
    );
    const ids = new Set(renewed.map((row) => String(row.run_id)));
    return runIds.filter((id) => ids.has(id));
  }

  async reclaimExpired(
    now: string,
    error: { error: string; message: string },
    options: { everyLease?: boolean } = {},
  ): Promise<RunRecord[]> {
    // One conditional update: of several processes, one settles each run (a second updater waits
    // for the first's row lock, then finds the run no longer running).
    const expired = options.everyLease ? '' : 'AND (lease_expires_at IS NULL OR lease_expires_at <= $3)';
    const rows = await this.one(
      async (client) =>
        (
          await client.query(
            `UPDATE runs SET status = 'error', error = $1, updated_at = $2, lease_owner = NULL, lease_expires_at = NULL
             WHERE status = 'running' ${expired} RETURNING *`,
            options.everyLease ? [json(error), now] : [json(error), now, now],
          )
        ).rows as Row[],
    );
    return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map(records.toRun);
  }

  async nextDueRun(now: string): Promise<string | undefined> {
    const [row] = await this.rows(
      "SELECT MIN(created_at) AS at FROM runs WHERE status = 'pending' AND created_at > $1",
      [now],
    );
    return str(row?.at) ?? undefined;
  }

  async runsWithStatus(status: RunStatus): Promise<RunRecord[]> {
    return (await this.rows('SELECT * FROM runs WHERE status = $1 ORDER BY seq', [status])).map(records.toRun);
  }

  async truncate(what: { runs?: boolean; threads?: boolean; assistants?: boolean }, keep: ReadonlySet<string>) {
    await this.write(async (client) => {
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
    });
  }

  async getCron(id: string): Promise<CronRecord | undefined> {
    const [row] = await this.rows('SELECT * FROM crons WHERE cron_id = $1', [id]);
    return row && records.toCron(row);
  }

  async insertCron(c: CronRecord): Promise<void> {
    await this.one((client) =>
      client.query(
        `INSERT INTO crons (cron_id, assistant_id, thread_id, on_run_completed, end_time, schedule, timezone,
         created_at, updated_at, user_id, payload, next_run_date, metadata, enabled, auth)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
        records.cronInsert(c),
      ),
    );
  }

  async updateCron(c: CronRecord): Promise<void> {
    await this.one((client) =>
      client.query(
        `UPDATE crons SET assistant_id = $1, thread_id = $2, on_run_completed = $3, end_time = $4, schedule = $5,
         timezone = $6, updated_at = $7, user_id = $8, payload = $9, next_run_date = $10, metadata = $11, enabled = $12,
         auth = $13 WHERE cron_id = $14`,
        records.cronUpdate(c),
      ),
    );
  }

  async deleteCron(id: string): Promise<boolean> {
    return this.one(
      async (client) => ((await client.query('DELETE FROM crons WHERE cron_id = $1', [id])).rowCount ?? 0) > 0,
    );
  }

  async searchCrons(query: CronQuery): Promise<Page<CronRecord>> {
    return this.page(cronSearch('postgres', query), records.toCron);
  }

  async dueCrons(now: string, limit: number): Promise<CronRecord[]> {
    return (
      await this.rows(
        `SELECT * FROM crons WHERE enabled AND next_run_date IS NOT NULL AND next_run_date <= $1
         AND (end_time IS NULL OR end_time >= $1) ORDER BY next_run_date COLLATE "C" LIMIT $2`,
        [now, limit],
      )
    ).map(records.toCron);
  }

  async earliestCronRun(): Promise<string | undefined> {
    const [row] = await this.rows(
      `SELECT MIN(next_run_date COLLATE "C") AS at FROM crons WHERE enabled AND next_run_date IS NOT NULL
       AND (end_time IS NULL OR end_time >= next_run_date)`,
    );
    return str(row?.at) ?? undefined;
  }

  async claimCronTick(id: string, expected: string, next: string | null, now: string): Promise<boolean> {
    return this.one(
      async (client) =>
        (
          await client.query(
            'UPDATE crons SET next_run_date = $1, updated_at = $2 WHERE cron_id = $3 AND enabled AND next_run_date = $4',
            [next, now, id, expected],
          )
        ).rowCount === 1,
    );
  }
}

async function insertVersion(client: PoolClient, v: AssistantVersion): Promise<void> {
  await client.query(
    `INSERT INTO assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    records.versionInsert(v),
  );
}

async function deleteAssistant(client: PoolClient, id: string): Promise<boolean> {
  await client.query('DELETE FROM assistant_versions WHERE assistant_id = $1', [id]);
  await client.query('DELETE FROM runs WHERE assistant_id = $1', [id]);
  await client.query('DELETE FROM crons WHERE assistant_id = $1', [id]);
  return ((await client.query('DELETE FROM assistants WHERE assistant_id = $1', [id])).rowCount ?? 0) > 0;
}

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
  const outside: Session = async (together, fn) => {
    const client = await pool.connect();
    try {
      // A single statement commits on its own: no BEGIN and COMMIT round trips around it.
      return together ? await inTransaction(client, () => fn(client)) : await fn(client);
    } finally {
      brokenClients.release(client);
    }
  };
  return composeStorage(new PostgresOps(outside), {
    transaction: async (fn) => {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        try {
          const inside: Session = async (_together, body) => body(client);
          return await inTransaction(client, () => fn(new PostgresOps(inside, new Set())));
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
