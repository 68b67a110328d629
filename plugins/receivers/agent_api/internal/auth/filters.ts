// Authorization filters: what a custom auth handler returns to narrow a request to the resources
// the user may see (`{owner: user.identity}`), and the one rule deciding whether a resource's
// metadata satisfies them. Every resource kind (threads, assistants, runs through their thread,
// store items, and crons when they come) is checked with this same function, in storage queries
// and in single-id lookups alike, so a filter means the same everywhere.
//
// Semantics (those of the SDK's `Filters` type and the reference server's `isAuthMatching`):
//   {key: value}               metadata[key] === value
//   {key: {$eq: value}}        metadata[key] === value
//   {key: {$contains: v}}      metadata[key] is an array holding v
//   {key: {$contains: [a, b]}} metadata[key] is an array holding a and b
// Every key must hold. Unlike the reference, an operator object is checked by the operators it
// has (`{$eq: ""}` compares with the empty string rather than matching everything), and a filter
// of any other shape is refused when the handler returns it (see `checkAuthFilters`).

import { forbidden } from '../api/errors.ts';

export type AuthFilterValue = string | number | boolean | null | { $eq?: unknown; $contains?: unknown };
export type AuthFilters = Record<string, AuthFilterValue>;

const OPERATORS = new Set(['$eq', '$contains']);

/** Whether `metadata` satisfies every condition of `filters`; no filters: always. */
export function matchesAuthFilters(
  metadata: Readonly<Record<string, unknown>> | null | undefined,
  filters: AuthFilters | undefined,
): boolean {
  if (!filters) return true;
  for (const [key, condition] of Object.entries(filters)) {
    const actual = metadata?.[key];
    if (condition !== null && typeof condition === 'object') {
      if ('$eq' in condition && actual !== condition.$eq) return false;
      if ('$contains' in condition) {
        if (!Array.isArray(actual)) return false;
        const wanted = Array.isArray(condition.$contains) ? condition.$contains : [condition.$contains];
        if (!wanted.every((item) => actual.includes(item))) return false;
      }
    } else if (actual !== condition) {
      return false;
    }
  }
  return true;
}

/**
 * After a write under `filters`: what the write leaves must still pass them, else the write is
 * refused (403) before anything is stored. A handler that filters by `owner` but does not stamp
 * it on updates would otherwise let a user hand a resource to another — a write into that user's
 * account.
 */
export function requireWritable(
  written: Readonly<Record<string, unknown>> | null | undefined,
  filters: AuthFilters | undefined,
): void {
  if (!matchesAuthFilters(written, filters)) throw forbidden('Not authorized');
}

/**
 * Checks the shape of a filter object a handler returned; returns a reason when it is not one
 * this server can apply (so a typo never silently lets everything through, or nothing).
 */
export function checkAuthFilters(filters: Record<string, unknown>): string | undefined {
  for (const [key, condition] of Object.entries(filters)) {
    if (condition === null || ['string', 'number', 'boolean'].includes(typeof condition)) continue;
    if (typeof condition !== 'object' || Array.isArray(condition))
      return `filter "${key}" must be a value or an operator object, got ${Array.isArray(condition) ? 'an array' : typeof condition}`;
    const operators = Object.keys(condition);
    const unknown = operators.filter((operator) => !OPERATORS.has(operator));
    if (unknown.length > 0 || operators.length === 0) {
      return `filter "${key}" may only use $eq and $contains${unknown.length > 0 ? ` (got ${unknown.join(', ')})` : ''}`;
    }
  }
  return undefined;
}
