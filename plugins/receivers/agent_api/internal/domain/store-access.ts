// The custom auth handler's filters applied to store items, as the reference server applies them:
// an item is judged by its value's fields together with its `namespace` and `key`, so a handler
// can return `{namespace: {$contains: user.identity}}` (items under the user's label) or filter
// on a field of the value. An item a filter hides is, for a read, an item that does not exist.

import type { Item } from '@langchain/langgraph';
import { matchesAuthFilters, requireWritable } from '../auth/filters.ts';
import type { AuthFilters } from '../auth/filters.ts';
import { notFound } from '../api/errors.ts';

/** What a store filter is matched against. */
export function storeItemMetadata(
  namespace: readonly string[] | null | undefined,
  key?: string,
  value?: Record<string, unknown> | null,
): Record<string, unknown> {
  return { ...(value ?? {}), namespace: [...(namespace ?? [])], ...(key === undefined ? {} : { key }) };
}

export const itemVisible =
  (filters: AuthFilters | undefined) =>
  (item: Item): boolean =>
    matchesAuthFilters(storeItemMetadata(item.namespace, item.key, item.value), filters);

export const namespaceVisible =
  (filters: AuthFilters | undefined) =>
  (namespace: string[]): boolean =>
    matchesAuthFilters(storeItemMetadata(namespace), filters);

/**
 * Before a write (put or delete) under a filter: an existing item the filter hides is a 404 (as
 * the reference answers); a write whose result the filter would hide is a 403 (so no one writes
 * where they could not read).
 */
export function checkStoreWrite(
  filters: AuthFilters | undefined,
  existing: Item | null,
  written: Record<string, unknown>,
): void {
  if (!filters) return;
  if (existing && !itemVisible(filters)(existing)) throw notFound('Item not found');
  requireWritable(written, filters);
}
