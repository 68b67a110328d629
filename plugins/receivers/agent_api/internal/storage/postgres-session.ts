// What the PostgreSQL repositories (`*/postgres.ts`) share: how their statements run (on one
// transaction's client, or on pooled clients), the per-thread and per-assistant locks of a
// transaction, the codec of PostgreSQL's rows and the paging of searches.

import type { PoolClient } from 'pg';
import { RecordCodec, json } from './records.ts';
import type { Row } from './records.ts';
import { settlePage } from './search-queries.ts';
import type { SearchStatements } from './search-queries.ts';
import type { Page } from './storage.ts';

/** Records to and from PostgreSQL's rows: `pg` parses JSONB columns and reads booleans as such. */
export const records = new RecordCodec({
  readJson: <T>(value: unknown) => (value ?? null) as T | null,
  readBool: (value) => value === true,
  writeNullableJson: (value) => (value === null ? null : json(value)),
  writeBool: (value) => value,
});

/**
 * Runs statements: on one transaction's client, or on a pooled client, in a transaction of their
 * own when `together` (several statements that must commit together) and on their own otherwise.
 */
export type Connect = <T>(together: boolean, fn: (client: PoolClient) => Promise<T>) => Promise<T>;

/**
 * Where a repository's statements run, and the locks its transaction holds (advisory, released at
 * its end), by key: `thread:<id>`, `assistant:<id>`. Outside a transaction there are none: each
 * operation is one statement, or several committed together.
 */
export class PostgresSession {
  constructor(
    private readonly connect: Connect,
    private readonly held?: Set<string>,
  ) {}

  async rows(sql: string, params: unknown[] = []): Promise<Row[]> {
    return this.connect(false, async (client) => (await client.query(sql, params)).rows as Row[]);
  }

  /** Statements that commit together. */
  write<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.connect(true, fn);
  }

  /** One statement, atomic on its own. */
  one<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.connect(false, fn);
  }

  /** Whether this is a transaction that does not hold the lock `key` yet. */
  lacks(key: string): boolean {
    return this.held !== undefined && !this.held.has(key);
  }

  /**
   * In a transaction, takes the lock `key` until the transaction ends (once: a transaction holds
   * each lock at most once); outside one, nothing. This is what keeps a transaction "as if one at
   * a time" for the thread (or assistant) it reads and then writes: another transaction on the
   * same thread waits here, before its first read of it, and reads what this one committed.
   * `shared`: readers that only need the row to stay (runs created for an assistant) share it.
   */
  async lock(key: string, shared = false): Promise<void> {
    if (!this.held || this.held.has(key) || (shared && this.held.has(`${key}#shared`))) return;
    this.held.add(shared ? `${key}#shared` : key);
    const take = shared ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
    await this.connect(false, (client) => client.query(`SELECT ${take}(hashtextextended($1, 0))`, [key]));
  }

  lockThread(threadId: string): Promise<void> {
    return this.lock(`thread:${threadId}`);
  }

  lockAssistant(assistantId: string, shared = false): Promise<void> {
    return this.lock(`assistant:${assistantId}`, shared);
  }

  /** A search's page and its total (`settlePage`: counted only when the page does not tell it). */
  async page<T>(search: SearchStatements, toRecord: (row: Row) => T): Promise<Page<T>> {
    const read = search.limit > 0 ? await this.rows(search.page.sql, search.page.params) : [];
    const { rows, total } = settlePage(search, read);
    const counted = total ?? Number((await this.rows(search.count.sql, search.count.params))[0]?.total);
    return { items: rows.map(toRecord), total: counted };
  }
}
