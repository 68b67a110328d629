// The searches of the storage as statements, the same for both backends but for their dialect:
// each search is one `SELECT … LIMIT … OFFSET` that returns exactly the page, and, only when the
// page does not tell the total by itself, one `SELECT COUNT(*)` with the same conditions. No
// search reads a row it does not return; the indexes each one uses are listed in docs/scaling.md.
//
// Orders are those the searches always had: text in byte order (PostgreSQL `COLLATE "C"`, SQLite's
// BINARY collation), ties broken by the id in the same direction; crons compare case-insensitively
// with missing values first.

import type { CronQuery } from './crons.ts';
import { SqlWhere, addAuthFilters, addContainment } from './sql-filters.ts';
import type { Dialect, FieldIndex } from './sql-filters.ts';
import type { AssistantQuery, JsonObject, RunQuery, ThreadQuery } from './storage.ts';

/** A statement and its parameters. */
export interface Statement {
  readonly sql: string;
  readonly params: unknown[];
}

/** What a search runs: the page, and the count of every match (needed only when the page is full). */
export interface SearchStatements {
  readonly page: Statement;
  readonly count: Statement;
  readonly limit: number;
  readonly offset: number;
}

/**
 * The total of a search from its page when the page tells it (a page that is not full ends the
 * matches: the total is `offset` plus its length), else undefined: count.
 */
export function totalFromPage(rows: number, limit: number, offset: number): number | undefined {
  if (limit > 0 && rows < limit && (rows > 0 || offset === 0)) return offset + rows;
  return undefined;
}

/** The same text order in both databases: byte order. */
function text(dialect: Dialect, column: string): string {
  return dialect === 'postgres' ? `${column} COLLATE "C"` : column;
}

function orderBy(sort: string, id: string, order: 'asc' | 'desc'): string {
  const direction = order === 'asc' ? 'ASC' : 'DESC';
  return sort === id ? `ORDER BY ${id} ${direction}` : `ORDER BY ${sort} ${direction}, ${id} ${direction}`;
}

function statements(w: SqlWhere, from: string, order: string, limit: number, offset: number): SearchStatements {
  const count = { sql: `SELECT COUNT(*) AS total FROM ${from} ${w.clause}`, params: [...w.params] };
  const page = `SELECT * FROM ${from} ${w.clause} ${order} LIMIT ${w.param(limit)} OFFSET ${w.param(offset)}`;
  return { page: { sql: page, params: w.params }, count, limit, offset };
}

/** The field index of threads' metadata and values (SQLite only; PostgreSQL has GIN indexes). */
const threadFields = (dialect: Dialect, source: 0 | 1): FieldIndex | undefined =>
  dialect === 'sqlite' ? { id: 't.thread_id', source } : undefined;

export function threadSearch(dialect: Dialect, query: ThreadQuery): SearchStatements {
  const w = new SqlWhere(dialect);
  if (query.ids) {
    w.add(
      dialect === 'postgres'
        ? `t.thread_id = ANY(${w.param(query.ids)}::text[])`
        : `t.thread_id IN (SELECT value FROM json_each(${w.param(JSON.stringify(query.ids))}))`,
    );
  }
  if (query.status !== undefined) w.add(`t.status = ${w.param(query.status)}`);
  if (query.metadata) addContainment(w, 't.metadata', query.metadata, { index: threadFields(dialect, 0) });
  if (query.values)
    addContainment(w, 't.state_values', query.values, { index: threadFields(dialect, 1), nullable: true });
  addAuthFilters(w, 't.metadata', query.auth, threadFields(dialect, 0));
  const sort =
    query.sort_by === 'thread_id' || query.sort_by === 'status'
      ? text(dialect, `t.${query.sort_by}`)
      : `t.${query.sort_by}`;
  return statements(
    w,
    'threads t',
    orderBy(sort, text(dialect, 't.thread_id'), query.sort_order),
    query.limit,
    query.offset,
  );
}

export function assistantSearch(dialect: Dialect, query: AssistantQuery): SearchStatements {
  const w = new SqlWhere(dialect);
  if (query.graph_id !== undefined) w.add(`a.graph_id = ${w.param(query.graph_id)}`);
  if (query.name !== undefined) {
    // Lower-cased as JavaScript does (SQLite's `lower` knows ASCII only).
    const lower = dialect === 'postgres' ? 'lower(a.name)' : 'tp_lower(a.name)';
    w.add(`${dialect === 'postgres' ? 'strpos' : 'instr'}(${lower}, ${w.param(query.name.toLowerCase())}) > 0`);
  }
  if (query.metadata) addContainment(w, 'a.metadata', query.metadata);
  addAuthFilters(w, 'a.metadata', query.auth);
  const sort = text(dialect, `a.${query.sort_by}`);
  return statements(
    w,
    'assistants a',
    orderBy(sort, text(dialect, 'a.assistant_id'), query.sort_order),
    query.limit,
    query.offset,
  );
}

export function cronSearch(dialect: Dialect, query: CronQuery): SearchStatements {
  const w = new SqlWhere(dialect);
  if (query.assistant_id !== undefined) w.add(`c.assistant_id = ${w.param(query.assistant_id)}`);
  if (query.thread_id !== undefined) w.add(`c.thread_id = ${w.param(query.thread_id)}`);
  if (query.enabled !== undefined)
    w.add(
      dialect === 'postgres'
        ? `c.enabled = ${w.param(query.enabled)}`
        : `c.enabled = ${w.param(query.enabled ? 1 : 0)}`,
    );
  if (query.metadata) addContainment(w, 'c.metadata', query.metadata);
  addAuthFilters(w, 'c.metadata', query.auth);
  const direction = query.sort_order === 'asc' ? 'ASC NULLS FIRST' : 'DESC NULLS LAST';
  const lower = (column: string) => text(dialect, dialect === 'postgres' ? `lower(${column})` : `tp_lower(${column})`);
  // Case-insensitive, missing values first; then the exact text and the id, for a total order.
  const order =
    `ORDER BY ${lower(`c.${query.sort_by}`)} ${direction}, ${text(dialect, `c.${query.sort_by}`)} ${direction}, ` +
    `${lower('c.cron_id')} ${direction}, ${text(dialect, 'c.cron_id')} ${direction}`;
  return statements(w, 'crons c', order, query.limit, query.offset);
}

/** The runs of a thread, oldest first. */
export function runSearch(dialect: Dialect, threadId: string, query: RunQuery): Statement {
  const w = new SqlWhere(dialect);
  w.add(`r.thread_id = ${w.param(threadId)}`);
  if (query.status !== undefined) w.add(`r.status = ${w.param(query.status)}`);
  if (query.metadata) addContainment(w, 'r.metadata', query.metadata);
  return statements(w, 'runs r', 'ORDER BY r.seq', query.limit, query.offset).page;
}

/** The versions of an assistant, newest first. */
export function versionSearch(
  dialect: Dialect,
  assistantId: string,
  query: { metadata?: JsonObject; limit: number; offset: number },
): Statement {
  const w = new SqlWhere(dialect);
  w.add(`v.assistant_id = ${w.param(assistantId)}`);
  if (query.metadata) addContainment(w, 'v.metadata', query.metadata);
  return statements(w, 'assistant_versions v', 'ORDER BY v.version DESC', query.limit, query.offset).page;
}
