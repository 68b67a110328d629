// Crons in the embedded SQLite database (the `crons` table beside threads and runs). A cron goes
// with its thread and its assistant: triggers delete it when either is deleted. The tick claim is a
// compare-and-set UPDATE on `next_run_date`; SQLite serialises writers across connections and
// processes, so exactly one claimer of a tick sees its row change.

import type { CronQuery, CronRecord } from '../crons.ts';
import type { Row } from '../records.ts';
import { cronSearch } from '../search-queries.ts';
import { records } from '../sqlite-session.ts';
import type { SqliteSession } from '../sqlite-session.ts';
import type { CronRepository, Page } from '../storage.ts';

export const CRON_SCHEMA = `
CREATE TABLE IF NOT EXISTS crons (
  cron_id TEXT PRIMARY KEY, assistant_id TEXT NOT NULL, thread_id TEXT, on_run_completed TEXT,
  end_time TEXT, schedule TEXT NOT NULL, timezone TEXT, created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL, user_id TEXT, payload TEXT NOT NULL, next_run_date TEXT,
  metadata TEXT NOT NULL, enabled INTEGER NOT NULL, auth TEXT);
CREATE INDEX IF NOT EXISTS crons_due ON crons (next_run_date) WHERE enabled = 1;
CREATE INDEX IF NOT EXISTS crons_thread ON crons (thread_id);
CREATE INDEX IF NOT EXISTS crons_assistant ON crons (assistant_id);
CREATE TRIGGER IF NOT EXISTS crons_of_thread AFTER DELETE ON threads
  BEGIN DELETE FROM crons WHERE thread_id = OLD.thread_id; END;
CREATE TRIGGER IF NOT EXISTS crons_of_assistant AFTER DELETE ON assistants
  BEGIN DELETE FROM crons WHERE assistant_id = OLD.assistant_id; END;
`;

export class SqliteCrons implements CronRepository {
  constructor(private readonly session: SqliteSession) {}

  get(id: string): Promise<CronRecord | undefined> {
    return this.session.run((sql) => {
      const row = sql.prepare('SELECT * FROM crons WHERE cron_id = ?').get(id) as Row | undefined;
      return row && records.toCron(row);
    });
  }

  insert(c: CronRecord): Promise<void> {
    return this.session.run((sql) => {
      sql
        .prepare(
          `INSERT INTO crons (cron_id, assistant_id, thread_id, on_run_completed, end_time, schedule, timezone,
           created_at, updated_at, user_id, payload, next_run_date, metadata, enabled, auth)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(...records.cronInsert(c));
    });
  }

  update(c: CronRecord): Promise<void> {
    return this.session.run((sql) => {
      sql
        .prepare(
          `UPDATE crons SET assistant_id = ?, thread_id = ?, on_run_completed = ?, end_time = ?, schedule = ?,
           timezone = ?, updated_at = ?, user_id = ?, payload = ?, next_run_date = ?, metadata = ?, enabled = ?, auth = ?
           WHERE cron_id = ?`,
        )
        .run(...records.cronUpdate(c));
    });
  }

  delete(id: string): Promise<boolean> {
    return this.session.run((sql) => sql.prepare('DELETE FROM crons WHERE cron_id = ?').run(id).changes > 0);
  }

  search(query: CronQuery): Promise<Page<CronRecord>> {
    return this.session.run((sql) => sql.page(cronSearch('sqlite', query), records.toCron));
  }

  due(now: string, limit: number): Promise<CronRecord[]> {
    return this.session.run((sql) =>
      (
        sql
          .prepare(
            `SELECT * FROM crons WHERE enabled = 1 AND next_run_date IS NOT NULL AND next_run_date <= ?
             AND (end_time IS NULL OR end_time >= ?) ORDER BY next_run_date LIMIT ?`,
          )
          .all(now, now, limit) as Row[]
      ).map(records.toCron),
    );
  }

  earliestRun(): Promise<string | undefined> {
    return this.session.run((sql) => {
      const row = sql
        .prepare(
          `SELECT MIN(next_run_date) AS at FROM crons WHERE enabled = 1 AND next_run_date IS NOT NULL
           AND (end_time IS NULL OR end_time >= next_run_date)`,
        )
        .get() as Row;
      return (row.at as string | null) ?? undefined;
    });
  }

  claimTick(id: string, expected: string, next: string | null, now: string): Promise<boolean> {
    return this.session.run(
      (sql) =>
        sql
          .prepare(
            'UPDATE crons SET next_run_date = ?, updated_at = ? WHERE cron_id = ? AND enabled = 1 AND next_run_date = ?',
          )
          .run(next, now, id, expected).changes === 1,
    );
  }
}
