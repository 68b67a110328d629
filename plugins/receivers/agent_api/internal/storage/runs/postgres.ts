// Runs, their queue and their leases in PostgreSQL. Writes of a run lock its thread, as thread
// writes do; claims are one `UPDATE … FOR UPDATE SKIP LOCKED`, lease renewal and recovery
// conditional updates, so that concurrent servers each take (or settle) a different run.

import { json, str } from '../records.ts';
import type { Row } from '../records.ts';
import { runSearch } from '../search-queries.ts';
import { records } from '../postgres-session.ts';
import type { PostgresSession } from '../postgres-session.ts';
import { leaseExpiry } from '../storage.ts';
import type { RunQuery, RunRecord, RunRepository, RunStatus } from '../storage.ts';

export class PostgresRuns implements RunRepository {
  constructor(private readonly s: PostgresSession) {}

  async get(id: string): Promise<RunRecord | undefined> {
    const [row] = await this.s.rows('SELECT * FROM runs WHERE run_id = $1', [id]);
    if (!row || !this.s.lacks(`thread:${String(row.thread_id)}`)) return row && records.toRun(row);
    // In a transaction, the run is read again once its thread is locked: what was read before
    // may have been changed by the transaction that held the lock.
    await this.s.lockThread(String(row.thread_id));
    return this.get(id);
  }

  async insert(r: RunRecord): Promise<void> {
    await this.s.lockThread(r.thread_id);
    await this.s.one((client) =>
      client.query(
        `INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
         multitask_strategy, error, attempt, temporary) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        records.runInsert(r),
      ),
    );
  }

  async update(r: RunRecord): Promise<void> {
    await this.s.lockThread(r.thread_id);
    await this.s.one((client) =>
      client.query(
        'UPDATE runs SET updated_at = $1, status = $2, metadata = $3, kwargs = $4, error = $5, attempt = $6 WHERE run_id = $7',
        records.runUpdate(r),
      ),
    );
  }

  async delete(id: string): Promise<boolean> {
    return this.s.one(
      async (client) => ((await client.query('DELETE FROM runs WHERE run_id = $1', [id])).rowCount ?? 0) > 0,
    );
  }

  async list(threadId: string, query: RunQuery): Promise<RunRecord[]> {
    await this.s.lockThread(threadId);
    const { sql, params } = runSearch('postgres', threadId, query);
    return (await this.s.rows(sql, params)).map(records.toRun);
  }

  async inflight(threadId: string): Promise<RunRecord[]> {
    await this.s.lockThread(threadId);
    return (
      await this.s.rows("SELECT * FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY seq", [
        threadId,
      ])
    ).map(records.toRun);
  }

  async withStatus(status: RunStatus): Promise<RunRecord[]> {
    return (await this.s.rows('SELECT * FROM runs WHERE status = $1 ORDER BY seq', [status])).map(records.toRun);
  }

  async claimNext(
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
      await this.s.one((client) =>
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
    const renewed = await this.s.one(
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
    const rows = await this.s.one(
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

  async nextDue(now: string): Promise<string | undefined> {
    const [row] = await this.s.rows(
      "SELECT MIN(created_at) AS at FROM runs WHERE status = 'pending' AND created_at > $1",
      [now],
    );
    return str(row?.at) ?? undefined;
  }
}
