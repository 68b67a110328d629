// The store's namespace listing (`/store/namespaces`: prefix, suffix, max_depth, limit, offset) as
// one statement on either backend. The items' primary key (namespace, key) is the index: a
// recursive walk jumps from one namespace to the next (`min(namespace) > previous`, one index
// seek each) instead of reading every item, and jumps over a whole subtree once it has produced
// its truncated name (`max_depth`), so a listing reads one index entry per namespace it yields or
// passes, never the items. The prefix's leading labels bound the walk to their key range.
//
// Names sort in byte order (PostgreSQL `COLLATE "C"`, SQLite's BINARY), the order of the index.

import type { ListNamespacesOperation, MatchCondition } from '@langchain/langgraph';
import { SqlWhere } from '../sql-filters.ts';
import type { Dialect } from '../sql-filters.ts';

/** Whether `namespace` meets one condition of a listing (`*` matches any label). */
export function matchesCondition(namespace: readonly string[], condition: MatchCondition): boolean {
  const { path, matchType } = condition;
  if (path.length > namespace.length) return false;
  const part =
    matchType === 'prefix' ? namespace.slice(0, path.length) : namespace.slice(namespace.length - path.length);
  return path.every((label, index) => label === '*' || label === part[index]);
}

/** The SQL of a namespace's labels: its depth, whether it meets conditions, its first labels. */
interface LabelSql {
  depth(column: string): string;
  matches(w: SqlWhere, column: string, conditions: readonly MatchCondition[]): string;
  truncated(w: SqlWhere, column: string, depth: number): string;
}

const POSTGRES_LABELS: LabelSql = {
  depth: (column) => `cardinality(string_to_array(${column}, '.'))`,
  matches: (w, column, conditions) => {
    const labels = `string_to_array(${column}, '.')`;
    const clauses = conditions.flatMap(({ path, matchType }) => [
      `cardinality(${labels}) >= ${path.length}`,
      ...path.flatMap((label, i) => {
        if (label === '*') return [];
        const at = matchType === 'prefix' ? `${i + 1}` : `cardinality(${labels}) - ${path.length - 1 - i}`;
        return [`(${labels})[${at}] = ${w.param(label)}`];
      }),
    ]);
    return clauses.length === 0 ? 'TRUE' : clauses.join(' AND ');
  },
  truncated: (w, column, depth) => `array_to_string((string_to_array(${column}, '.'))[1:${w.param(depth)}::int], '.')`,
};

const SQLITE_LABELS: LabelSql = {
  depth: (column) => `(length(${column}) - length(replace(${column}, '.', '')) + 1)`,
  matches: (w, column, conditions) =>
    conditions.length === 0 ? 'TRUE' : `tp_namespace_matches(${column}, ${w.json(conditions)})`,
  truncated: (w, column, depth) => `tp_namespace_truncated(${column}, ${w.param(depth)})`,
};

/**
 * The statement of a listing: with `page`, the listing itself (names truncated to `maxDepth`,
 * distinct, sorted, `limit`/`offset` applied); without, every distinct stored namespace that meets
 * the conditions, whole (for a caller that judges each before truncating and paging).
 */
export function namespaceListing(
  dialect: Dialect,
  operation: ListNamespacesOperation,
  options: { page: boolean },
): { sql: string; params: unknown[] } {
  const w = new SqlWhere(dialect);
  const labels = dialect === 'postgres' ? POSTGRES_LABELS : SQLITE_LABELS;
  const conditions = operation.matchConditions ?? [];
  const prefix = conditions.find((condition) => condition.matchType === 'prefix')?.path ?? [];
  const wildcard = prefix.indexOf('*');
  const fixed = (wildcard === -1 ? prefix : prefix.slice(0, wildcard)).join('.');
  // The namespaces under the fixed labels `a.b`: `a.b` itself and [`a.b.`, `a.b/`) (`/` follows `.`).
  const within = (column: string) =>
    fixed === '' ? 'TRUE' : `${column} >= ${w.param(fixed)} AND ${column} < ${w.param(`${fixed}/`)}`;
  const depth = options.page ? operation.maxDepth : undefined;

  let sql = `WITH RECURSIVE walk(namespace) AS (
    SELECT (SELECT min(namespace) FROM store_items WHERE ${within('namespace')})
    UNION ALL
    SELECT (SELECT min(s.namespace) FROM store_items s WHERE TRUE`;
  // Past a namespace that yielded its first `depth` labels `t`, the rest of `t.…` yields `t`
  // again, so the walk jumps over it.
  const yieldsTruncated = () =>
    `${labels.depth('step.namespace')} > ${w.param(depth)} AND ${labels.matches(w, 'step.namespace', conditions)}`;
  if (depth === undefined) {
    sql += ` AND s.namespace > step.namespace`;
  } else if (dialect === 'postgres') {
    // PostgreSQL's B-tree scan starts at the tighter of the two lower bounds.
    sql += ` AND s.namespace > step.namespace AND s.namespace >= CASE WHEN ${yieldsTruncated()}
      THEN ${labels.truncated(w, 'step.namespace', depth)} || '/' ELSE '' END`;
  } else {
    // SQLite seeks on one lower bound and filters by any other: with two, it read a whole subtree
    // entry by entry (7.5 s for a listing at a million items). So one bound: past `t.` followed by
    // the largest character, which leaves only names beginning with that character in the
    // subtree (visited, and folded by DISTINCT like any other) and never goes back.
    sql += ` AND s.namespace > max(step.namespace, CASE WHEN ${yieldsTruncated()}
      THEN ${labels.truncated(w, 'step.namespace', depth)} || '.' || char(1114111) ELSE '' END)`;
  }
  sql += ` AND ${within('s.namespace')}) FROM walk step WHERE step.namespace IS NOT NULL)`;
  const name = depth === undefined ? 'namespace' : labels.truncated(w, 'namespace', depth);
  const collated = dialect === 'postgres' ? `(${name}) COLLATE "C"` : name;
  sql += ` SELECT DISTINCT ${collated} AS namespace FROM walk
    WHERE namespace IS NOT NULL AND ${labels.matches(w, 'namespace', conditions)} ORDER BY 1`;
  if (options.page) sql += ` LIMIT ${w.param(operation.limit)} OFFSET ${w.param(operation.offset)}`;
  return { sql, params: w.params };
}

/** What a SQLite connection needs to run `namespaceListing`: the label functions of `SQLITE_LABELS`. */
export function registerNamespaceFunctions(db: {
  function(name: string, options: { deterministic: boolean }, fn: (...args: never[]) => unknown): unknown;
}): void {
  let conditionsText: string | undefined;
  let conditions: MatchCondition[] = [];
  db.function('tp_namespace_matches', { deterministic: true }, (namespace: string, text: string) => {
    if (text !== conditionsText) [conditionsText, conditions] = [text, JSON.parse(text) as MatchCondition[]];
    const labels = namespace.split('.');
    return Number(conditions.every((condition) => matchesCondition(labels, condition)));
  });
  db.function('tp_namespace_truncated', { deterministic: true }, (namespace: string, depth: number) =>
    namespace.split('.').slice(0, depth).join('.'),
  );
}
