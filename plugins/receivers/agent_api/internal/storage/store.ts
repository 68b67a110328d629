// The LangGraph store that graphs see as `config.store` (and `/store/*` serves), kept in SQLite so
// that it survives restarts like everything else. Supports get, put, delete, search by namespace
// prefix with equality filters, and namespace listing; semantic (`query`) search is not indexed:
// a query is ignored and results come newest first.

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
const joinNamespace = (namespace: readonly string[]): string => namespace.join('.');

interface Row {
  namespace: string;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}

function toItem(row: Row): Item {
  return {
    namespace: row.namespace === '' ? [] : row.namespace.split('.'),
    key: row.key,
    value: JSON.parse(row.value),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function matches(namespace: readonly string[], path: readonly string[], type: 'prefix' | 'suffix'): boolean {
  if (path.length > namespace.length) return false;
  const part = type === 'prefix' ? namespace.slice(0, path.length) : namespace.slice(namespace.length - path.length);
  return path.every((label, index) => label === '*' || label === part[index]);
}

export class SqliteStore extends BaseStore {
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
    if ('namespacePrefix' in operation) return this.searchItems(operation as SearchOperation);
    if ('matchConditions' in operation || ('limit' in operation && !('key' in operation)))
      return this.namespaces(operation as ListNamespacesOperation);
    if ('value' in operation) return this.putItem(operation as PutOperation);
    return this.getItem(operation as GetOperation);
  }

  private getItem(operation: GetOperation): Item | null {
    const row = this.db
      .prepare('SELECT * FROM store_items WHERE namespace = ? AND key = ?')
      .get(joinNamespace(operation.namespace), operation.key) as Row | undefined;
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

  /**
   * `search` keeping only the items `visible` accepts, before `offset` and `limit` apply (so a page
   * is full whenever enough visible items exist). For the custom auth handler's store filter.
   */
  searchVisible(
    namespacePrefix: string[],
    options: { filter?: Record<string, unknown>; limit?: number; offset?: number },
    visible: (item: Item) => boolean,
  ): Item[] {
    return this.searchItems(
      { namespacePrefix, filter: options.filter, limit: options.limit ?? 10, offset: options.offset ?? 0 },
      visible,
    );
  }

  /** `listNamespaces` over the namespaces `visible` accepts (judged before `maxDepth` cuts them). */
  listNamespacesVisible(
    options: { prefix?: string[]; suffix?: string[]; maxDepth?: number; limit?: number; offset?: number },
    visible: (namespace: string[]) => boolean,
  ): string[][] {
    const matchConditions = [
      ...(options.prefix ? [{ matchType: 'prefix' as const, path: options.prefix }] : []),
      ...(options.suffix ? [{ matchType: 'suffix' as const, path: options.suffix }] : []),
    ];
    return this.namespaces(
      { matchConditions, maxDepth: options.maxDepth, limit: options.limit ?? 100, offset: options.offset ?? 0 },
      visible,
    );
  }

  private searchItems(operation: SearchOperation, visible: (item: Item) => boolean = () => true): SearchItem[] {
    const prefix = joinNamespace(operation.namespacePrefix);
    const rows = (
      prefix === ''
        ? this.db.prepare('SELECT * FROM store_items ORDER BY updated_at DESC').all()
        : this.db
            .prepare(
              'SELECT * FROM store_items WHERE namespace = ? OR substr(namespace, 1, ?) = ? ORDER BY updated_at DESC',
            )
            .all(prefix, prefix.length + 1, `${prefix}.`)
    ) as Row[];
    const filter = operation.filter ?? {};
    const items = rows
      .map(toItem)
      .filter((item) => Object.entries(filter).every(([key, value]) => containsJson(item.value[key], value)))
      .filter(visible);
    const offset = operation.offset ?? 0;
    return items.slice(offset, offset + (operation.limit ?? 10));
  }

  private namespaces(
    operation: ListNamespacesOperation,
    visible: (namespace: string[]) => boolean = () => true,
  ): string[][] {
    const all = (this.db.prepare('SELECT DISTINCT namespace FROM store_items').all() as { namespace: string }[]).map(
      (row) => (row.namespace === '' ? [] : row.namespace.split('.')),
    );
    const kept = all
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

  truncate(): void {
    this.db.exec('DELETE FROM store_items');
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}
