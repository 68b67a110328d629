// Threads in the embedded SQLite database. Searches are single statements (`search-queries.ts`):
// the top-level scalars of threads' metadata and values are indexed in `thread_fields` (see the
// schema in `sqlite.ts`), and the rest of a filter is decided by `tp_contains`/`tp_auth`
// (`sql-filters.ts`) on the rows the indexes leave.

import type { Row } from '../records.ts';
import { threadSearch } from '../search-queries.ts';
import { fieldProbe } from '../sql-filters.ts';
import { records } from '../sqlite-session.ts';
import type { SqliteSession } from '../sqlite-session.ts';
import type { Page, Thread, ThreadQuery, ThreadRepository } from '../storage.ts';

export class SqliteThreads implements ThreadRepository {
  constructor(private readonly session: SqliteSession) {}

  get(id: string): Promise<Thread | undefined> {
    return this.session.run((sql) => {
      const row = sql.prepare('SELECT * FROM threads WHERE thread_id = ?').get(id) as Row | undefined;
      return row && records.toThread(row);
    });
  }

  insert(t: Thread): Promise<void> {
    return this.session.run((sql) => {
      sql
        .prepare(
          `INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(...records.threadInsert(t));
    });
  }

  update(t: Thread): Promise<void> {
    return this.session.run((sql) => {
      sql
        .prepare(
          `UPDATE threads SET updated_at = ?, metadata = ?, status = ?, config = ?, state_values = ?, interrupts = ?
           WHERE thread_id = ?`,
        )
        .run(...records.threadUpdate(t));
    });
  }

  /** Deletes the thread and its runs (a trigger deletes its crons). */
  delete(id: string): Promise<boolean> {
    return this.session.run((sql) => {
      sql.prepare('DELETE FROM runs WHERE thread_id = ?').run(id);
      return sql.prepare('DELETE FROM threads WHERE thread_id = ?').run(id).changes > 0;
    });
  }

  search(query: ThreadQuery): Promise<Page<Thread>> {
    return this.session.run((sql) => {
      const listed = threadSearch('sqlite', query, 'list');
      if (listed.fields.length === 0 || query.limit === 0) return sql.page(listed, records.toThread);
      // Listing the threads a field names reads its matches (m); walking the sort order's index and
      // probing each row's fields reads about page × threads / m rows. The walk is cheaper when every
      // field names at least √(page × threads) of them, which a count capped there tells, at a cost
      // bounded by the cap.
      const threads = Number((sql.prepare('SELECT max(rowid) AS n FROM threads').get() as Row).n ?? 0);
      const cap = Math.ceil(Math.sqrt((query.offset + query.limit + 1) * Math.max(threads, 1)));
      const common = listed.fields.every((field) => {
        const probe = fieldProbe(field, cap);
        return Number((sql.prepare(probe.sql).get(...probe.params) as Row).n) >= cap;
      });
      return sql.page(common ? threadSearch('sqlite', query, 'probe') : listed, records.toThread);
    });
  }

  idsOfAssistant(assistantId: string): Promise<string[]> {
    return this.session.run((sql) =>
      (
        sql
          .prepare("SELECT thread_id FROM threads WHERE json_extract(metadata, '$.assistant_id') = ?")
          .all(assistantId) as Row[]
      ).map((row) => String(row.thread_id)),
    );
  }
}
