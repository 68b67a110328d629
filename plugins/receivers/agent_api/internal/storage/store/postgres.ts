// The store's PostgreSQL repository: the same items and the same answers as the SQLite one
// (`sqlite.ts`) — its search and namespace listing statements and its paging are shared
// (`../store.ts`) — in the `store_items` table of the server's database (migration 2 of
// `../postgres.ts`), on the server's pool.

import type {
  GetOperation,
  Item,
  ListNamespacesOperation,
  Operation,
  OperationResults,
  PutOperation,
} from '@langchain/langgraph';
import type pg from 'pg';
import { applyOperation, joinNamespace, splitNamespace, storeSearch, toItem } from '../store.ts';
import type { StoreRow } from '../store.ts';
import { namespaceListing } from './namespaces.ts';
import { StoreRepository } from './repository.ts';

export class PostgresItemStore extends StoreRepository {
  /** `pool` stays the caller's; its database must be migrated (`postgresStorageOnPool`). */
  constructor(private readonly pool: pg.Pool) {
    super();
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    // One at a time and each atomic on its own, as LangGraph's batched store calls them.
    for (const operation of operations) results.push(await this.apply(operation));
    return results as OperationResults<Op>;
  }

  private async apply(operation: Operation): Promise<unknown> {
    return applyOperation<Promise<unknown>>(operation, {
      search: async (search) =>
        (await this.rows(search.namespacePrefix, search.filter, search.limit ?? 10, search.offset ?? 0)).map(toItem),
      namespaces: async (list) => (await this.namespaces(list, { page: true })).map(splitNamespace),
      put: (put) => this.putItem(put),
      get: (get) => this.getItem(get),
    });
  }

  private async getItem(operation: GetOperation): Promise<Item | null> {
    const [row] = (
      await this.pool.query('SELECT * FROM store_items WHERE namespace = $1 AND key = $2', [
        joinNamespace(operation.namespace),
        operation.key,
      ])
    ).rows as StoreRow[];
    return row ? toItem(row) : null;
  }

  private async putItem(operation: PutOperation): Promise<void> {
    const namespace = joinNamespace(operation.namespace);
    if (operation.value === null) {
      await this.pool.query('DELETE FROM store_items WHERE namespace = $1 AND key = $2', [namespace, operation.key]);
      return;
    }
    const now = new Date().toISOString();
    await this.pool.query(
      `INSERT INTO store_items (namespace, key, value, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      [namespace, operation.key, JSON.stringify(operation.value), now],
    );
  }

  protected async rows(
    namespacePrefix: readonly string[],
    filter: Record<string, unknown> | undefined,
    limit: number,
    offset: number,
  ): Promise<StoreRow[]> {
    const { sql, params } = storeSearch('postgres', namespacePrefix, filter, limit, offset);
    return (await this.pool.query(sql, params)).rows as StoreRow[];
  }

  protected async namespaces(operation: ListNamespacesOperation, options: { page: boolean }): Promise<string[]> {
    const { sql, params } = namespaceListing('postgres', operation, options);
    return ((await this.pool.query(sql, params)).rows as { namespace: string }[]).map((row) => row.namespace);
  }

  async truncate(): Promise<void> {
    await this.pool.query('DELETE FROM store_items');
  }

  /** The pool is the server's: nothing of its own to close. */
  async close(): Promise<void> {}
}
