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

/** The rows that stand for a thread and an assistant in the locks of a transaction. */
const LOCKED_ROWS = {
  thread: { table: 'threads', column: 'thread_id' },
  assistant: { table: 'assistants', column: 'assistant_id' },
} as const;

export type LockedKind = keyof typeof LOCKED_ROWS;

/**
 * How a transaction holds a row: `update` alone (it reads and then writes the thread or
 * assistant), or `key share` beside others (it only needs the row to stay: runs created for an
 * assistant), which an `update` holder excludes.
 */
export type LockMode = 'update' | 'key share';

/**
 * Where a repository's statements run, and the locks its transaction holds (released at its end),
 * by key: `thread:<id>`, `assistant:<id>`. Outside a transaction there are none: each operation is
 * one statement, or several committed together.
 *
 * A lock is the row's own (`SELECT … FOR UPDATE`): the statement that reads a thread in a
 * transaction also locks it, and waits for another transaction holding it, so that it reads what
 * that one committed — one round trip where an advisory lock and then a read took two. A row that
 * does not exist cannot be locked, yet a transaction may decide to create it (`if_not_exists`, a
 * run making its thread): then the transaction takes a transaction-scoped advisory lock on the key
 * and reads again, so that of two transactions creating the same thread one waits for the other
 * and finds its row.
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
   * Reads the thread's (or assistant's) row. In a transaction that does not hold it yet, the same
   * statement locks it until the transaction ends (see the class): this keeps the transaction "as
   * if one at a time" for the thread it reads and then writes — another transaction on the same
   * thread waits here, before its first read of it, and reads what this one committed.
   */
  async lockedRow(kind: LockedKind, id: string, mode: LockMode = 'update'): Promise<Row | undefined> {
    const { table, column } = LOCKED_ROWS[kind];
    if (!this.claims(kind, id, mode)) return (await this.rows(`SELECT * FROM ${table} WHERE ${column} = $1`, [id]))[0];
    return this.lockRow(kind, id, mode, '*');
  }

  /** In a transaction, locks the thread's (or assistant's) row as `lockedRow` does, unless held; outside one, nothing. */
  async lock(kind: LockedKind, id: string, mode: LockMode = 'update'): Promise<void> {
    if (this.claims(kind, id, mode)) await this.lockRow(kind, id, mode, '1');
  }

  lockThread(threadId: string): Promise<void> {
    return this.lock('thread', threadId);
  }

  /** Whether the row's lock is to be taken now (a transaction not holding it yet), and records it as held. */
  private claims(kind: LockedKind, id: string, mode: LockMode): boolean {
    const key = `${kind}:${id}`;
    if (!this.held || this.held.has(key) || (mode === 'key share' && this.held.has(`${key}#shared`))) return false;
    this.held.add(mode === 'key share' ? `${key}#shared` : key);
    return true;
  }

  private async lockRow(kind: LockedKind, id: string, mode: LockMode, columns: string): Promise<Row | undefined> {
    const { table, column } = LOCKED_ROWS[kind];
    const read = `SELECT ${columns} FROM ${table} WHERE ${column} = $1 FOR ${mode === 'update' ? 'UPDATE' : 'KEY SHARE'}`;
    const [row] = await this.rows(read, [id]);
    if (row) return row;
    // No row to lock: lock its key instead (every transaction that creates the row does the same),
    // then read again — the row another transaction created while this one waited is there now.
    const take = mode === 'update' ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared';
    await this.rows(`SELECT ${take}(hashtextextended($1, 0))`, [`${kind}:${id}`]);
    return (await this.rows(read, [id]))[0];
  }

  /** A search's page and its total (`settlePage`: counted only when the page does not tell it). */
  async page<T>(search: SearchStatements, toRecord: (row: Row) => T): Promise<Page<T>> {
    const read = search.limit > 0 ? await this.rows(search.page.sql, search.page.params) : [];
    const { rows, total } = settlePage(search, read);
    const counted = total ?? Number((await this.rows(search.count.sql, search.count.params))[0]?.total);
    return { items: rows.map(toRecord), total: counted };
  }
}
