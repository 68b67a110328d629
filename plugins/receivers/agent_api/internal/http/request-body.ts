// Small request/response shaping shared by the route modules: nulls as absent fields, `select`
// narrowing, and the pagination headers of search endpoints.

import type { FastifyReply } from 'fastify';

/** A top-level null means "not given" (the Python SDK sends null for every unset option). */
export function withoutNulls<T extends object>(body: T | null | undefined): Partial<T> {
  if (!body || typeof body !== 'object') return {};
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null)) as Partial<T>;
}

export function selectFields<T extends object>(items: T[], select: readonly string[] | undefined): Partial<T>[] {
  if (!select || select.length === 0) return items;
  return items.map(
    (item) => Object.fromEntries(Object.entries(item).filter(([key]) => select.includes(key))) as Partial<T>,
  );
}

/** `X-Pagination-Total`: all matches; `X-Pagination-Next`: the next page's offset, when there is one. */
export function setPagination(reply: FastifyReply, total: number, offset: number, limit: number): void {
  reply.header('x-pagination-total', String(total));
  if (offset + limit < total) reply.header('x-pagination-next', String(offset + limit));
}

export function isTrue(value: unknown): boolean {
  return value === true || value === '1' || value === 'true' || value === 'yes';
}
