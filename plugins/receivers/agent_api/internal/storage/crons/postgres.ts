// Crons in PostgreSQL. The tick claim is a compare-and-set UPDATE on `next_run_date`: of several
// claimers of one tick, exactly one sees its row change.

import type { CronQuery, CronRecord } from '../crons.ts';
import { str } from '../records.ts';
import { cronSearch } from '../search-queries.ts';
import { records } from '../postgres-session.ts';
import type { PostgresSession } from '../postgres-session.ts';
import type { CronRepository, Page } from '../storage.ts';

export class PostgresCrons implements CronRepository {
  constructor(private readonly s: PostgresSession) {}

  async get(id: string): Promise<CronRecord | undefined> {
    const [row] = await this.s.rows('SELECT * FROM crons WHERE cron_id = $1', [id]);
    return row && records.toCron(row);
  }

  async insert(c: CronRecord): Promise<void> {
    await this.s.one((client) =>
      client.query(
        `INSERT INTO crons (cron_id, assistant_id, thread_id, on_run_completed, end_time, schedule, timezone,
         created_at, updated_at, user_id, payload, next_run_date, metadata, enabled, auth)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
        records.cronInsert(c),
      ),
    );
  }

  async update(c: CronRecord): Promise<void> {
    await this.s.one((client) =>
      client.query(
        `UPDATE crons SET assistant_id = $1, thread_id = $2, on_run_completed = $3, end_time = $4, schedule = $5,
         timezone = $6, updated_at = $7, user_id = $8, payload = $9, next_run_date = $10, metadata = $11, enabled = $12,
         auth = $13 WHERE cron_id = $14`,
        records.cronUpdate(c),
      ),
    );
  }

  async delete(id: string): Promise<boolean> {
    return this.s.one(
      async (client) => ((await client.query('DELETE FROM crons WHERE cron_id = $1', [id])).rowCount ?? 0) > 0,
    );
  }

  async search(query: CronQuery): Promise<Page<CronRecord>> {
    return this.s.page(cronSearch('postgres', query), records.toCron);
  }

  async due(now: string, limit: number): Promise<CronRecord[]> {
    return (
      await this.s.rows(
        `SELECT * FROM crons WHERE enabled AND next_run_date IS NOT NULL AND next_run_date <= $1
         AND (end_time IS NULL OR end_time >= $1) ORDER BY next_run_date COLLATE "C" LIMIT $2`,
        [now, limit],
      )
    ).map(records.toCron);
  }

  async earliestRun(): Promise<string | undefined> {
    const [row] = await this.s.rows(
      `SELECT MIN(next_run_date COLLATE "C") AS at FROM crons WHERE enabled AND next_run_date IS NOT NULL
       AND (end_time IS NULL OR end_time >= next_run_date)`,
    );
    return str(row?.at) ?? undefined;
  }

  async claimTick(id: string, expected: string, next: string | null, now: string): Promise<boolean> {
    return this.s.one(
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
