// The LangGraph store that graphs see as `config.store` (and `/store/*` serves): what its two
// repositories share, `store/sqlite.ts` (kept in SQLite, so that it survives restarts like
// everything else) and `store/postgres.ts`. Supports get, put, delete, search by namespace prefix
// with equality and comparison filters (`store/filter.ts`), and namespace listing; semantic
// (`query`) search is not indexed: a query is ignored and results come newest first. A search is
// one statement (`storeSearch`): the namespace prefix is a range on the primary key, the filter
// runs in SQL, and only the page is read; so is a namespace listing (`store/namespaces.ts`), which
// walks the primary key from one namespace to the next.

import type { BaseStore } from '@langchain/langgraph';
import type {
  GetOperation,
  Item,
  ListNamespacesOperation,
  Operation,
  PutOperation,
  SearchOperation,
} from '@langchain/langgraph';

type SearchItem = Item & { score?: number };
import { SqlWhere } from './sql-filters.ts';
import { addStoreFilter, storeConditions } from './store/filter.ts';
import { matchesCondition } from './store/namespaces.ts';
import type { Dialect } from './sql-filters.ts';

// Labels cannot contain periods (LangGraph validates that), so a dot-joined namespace is unique
// and a prefix match is a string prefix match on label boundaries.
export const joinNamespace = (namespace: readonly string[]): string => namespace.join('.');
export const splitNamespace = (namespace: string): string[] => (namespace === '' ? [] : namespace.split('.'));

/** A stored item: its namespace dot-joined, its value as JSON text or already parsed. */
export interface StoreRow {
  namespace: string;
  key: string;
  value: unknown;
  created_at: string;
  updated_at: string;
}

export function toItem(row: StoreRow): Item {
  return {
    namespace: splitNamespace(row.namespace),
    key: row.key,
    value: typeof row.value === 'string' ? JSON.parse(row.value) : row.value,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/**
 * The statement of a search: items in the namespace `namespacePrefix` or below it whose value
 * matches `filter` (`store/filter.ts`; a `StoreFilterError` for one it cannot apply), newest
 * first, then by namespace and key; `limit`/`offset` bound as its last two parameters. Labels
 * cannot contain periods, so the items below `a.b` are the range [`a.b.`, `a.b/`) of the primary
 * key (`/` follows `.`). `walkNewest` (SQLite): check the prefix on each row while walking the
 * newest-first index, instead of reading the prefix's range and sorting it — cheaper when the
 * prefix holds many items (`SqliteStore` chooses; PostgreSQL's planner does it itself).
 */
export function storeSearch(
  dialect: Dialect,
  namespacePrefix: readonly string[],
  filter: Record<string, unknown> | undefined,
  limit: number,
  offset: number,
  options: { walkNewest?: boolean } = {},
): { sql: string; params: unknown[] } {
  const w = new SqlWhere(dialect);
  const prefix = joinNamespace(namespacePrefix);
  if (prefix !== '') {
    // SQLite's unary `+` keeps the primary key out of the plan, so the ORDER BY's index drives it.
    const namespace = options.walkNewest && dialect === 'sqlite' ? '+namespace' : 'namespace';
    w.add(
      `(${namespace} = ${w.param(prefix)} OR (${namespace} >= ${w.param(`${prefix}.`)} AND ${namespace} < ${w.param(`${prefix}/`)}))`,
    );
  }
  // Checked on both backends before anything runs, so a filter it cannot apply is an error.
  const conditions = storeConditions(filter);
  if (conditions.length > 0) {
    if (dialect === 'sqlite') w.add(`tp_store_filter(value, ${w.json(filter)})`);
    else addStoreFilter(w, conditions);
  }
  const sql = `SELECT * FROM store_items ${w.clause} ORDER BY updated_at DESC, namespace, key LIMIT ${w.param(limit)} OFFSET ${w.param(offset)}`;
  return { sql, params: w.params };
}

/** How many rows a search with a visibility check reads at a time. */
const VISIBLE_BATCH = 500;

/**
 * A search's page of the items `visible` accepts, for a custom auth handler's filter (a function
 * of the item, not pushed into SQL): the matching items are read in pages of `VISIBLE_BATCH`
 * until `offset + limit` visible ones are found or the matches end.
 */
export async function searchVisiblePage(
  read: (limit: number, offset: number) => Promise<StoreRow[]>,
  operation: SearchOperation,
  visible: (item: Item) => boolean,
): Promise<Item[]> {
  const wanted = (operation.offset ?? 0) + (operation.limit ?? 10);
  const found: Item[] = [];
  for (let offset = 0; found.length < wanted; offset += VISIBLE_BATCH) {
    const rows = await read(VISIBLE_BATCH, offset);
    found.push(...rows.map(toItem).filter(visible));
    if (rows.length < VISIBLE_BATCH) break;
  }
  return found.slice(operation.offset ?? 0, wanted);
}

/**
 * A namespace listing's page of `stored` (dot-joined namespaces), as `namespaceListing` answers it
 * in SQL, with `visible` judging each whole namespace before `maxDepth` cuts it: for a custom auth
 * handler's filter, which SQL cannot run.
 */
export function namespacePage(
  stored: readonly string[],
  operation: ListNamespacesOperation,
  visible: (namespace: string[]) => boolean = () => true,
): string[][] {
  const kept = stored
    .map(splitNamespace)
    .filter((namespace) =>
      (operation.matchConditions ?? []).every((condition) => matchesCondition(namespace, condition)),
    )
    .filter(visible)
    .map((namespace) =>
      joinNamespace(operation.maxDepth !== undefined ? namespace.slice(0, operation.maxDepth) : namespace),
    );
  // Byte order, as the index (and SQL's listing) orders them.
  const unique = [...new Set(kept)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return unique.slice(operation.offset, operation.offset + operation.limit).map(splitNamespace);
}

/** What a store does for each kind of operation (`R`: its result, or a promise of it). */
export interface OperationHandlers<R> {
  search(operation: SearchOperation): R;
  namespaces(operation: ListNamespacesOperation): R;
  put(operation: PutOperation): R;
  get(operation: GetOperation): R;
}

/** Applies `operation` with the handler of its kind. */
export function applyOperation<R>(operation: Operation, handlers: OperationHandlers<R>): R {
  switch (operationKind(operation)) {
    case 'search':
      return handlers.search(operation as SearchOperation);
    case 'namespaces':
      return handlers.namespaces(operation as ListNamespacesOperation);
    case 'put':
      return handlers.put(operation as PutOperation);
    default:
      return handlers.get(operation as GetOperation);
  }
}

/** Which kind of store operation `operation` is. */
export function operationKind(operation: Operation): 'search' | 'namespaces' | 'put' | 'get' {
  if ('namespacePrefix' in operation) return 'search';
  if ('matchConditions' in operation || ('limit' in operation && !('key' in operation))) return 'namespaces';
  if ('value' in operation) return 'put';
  return 'get';
}

export type SearchOptions = { filter?: Record<string, unknown>; limit?: number; offset?: number };
export type NamespaceOptions = {
  prefix?: string[];
  suffix?: string[];
  maxDepth?: number;
  limit?: number;
  offset?: number;
};

export function searchOperation(namespacePrefix: string[], options: SearchOptions): SearchOperation {
  return { namespacePrefix, filter: options.filter, limit: options.limit ?? 10, offset: options.offset ?? 0 };
}

export function namespacesOperation(options: NamespaceOptions): ListNamespacesOperation {
  const matchConditions = [
    ...(options.prefix ? [{ matchType: 'prefix' as const, path: options.prefix }] : []),
    ...(options.suffix ? [{ matchType: 'suffix' as const, path: options.suffix }] : []),
  ];
  return { matchConditions, maxDepth: options.maxDepth, limit: options.limit ?? 100, offset: options.offset ?? 0 };
}

/** The store as the server uses it: LangGraph's `BaseStore`, plus what the routes and tests need. */
export interface ServerStore extends BaseStore {
  /**
   * `search` keeping only the items `visible` accepts, before `offset` and `limit` apply (so a page
   * is full whenever enough visible items exist). For the custom auth handler's store filter.
   */
  searchVisible(namespacePrefix: string[], options: SearchOptions, visible: (item: Item) => boolean): Promise<Item[]>;
  /** `listNamespaces` over the namespaces `visible` accepts (judged before `maxDepth` cuts them). */
  listNamespacesVisible(options: NamespaceOptions, visible: (namespace: string[]) => boolean): Promise<string[][]>;
  /** Deletes every item (`/internal/truncate`). */
  truncate(): Promise<void>;
  /** Idempotent. */
  close(): Promise<void>;
}
