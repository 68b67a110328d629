// The LangGraph store that graphs see as `config.store` (and `/store/*` serves), kept in SQLite so
// that it survives restarts like everything else (`store-postgres.ts` keeps the same items in
// PostgreSQL). Supports get, put, delete, search by namespace prefix with equality filters, and
// namespace listing; semantic (`query`) search is not indexed: a query is ignored and results come
// newest first.

import type { Database as SqliteDatabase } from 'better-sqlite3';
import { BaseStore } from '@langchain/langgraph';
import type {
  GetOperation,
  Item,
  ListNamespacesOperation,
  Operation,
  OperationResults,
  PutOperation,
  SearchOperation,
} from '@langchain/langgraph';

type SearchItem = Item & { score?: number };
import { containsJson } from './json-match.ts';
import { openSqliteFile } from './sqlite-file.ts';
import type { SqliteMigration } from './sqlite-file.ts';

/** The schema of `store.sqlite`, step by step (see `sqlite-file.ts`). Append; never edit a step. */
export const STORE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'store items',
    // As before migrations were versioned: `IF NOT EXISTS` adopts a file an earlier server made.
    sql: `
CREATE TABLE IF NOT EXISTS store_items (
  namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (namespace, key));
`,
  },
];

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

/** A search's page of `rows` (newest first): filters, then `visible`, then offset and limit. */
export function searchPage(
  rows: readonly StoreRow[],
  operation: SearchOperation,
  visible: (item: Item) => boolean = () => true,
): SearchItem[] {
  const filter = operation.filter ?? {};
  const items = rows
    .map(toItem)
    .filter((item) => Object.entries(filter).every(([key, value]) => containsJson(item.value[key], value)))
    .filter(visible);
  const offset = operation.offset ?? 0;
  return items.slice(offset, offset + (operation.limit ?? 10));
}

/** A namespace listing's page of the stored (dot-joined) namespaces. */
export function namespacePage(
  stored: readonly string[],
  operation: ListNamespacesOperation,
  visible: (namespace: string[]) => boolean = () => true,
): string[][] {
  const kept = stored
    .map(splitNamespace)
    .filter((namespace) =>
      (operation.matchConditions ?? []).every((condition) => matches(namespace, condition.path, condition.matchType)),
    )
    .filter(visible)
    .map((namespace) => (operation.maxDepth !== undefined ? namespace.slice(0, operation.maxDepth) : namespace));
  const unique = [...new Map(kept.map((namespace) => [joinNamespace(namespace), namespace])).values()].sort((a, b) =>
    joinNamespace(a).localeCompare(joinNamespace(b)),
  );
  return unique.slice(operation.offset, operation.offset + operation.limit);
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

function matches(namespace: readonly string[], path: readonly string[], type: 'prefix' | 'suffix'): boolean {
  if (path.length > namespace.length) return false;
  const part = type === 'prefix' ? namespace.slice(0, path.length) : namespace.slice(namespace.length - path.length);
  return path.every((label, index) => label === '*' || label === part[index]);
}

export class SqliteStore extends BaseStore implements ServerStore {
  private readonly db: SqliteDatabase;
  private closed = false;

  constructor(path: string) {
    super();
    this.db = openSqliteFile(path, STORE_MIGRATIONS).db;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results = this.db.transaction(() => operations.map((operation) => this.apply(operation)))();
    return results as OperationResults<Op>;
  }

  private apply(operation: Operation): unknown {
    return applyOperation<unknown>(operation, {
      search: (search) => searchPage(this.rowsUnder(search.namespacePrefix), search),
      namespaces: (list) => namespacePage(this.namespaceNames(), list),
      put: (put) => this.putItem(put),
      get: (get) => this.getItem(get),
    });
  }

  private getItem(operation: GetOperation): Item | null {
    const row = this.db
      .prepare('SELECT * FROM store_items WHERE namespace = ? AND key = ?')
      .get(joinNamespace(operation.namespace), operation.key) as StoreRow | undefined;
    return row ? toItem(row) : null;
  }

  private putItem(operation: PutOperation): void {
    const namespace = joinNamespace(operation.namespace);
    if (operation.value === null) {
      this.db.prepare('DELETE FROM store_items WHERE namespace = ? AND key = ?').run(namespace, operation.key);
      return;
    }
    const now = new Date().toISOString();
    this.db
      .prepare(
        `INSERT INTO store_items (namespace, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      )
      .run(namespace, operation.key, JSON.stringify(operation.value), now, now);
  }

  async searchVisible(
    namespacePrefix: string[],
    options: SearchOptions,
    visible: (item: Item) => boolean,
  ): Promise<Item[]> {
    return searchPage(this.rowsUnder(namespacePrefix), searchOperation(namespacePrefix, options), visible);
  }

  async listNamespacesVisible(
    options: NamespaceOptions,
    visible: (namespace: string[]) => boolean,
  ): Promise<string[][]> {
    return namespacePage(this.namespaceNames(), namespacesOperation(options), visible);
  }

  /** The items in the namespace `namespacePrefix` or below it, newest first. */
  private rowsUnder(namespacePrefix: readonly string[]): StoreRow[] {
    const prefix = joinNamespace(namespacePrefix);
    return (
      prefix === ''
        ? this.db.prepare('SELECT * FROM store_items ORDER BY updated_at DESC').all()
        : this.db
            .prepare(
              'SELECT * FROM store_items WHERE namespace = ? OR substr(namespace, 1, ?) = ? ORDER BY updated_at DESC',
            )
            .all(prefix, prefix.length + 1, `${prefix}.`)
    ) as StoreRow[];
  }

  private namespaceNames(): string[] {
    return (this.db.prepare('SELECT DISTINCT namespace FROM store_items').all() as { namespace: string }[]).map(
      (row) => row.namespace,
    );
  }

  async truncate(): Promise<void> {
    this.db.exec('DELETE FROM store_items');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}
