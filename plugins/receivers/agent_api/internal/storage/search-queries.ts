// The searches of the storage as statements, the same for both backends but for their dialect:
// each search is one `SELECT … LIMIT … OFFSET` that reads its page and one row more, and, only
// when that does not tell the total, one `SELECT COUNT(*)` with the same conditions, capped. No
// search reads a row it does not return (but the one that says a next page exists); the indexes
// each one uses are listed in docs/scaling.md.
//
// The total of a page (`X-Pagination-Total`) is what the hosted LangGraph server reports: exact
// when the page ends the matches, `offset + limit + 1` ("at least one more") when it does not. An
// exact count of every match reads every matching index entry — a million for the newest page of
// a million threads — so only the count routes (`limit` 0) count them all.
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

/**
 * What a search runs: the page (`limit + 1` rows from `offset`: the last says a next page exists),
 * and the count of the matches, up to `offset` when a page came back empty, all of them for a
 * count (`limit` 0).
 */
export interface SearchStatements {
  readonly page: Statement;
  readonly count: Statement;
  readonly limit: number;
  readonly offset: number;
}

/**
 * The page of a search from the rows its page statement read (`limit + 1` at most, none for a
 * count), and its total when they tell it: exact when the rows end the matches, `offset + limit + 1`
 * when there are more. Undefined: run the count (a count, or an empty page past the first).
 */
export function settlePage<Row>(search: SearchStatements, rows: Row[]): { rows: Row[]; total: number | undefined } {
  if (search.limit === 0) return { rows: [], total: undefined };
  if (rows.length > search.limit) return { rows: rows.slice(0, search.limit), total: search.offset + search.limit + 1 };
  return { rows, total: rows.length > 0 || search.offset === 0 ? search.offset + rows.length : undefined };
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
  const conditions = `FROM ${from} ${w.clause}`;
  const params = [...w.params];
  // For a page, capped at `offset`: only an empty page past the first counts, to tell whether its
  // offset went past the end, which the first `offset` matches answer, read in the page's order
  // (so through the page's index, as far as the page itself would have read).
  const cap = w.dialect === 'postgres' ? `$${params.length + 1}` : '?';
  const count: Statement =
    limit === 0
      ? { sql: `SELECT COUNT(*) AS total ${conditions}`, params }
      : {
          sql: `SELECT COUNT(*) AS total FROM (SELECT 1 ${conditions} ${order} LIMIT ${cap}) matches`,
          params: [...params, offset],
        };
  return { page: pageStatement(w, from, order, limit + 1, offset), count, limit, offset };
}

/** `limit` rows of a search from `offset`. */
function pageStatement(w: SqlWhere, from: string, order: string, limit: number, offset: number): Statement {
  return {
    sql: `SELECT * FROM ${from} ${w.clause} ${order} LIMIT ${w.param(limit)} OFFSET ${w.param(offset)}`,
    params: w.params,
  };
}

/**
 * A thread search. SQLite answers its metadata and values conditions from `thread_fields`, by
 * `fields` (`FieldIndex.use`): `list` when a field names few threads, `probe` when the sort
 * order's index fills the page sooner (`sqlite.ts` chooses; PostgreSQL's planner does it itself
 * with the GIN indexes). The conditions it answered from `thread_fields` come back as `fields`.
 */
export function threadSearch(
  dialect: Dialect,
  query: ThreadQuery,
  fields: FieldIndex['use'] = 'list',
): SearchStatements & { fields: SqlWhere['fields'] } {
  const threadFields = (source: 0 | 1): FieldIndex | undefined =>
    dialect === 'sqlite' ? { id: 't.thread_id', source, use: fields } : undefined;
  const w = new SqlWhere(dialect);
  if (query.ids) {
    w.add(
      dialect === 'postgres'
        ? `t.thread_id = ANY(${w.param(query.ids)}::text[])`
        : `t.thread_id IN (SELECT value FROM json_each(${w.param(JSON.stringify(query.ids))}))`,
    );
  }
  if (query.status !== undefined) w.add(`t.status = ${w.param(query.status)}`);
  if (query.metadata) addContainment(w, 't.metadata', query.metadata, { index: threadFields(0) });
  if (query.values) addContainment(w, 't.state_values', query.values, { index: threadFields(1), nullable: true });
  addAuthFilters(w, 't.metadata', query.auth, threadFields(0));
  const found = [...w.fields];
  const sort =
    query.sort_by === 'thread_id' || query.sort_by === 'status'
      ? text(dialect, `t.${query.sort_by}`)
      : `t.${query.sort_by}`;
  const order = orderBy(sort, text(dialect, 't.thread_id'), query.sort_order);
  return { ...statements(w, 'threads t', order, query.limit, query.offset), fields: found };
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
  return pageStatement(w, 'runs r', 'ORDER BY r.seq', query.limit, query.offset);
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
  return pageStatement(w, 'assistant_versions v', 'ORDER BY v.version DESC', query.limit, query.offset);
}
