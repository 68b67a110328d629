// The store's items as the API serves them (`/store/*`): reads, writes, searches and namespace
// listings, each under the custom auth handler's store filter when it returned one
// (`store-access.ts`: a hidden item reads as a missing one; a write must stay visible).

import type { Item } from '@langchain/langgraph';
import { invalid } from '../api/errors.ts';
import type { AuthFilters } from '../auth/filters.ts';
import type { NamespaceOptions, SearchOptions, ServerStore } from '../storage/store.ts';
import { checkStoreWrite, itemVisible, namespaceVisible, storeItemMetadata } from './store-access.ts';

/**
 * The store's own namespace and filter errors (should the routes' checks miss one, or the auth
 * handler rewrite a filter) are client errors too.
 */
async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Error && ['InvalidNamespaceError', 'InvalidStoreFilterError'].includes(error.name))
      throw invalid(error.message);
    throw error;
  }
}

export class StoreItems {
  constructor(private readonly store: ServerStore) {}

  /** The item, or null when there is none or the filter hides it (so its existence does not show). */
  async get(namespace: string[], key: string, filters?: AuthFilters): Promise<Item | null> {
    const item = await storeCall(() => this.store.get(namespace, key));
    return item && itemVisible(filters)(item) ? item : null;
  }

  async put(namespace: string[], key: string, value: Record<string, unknown>, filters?: AuthFilters): Promise<void> {
    if (filters)
      checkStoreWrite(filters, await this.store.get(namespace, key), storeItemMetadata(namespace, key, value));
    await storeCall(() => this.store.put(namespace, key, value));
  }

  async delete(namespace: string[], key: string, filters?: AuthFilters): Promise<void> {
    if (filters) {
      const existing = await this.store.get(namespace, key);
      checkStoreWrite(
        filters,
        existing,
        existing
          ? storeItemMetadata(existing.namespace, existing.key, existing.value)
          : storeItemMetadata(namespace, key),
      );
    }
    await storeCall(() => this.store.delete(namespace, key));
  }

  /** Under a filter, a page is full whenever enough visible items exist (`searchVisible`). */
  search(
    namespacePrefix: string[],
    options: SearchOptions & { query?: string },
    filters?: AuthFilters,
  ): Promise<Item[]> {
    if (filters) {
      const { filter, limit, offset } = options;
      return storeCall(() =>
        this.store.searchVisible(namespacePrefix, { filter, limit, offset }, itemVisible(filters)),
      );
    }
    return storeCall(() => this.store.search(namespacePrefix, options));
  }

  listNamespaces(options: NamespaceOptions, filters?: AuthFilters): Promise<string[][]> {
    if (filters) return this.store.listNamespacesVisible(options, namespaceVisible(filters));
    return storeCall(() => this.store.listNamespaces(options));
  }
}
