// What the SQLite repositories (`*/sqlite.ts`) share: the file's compiled statements, the way their
// synchronous calls are run (`SqliteSession.run`: through the storage's mutex outside a
// transaction, directly inside one), the codec of SQLite's rows and the paging of searches.

import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import { RecordCodec, json } from './records.ts';
import type { Row } from './records.ts';
import { settlePage } from './search-queries.ts';
import type { SearchStatements } from './search-queries.ts';
import type { Page } from './storage.ts';

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

/** The statements of one database file, each compiled once: preparing is a noticeable share of a run's cost. */
export class SqliteStatements {
  private readonly statements = new Map<string, Statement>();

  constructor(readonly db: SqliteDatabase) {}

  prepare(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  /** A search's page and its total (`settlePage`: counted only when the page does not tell it). */
  page<T>(search: SearchStatements, toRecord: (row: Row) => T): Page<T> {
    const read = search.limit > 0 ? (this.prepare(search.page.sql).all(...search.page.params) as Row[]) : [];
    const { rows, total } = settlePage(search, read);
    const counted = total ?? Number((this.prepare(search.count.sql).get(...search.count.params) as Row).total);
    return { items: rows.map(toRecord), total: counted };
  }
}

/**
 * The statements and how a repository's synchronous work runs: outside a transaction it waits for
 * the storage's mutex (a transaction holds it from `BEGIN IMMEDIATE` to its end), inside one it runs
 * at once.
 */
export interface SqliteSession {
  readonly sql: SqliteStatements;
  run<T>(work: (sql: SqliteStatements) => T): Promise<T>;
}
