// Metadata and values filters: a filter matches when every one of its keys is present, non-null
// and equal in the target, recursing into objects (the containment rule of JSONB `@>`).

export function containsJson(target: unknown, filter: unknown): boolean {
  if (filter === null || typeof filter !== 'object') return target === filter;
  if (target === null || typeof target !== 'object') return false;
  if (Array.isArray(filter)) {
    if (!Array.isArray(target)) return false;
    // Every filter element must be contained in some target element, as JSONB does.
    return filter.every((item) => target.some((candidate) => containsJson(candidate, item)));
  }
  for (const [key, value] of Object.entries(filter)) {
    const actual = (target as Record<string, unknown>)[key];
    if (actual === undefined || actual === null) return false;
    if (!containsJson(actual, value)) return false;
  }
  return true;
}
