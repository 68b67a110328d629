// Threads in PostgreSQL. A transaction's first operation on a thread locks its row until the
// transaction ends (`PostgresSession.lockedRow`; reading it is that operation, in one statement),
// so that transactions are one at a time per thread. Searches are single
// statements (`search-queries.ts`) answered from indexes: JSONB `@>` on GIN, sort columns in byte
// order.

import { threadSearch } from '../search-queries.ts';
import { records } from '../postgres-session.ts';
import type { PostgresSession } from '../postgres-session.ts';
import type { Page, Thread, ThreadQuery, ThreadRepository } from '../storage.ts';

export class PostgresThreads implements ThreadRepository {
  constructor(private readonly s: PostgresSession) {}

  async get(id: string): Promise<Thread | undefined> {
    const row = await this.s.lockedRow('thread', id);
    return row && records.toThread(row);
  }

  async insert(t: Thread): Promise<void> {
    await this.s.lockThread(t.thread_id);
    await this.s.one((client) =>
      client.query(
        `INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        records.threadInsert(t),
      ),
    );
  }

  async update(t: Thread): Promise<void> {
    await this.s.lockThread(t.thread_id);
    await this.s.one((client) =>
      client.query(
        `UPDATE threads SET updated_at = $1, metadata = $2, status = $3, config = $4, state_values = $5, interrupts = $6
         WHERE thread_id = $7`,
        records.threadUpdate(t),
      ),
    );
  }

  async delete(id: string): Promise<boolean> {
    await this.s.lockThread(id);
    return this.s.write(async (client) => {
      await client.query('DELETE FROM runs WHERE thread_id = $1', [id]);
      await client.query('DELETE FROM crons WHERE thread_id = $1', [id]);
      return ((await client.query('DELETE FROM threads WHERE thread_id = $1', [id])).rowCount ?? 0) > 0;
    });
  }

  async search(query: ThreadQuery): Promise<Page<Thread>> {
    return this.s.page(threadSearch('postgres', query), records.toThread);
  }

  async idsOfAssistant(assistantId: string): Promise<string[]> {
    return (await this.s.rows("SELECT thread_id FROM threads WHERE metadata->>'assistant_id' = $1", [assistantId])).map(
      (row) => String(row.thread_id),
    );
  }
}
