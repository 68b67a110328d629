// Runs, their queue and their leases in the embedded SQLite database. Claims and lease recovery
// are conditional updates, so that of several processes sharing the database file only one takes
// (or settles) each run.

import { claimedRun, json } from '../records.ts';
import type { Row } from '../records.ts';
import { runSearch } from '../search-queries.ts';
import { records } from '../sqlite-session.ts';
import type { SqliteSession } from '../sqlite-session.ts';
import { leaseExpiry } from '../storage.ts';
import type { RunQuery, RunRecord, RunRepository, RunStatus } from '../storage.ts';

export class SqliteRuns implements RunRepository {
  constructor(private readonly session: SqliteSession) {}

  get(id: string): Promise<RunRecord | undefined> {
    return this.session.run((sql) => {
      const row = sql.prepare('SELECT * FROM runs WHERE run_id = ?').get(id) as Row | undefined;
      return row && records.toRun(row);
    });
  }

  insert(r: RunRecord): Promise<void> {
    return this.session.run((sql) => {
      sql
        .prepare(
          `INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
           multitask_strategy, error, attempt, temporary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(...records.runInsert(r));
    });
  }

  update(r: RunRecord): Promise<void> {
    return this.session.run((sql) => {
      sql
        .prepare(
          'UPDATE runs SET updated_at = ?, status = ?, metadata = ?, kwargs = ?, error = ?, attempt = ? WHERE run_id = ?',
        )
        .run(...records.runUpdate(r));
    });
  }

  delete(id: string): Promise<boolean> {
    return this.session.run((sql) => sql.prepare('DELETE FROM runs WHERE run_id = ?').run(id).changes > 0);
  }

  list(threadId: string, query: RunQuery): Promise<RunRecord[]> {
    return this.session.run((sql) => {
      const { sql: text, params } = runSearch('sqlite', threadId, query);
      return (sql.prepare(text).all(...params) as Row[]).map(records.toRun);
    });
  }

  inflight(threadId: string): Promise<RunRecord[]> {
    return this.session.run((sql) =>
      (
        sql
          .prepare("SELECT * FROM runs WHERE thread_id = ? AND status IN ('pending', 'running') ORDER BY seq")
          .all(threadId) as Row[]
      ).map(records.toRun),
    );
  }

  withStatus(status: RunStatus): Promise<RunRecord[]> {
    return this.session.run((sql) =>
      (sql.prepare('SELECT * FROM runs WHERE status = ? ORDER BY seq').all(status) as Row[]).map(records.toRun),
    );
  }

  claimNext(owner: string, leaseMs: number, now: string, exclude: ReadonlySet<string>): Promise<RunRecord | undefined> {
    return this.session.run((sql) => {
      const candidates = sql
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
        const run = claimedRun(records.toRun(row), now);
        const taken = sql
          .prepare(
            `UPDATE runs SET status = 'running', attempt = ?, updated_at = ?, lease_owner = ?, lease_expires_at = ?
             WHERE run_id = ? AND status = 'pending'`,
          )
          .run(run.attempt, now, owner, leaseExpiry(now, leaseMs), run.run_id).changes;
        if (taken === 1) return run;
      }
      return undefined;
    });
  }

  renewLeases(owner: string, runIds: readonly string[], leaseMs: number, now: string): Promise<string[]> {
    return this.session.run((sql) => {
      const renew = sql.prepare(
        "UPDATE runs SET lease_expires_at = ? WHERE run_id = ? AND lease_owner = ? AND status = 'running'",
      );
      const until = leaseExpiry(now, leaseMs);
      return runIds.filter((id) => renew.run(until, id, owner).changes === 1);
    });
  }

  reclaimExpired(
    now: string,
    error: { error: string; message: string },
    options: { everyLease?: boolean } = {},
  ): Promise<RunRecord[]> {
    return this.session.run((sql) => {
      const expired = options.everyLease ? '' : 'AND (lease_expires_at IS NULL OR lease_expires_at <= ?)';
      const params = options.everyLease ? [] : [now];
      const rows = sql
        .prepare(`SELECT * FROM runs WHERE status = 'running' ${expired} ORDER BY seq`)
        .all(...params) as Row[];
      const settle = sql.prepare(
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
    });
  }

  nextDue(now: string): Promise<string | undefined> {
    return this.session.run((sql) => {
      const row = sql
        .prepare("SELECT MIN(created_at) AS at FROM runs WHERE status = 'pending' AND created_at > ?")
        .get(now) as Row;
      return (row.at as string | null) ?? undefined;
    });
  }
}
