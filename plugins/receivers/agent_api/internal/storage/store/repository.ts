// What the store's two repositories (`sqlite.ts`, `postgres.ts`) have in common above their
// statements: the searches and listings filtered for the custom auth handler, built on the one
// page read and the one listing each repository runs its own way (synchronously on SQLite, on the
// pool on PostgreSQL).

import { BaseStore } from '@langchain/langgraph';
import type { Item, ListNamespacesOperation } from '@langchain/langgraph';
import { namespacePage, namespacesOperation, searchOperation, searchVisiblePage } from '../store.ts';
import type { NamespaceOptions, SearchOptions, ServerStore, StoreRow } from '../store.ts';

export abstract class StoreRepository extends BaseStore implements ServerStore {
  /** A page of the items a search matches (`storeSearch`). */
  protected abstract rows(
    namespacePrefix: readonly string[],
    filter: Record<string, unknown> | undefined,
    limit: number,
    offset: number,
  ): StoreRow[] | Promise<StoreRow[]>;

  /** The namespaces of a listing (`namespaceListing`), dot-joined. */
  protected abstract namespaces(
    operation: ListNamespacesOperation,
    options: { page: boolean },
  ): string[] | Promise<string[]>;

  abstract truncate(): Promise<void>;
  abstract close(): Promise<void>;

  async searchVisible(
    namespacePrefix: string[],
    options: SearchOptions,
    visible: (item: Item) => boolean,
  ): Promise<Item[]> {
    return searchVisiblePage(
      async (limit, offset) => this.rows(namespacePrefix, options.filter, limit, offset),
      searchOperation(namespacePrefix, options),
      visible,
    );
  }

  async listNamespacesVisible(
    options: NamespaceOptions,
    visible: (namespace: string[]) => boolean,
  ): Promise<string[][]> {
    const operation = namespacesOperation(options);
    return namespacePage(await this.namespaces(operation, { page: false }), operation, visible);
  }
}
