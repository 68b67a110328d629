// Crons in the embedded SQLite database (the `crons` table beside threads and runs). A cron goes
// with its thread and its assistant: triggers delete it when either is deleted. The tick claim is a
// compare-and-set UPDATE on `next_run_date`; SQLite serialises writers across connections and
// processes, so exactly one claimer of a tick sees its row change.

import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import type { CronRecord } from './crons.ts';
import { RecordCodec, json } from './records.ts';
import type { Row } from './records.ts';

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

/** A JSON column's value (null for SQL NULL). */
const parse = <T>(text: unknown): T | null =>
  text === null || text === undefined ? null : (JSON.parse(String(text)) as T);

/** Records to and from SQLite's rows: JSON columns hold text, booleans are 0 and 1. */
export const records = new RecordCodec({
  readJson: parse,
  readBool: (value) => Number(value) === 1,
  writeNullableJson: json,
  writeBool: (value) => (value ? 1 : 0),
});

/**
 * The cron operations, synchronous; the storage's operations (`sqlite.ts`) extend them, and
 * `openSqliteStorage` serialises access.
 */
export class SqliteCronOps {
  // Statements are compiled once and reused: preparing is a noticeable share of a run's cost.
  private readonly statements = new Map<string, Statement>();

  constructor(protected readonly db: SqliteDatabase) {}

  protected prepare(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  getCron(id: string): CronRecord | undefined {
    const row = this.prepare('SELECT * FROM crons WHERE cron_id = ?').get(id) as Row | undefined;
    return row && records.toCron(row);
  }

  insertCron(c: CronRecord): void {
    this.prepare(
      `INSERT INTO crons (cron_id, assistant_id, thread_id, on_run_completed, end_time, schedule, timezone,
       created_at, updated_at, user_id, payload, next_run_date, metadata, enabled, auth)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(...records.cronInsert(c));
  }

  updateCron(c: CronRecord): void {
    this.prepare(
      `UPDATE crons SET assistant_id = ?, thread_id = ?, on_run_completed = ?, end_time = ?, schedule = ?,
       timezone = ?, updated_at = ?, user_id = ?, payload = ?, next_run_date = ?, metadata = ?, enabled = ?, auth = ?
       WHERE cron_id = ?`,
    ).run(...records.cronUpdate(c));
  }

  deleteCron(id: string): boolean {
    return this.prepare('DELETE FROM crons WHERE cron_id = ?').run(id).changes > 0;
  }

  dueCrons(now: string, limit: number): CronRecord[] {
    return (
      this.prepare(
        `SELECT * FROM crons WHERE enabled = 1 AND next_run_date IS NOT NULL AND next_run_date <= ?
         AND (end_time IS NULL OR end_time >= ?) ORDER BY next_run_date LIMIT ?`,
      ).all(now, now, limit) as Row[]
    ).map(records.toCron);
  }

  earliestCronRun(): string | undefined {
    const row = this.prepare(
      `SELECT MIN(next_run_date) AS at FROM crons WHERE enabled = 1 AND next_run_date IS NOT NULL
       AND (end_time IS NULL OR end_time >= next_run_date)`,
    ).get() as Row;
    return (row.at as string | null) ?? undefined;
  }

  claimCronTick(id: string, expected: string, next: string | null, now: string): boolean {
    return (
      this.prepare(
        'UPDATE crons SET next_run_date = ?, updated_at = ? WHERE cron_id = ? AND enabled = 1 AND next_run_date = ?',
      ).run(next, now, id, expected).changes === 1
    );
  }
}
