// Small request/response shaping shared by the route modules: nulls as absent fields, `select`
// narrowing, the pagination headers of search endpoints, and the parameters routes read without
// a schema declaring them.

import type { FastifyReply } from 'fastify';
import type { WithoutNulls } from '../api/schemas.ts';

/** A top-level null means "not given" (the Python SDK sends null for every unset option). */
export function withoutNulls<T extends object>(body: T): WithoutNulls<T>;
export function withoutNulls<T extends object>(body: T | null | undefined): Partial<WithoutNulls<T>>;
export function withoutNulls<T extends object>(body: T | null | undefined): Partial<WithoutNulls<T>> {
  if (!body || typeof body !== 'object') return {};
  // The entries are the body's own, less its nulls: what `WithoutNulls<T>` describes.
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null)) as Partial<WithoutNulls<T>>;
}

export function selectFields<T extends object>(items: T[], select: readonly string[] | undefined): Partial<T>[] {
  if (!select || select.length === 0) return items;
  return items.map(
    (item) => Object.fromEntries(Object.entries(item).filter(([key]) => select.includes(key))) as Partial<T>,
  );
}

/**
 * `X-Pagination-Total`: the matches up to this page's end, plus one when there are more (the
 * storage's `Page.total`, as the hosted server reports it); `X-Pagination-Next`: the next page's
 * offset, when there is one.
 */
export function setPagination(reply: FastifyReply, total: number, offset: number, limit: number): void {
  reply.header('x-pagination-total', String(total));
  if (offset + limit < total) reply.header('x-pagination-next', String(offset + limit));
}

export function isTrue(value: unknown): boolean {
  return value === true || value === '1' || value === 'true' || value === 'yes';
}

/**
 * A query-string or path parameter that the route's schema does not declare (declaring it would
 * change what the route accepts or its OpenAPI document). Fastify's parsers give a string, or an
 * array of strings for a query parameter given more than once.
 */
export function requestParameter(part: unknown, name: string): string | string[] | undefined {
  if (typeof part !== 'object' || part === null) return undefined;
  const value: unknown = Reflect.get(part, name);
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return undefined;
}

/** A path parameter of the route's own path, which Fastify always sets (to a string). */
export function pathParameter(params: unknown, name: string): string {
  const value = requestParameter(params, name);
  return typeof value === 'string' ? value : '';
}
