// Metadata and values filters: a filter matches when every one of its keys is present, non-null
// and equal in the target, recursing into objects (the containment rule of JSONB `@>`, which the
// PostgreSQL searches use; unlike `@>`, a null filter value never matches). An object filter never
// matches an array, as in JSONB.

export function containsJson(target: unknown, filter: unknown): boolean {
  if (filter === null || typeof filter !== 'object') return target === filter;
  if (target === null || typeof target !== 'object') return false;
  if (Array.isArray(filter) !== Array.isArray(target)) return false;
  if (Array.isArray(filter)) {
    // Every filter element must be contained in some target element, as JSONB does.
    return filter.every((item) => (target as unknown[]).some((candidate) => containsJson(candidate, item)));
  }
  for (const [key, value] of Object.entries(filter)) {
    const actual = (target as Record<string, unknown>)[key];
    if (actual === undefined || actual === null) return false;
    if (!containsJson(actual, value)) return false;
  }
  return true;
}
