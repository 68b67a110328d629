// The store's SQLite repository: the items in `store.sqlite` under the data directory, with the
// search and namespace listing statements it shares with `postgres.ts` (`../store.ts`).

import type { Database as SqliteDatabase } from 'better-sqlite3';
import type {
  GetOperation,
  Item,
  ListNamespacesOperation,
  Operation,
  OperationResults,
  PutOperation,
} from '@langchain/langgraph';
import { openSqliteFile } from '../sqlite-file.ts';
import type { OpenedSqliteFile, SqliteMigration } from '../sqlite-file.ts';
import { applyOperation, joinNamespace, splitNamespace, storeSearch, toItem } from '../store.ts';
import type { StoreRow } from '../store.ts';
import { matchesConditions, storeConditions } from './filter.ts';
import type { StoreCondition } from './filter.ts';
import { namespaceListing, registerNamespaceFunctions } from './namespaces.ts';
import { StoreRepository } from './repository.ts';

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
  {
    version: 2,
    name: 'newest first',
    // A search without a prefix pages newest first straight from this index.
    sql: 'CREATE INDEX store_items_updated ON store_items (updated_at, namespace, key);',
  },
];

export class SqliteStore extends StoreRepository {
  private readonly db: SqliteDatabase;
  private readonly file: OpenedSqliteFile;
  private closed = false;

  constructor(path: string) {
    super();
    this.file = openSqliteFile(path, STORE_MIGRATIONS);
    this.db = this.file.db;
    registerNamespaceFunctions(this.db);
    // A filter's conditions (`filter.ts`), parsed once per filter text rather than once per row.
    const conditionsOf = new Map<string, StoreCondition[]>();
    this.db.function('tp_store_filter', { deterministic: true }, (value: string, filter: string) => {
      if (!conditionsOf.has(filter)) {
        if (conditionsOf.size >= 64) conditionsOf.clear();
        conditionsOf.set(filter, storeConditions(JSON.parse(filter) as Record<string, unknown>));
      }
      return Number(matchesConditions(JSON.parse(value) as Record<string, unknown>, conditionsOf.get(filter)!));
    });
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results = this.db.transaction(() => operations.map((operation) => this.apply(operation)))();
    return results as OperationResults<Op>;
  }

  private apply(operation: Operation): unknown {
    return applyOperation<unknown>(operation, {
      search: (search) =>
        this.rows(search.namespacePrefix, search.filter, search.limit ?? 10, search.offset ?? 0).map(toItem),
      namespaces: (list) => this.namespaces(list, { page: true }).map(splitNamespace),
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

  protected rows(
    namespacePrefix: readonly string[],
    filter: Record<string, unknown> | undefined,
    limit: number,
    offset: number,
  ): StoreRow[] {
    const walkNewest = this.prefixHoldsMany(joinNamespace(namespacePrefix), limit + offset);
    const { sql, params } = storeSearch('sqlite', namespacePrefix, filter, limit, offset, { walkNewest });
    return this.db.prepare(sql).all(...params) as StoreRow[];
  }

  /**
   * Whether walking the newest-first index reads fewer rows than the prefix's range: the range
   * reads its m items and sorts them, the walk about page × items / m rows; so the walk wins when
   * the range holds at least √(page × items), which a count capped there tells.
   */
  private prefixHoldsMany(prefix: string, page: number): boolean {
    if (prefix === '') return false;
    const items = Number((this.db.prepare('SELECT max(rowid) AS n FROM store_items').get() as { n: number | null }).n);
    const cap = Math.ceil(Math.sqrt((page + 1) * Math.max(items, 1)));
    const held = this.db
      .prepare(
        `SELECT COUNT(*) AS n FROM (SELECT 1 FROM store_items
         WHERE namespace = ? OR (namespace >= ? AND namespace < ?) LIMIT ?)`,
      )
      .get(prefix, `${prefix}.`, `${prefix}/`, cap) as { n: number };
    return held.n >= cap;
  }

  protected namespaces(operation: ListNamespacesOperation, options: { page: boolean }): string[] {
    const { sql, params } = namespaceListing('sqlite', operation, options);
    return (this.db.prepare(sql).all(...params) as { namespace: string }[]).map((row) => row.namespace);
  }

  async truncate(): Promise<void> {
    this.db.exec('DELETE FROM store_items');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.file.close();
  }
}
