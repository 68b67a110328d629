// The filters of searches as SQL, for both backends: metadata and values containment
// (`json-match.ts`), the custom auth handler's filters (`auth/filters.ts`), and the parameters they
// bind. Each search is then one statement that the database answers from an index, instead of
// rows read whole and filtered in process.
//
// PostgreSQL answers containment with `jsonb @>` (GIN, `jsonb_path_ops`). SQLite has no such
// operator: a top-level scalar of a thread's metadata or values is found through `thread_fields`
// (an index table the triggers of migration 3 keep, `sqlite.ts`), and whatever is not a top-level
// scalar (nested objects, arrays, `$contains`) is decided by the functions `tp_contains` and
// `tp_auth`, which run the same JavaScript rule as the in-process filters did, on the rows the
// indexed conditions leave.
//
// Where `jsonb @>` and the rule of `containsJson` differ, the SQL keeps the rule: a null member
// value in a filter never matches (`{a: null}`), so such a filter becomes FALSE.

import type { AuthFilters } from '../auth/filters.ts';
import { matchesAuthFilters } from '../auth/filters.ts';
import { containsJson } from './json-match.ts';
import type { JsonObject } from './storage.ts';

export type Dialect = 'sqlite' | 'postgres';

/**
 * The conditions of one statement and the parameters they bind: numbered on PostgreSQL (`$1`), in
 * order on SQLite (`?`, which better-sqlite3 binds by position), so a condition's text must bind its
 * parameters in the order they appear.
 */
export class SqlWhere {
  private readonly conditions: string[] = [];
  readonly params: unknown[] = [];
  /** The conditions answered from `thread_fields` (SQLite), for the choice of plan (`fieldProbe`). */
  readonly fields: IndexedField[] = [];

  constructor(readonly dialect: Dialect) {}

  /** Binds `value` and returns its placeholder. */
  param(value: unknown): string {
    this.params.push(value);
    return this.dialect === 'postgres' ? `$${this.params.length}` : '?';
  }

  /** A JSON parameter: `jsonb` on PostgreSQL, text on SQLite. */
  json(value: unknown): string {
    const placeholder = this.param(JSON.stringify(value));
    return this.dialect === 'postgres' ? `${placeholder}::jsonb` : placeholder;
  }

  add(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /** `WHERE …` (or nothing). */
  get clause(): string {
    return this.conditions.length === 0 ? '' : `WHERE ${this.conditions.join(' AND ')}`;
  }
}

/** Where a thread's top-level scalars are indexed in SQLite (`thread_fields`): its table and source. */
export interface FieldIndex {
  /** The column of the searched table the index rows point to (`t.thread_id`). */
  readonly id: string;
  /** 0: metadata, 1: values. */
  readonly source: 0 | 1;
  /**
   * How a condition uses the index: `list` reads the threads a field value names (few matches:
   * the database starts from them); `probe` looks each row up as the statement walks another
   * index, the sort order's (many matches: the page fills after a few rows).
   */
  readonly use: 'list' | 'probe';
}

/** A condition on a top-level scalar, as `thread_fields` records it. */
export interface IndexedField {
  readonly source: 0 | 1;
  readonly key: string;
  readonly kind: 's' | 'n' | 'b' | 'z';
  readonly value: string | number | null;
}

type Scalar = string | number | boolean | null;

function isScalar(value: unknown): value is Scalar {
  return value === null || ['string', 'boolean'].includes(typeof value) || Number.isFinite(value);
}

/** Whether `filter` holds a null as the value of an object member, at any depth. */
export function hasNullMember(filter: unknown): boolean {
  if (filter === null || typeof filter !== 'object') return false;
  if (Array.isArray(filter)) return filter.some(hasNullMember);
  return Object.values(filter).some((value) => value === null || hasNullMember(value));
}

/** The kind of a scalar as `thread_fields` records it: s(tring), n(umber), b(oolean), z (null). */
function fieldKind(value: Scalar): 's' | 'n' | 'b' | 'z' {
  if (value === null) return 'z';
  return typeof value === 'string' ? 's' : typeof value === 'number' ? 'n' : 'b';
}

/** The conditions on `thread_fields` of `field`, binding its parameters. */
function fieldConditions(w: SqlWhere, field: IndexedField): string {
  const keyed = `f.source = ${field.source} AND f.key = ${w.param(field.key)} AND f.kind = '${field.kind}'`;
  return field.value === null ? keyed : `${keyed} AND f.value = ${w.param(field.value)}`;
}

/** A condition that the top-level member `key` of the indexed JSON equals the scalar `value`. */
function fieldEquals(w: SqlWhere, index: FieldIndex, key: string, value: Scalar): string {
  const kind = fieldKind(value);
  const field = {
    source: index.source,
    key,
    kind,
    value: kind === 'z' ? null : typeof value === 'boolean' ? Number(value) : value,
  };
  w.fields.push(field);
  return index.use === 'list'
    ? `${index.id} IN (SELECT f.thread_id FROM thread_fields f WHERE ${fieldConditions(w, field)})`
    : `EXISTS (SELECT 1 FROM thread_fields f WHERE f.thread_id = ${index.id} AND ${fieldConditions(w, field)})`;
}

/** How many threads `field` names, counted up to `cap`. */
export function fieldProbe(field: IndexedField, cap: number): { sql: string; params: unknown[] } {
  const w = new SqlWhere('sqlite');
  const sql = `SELECT COUNT(*) AS n FROM (SELECT 1 FROM thread_fields f WHERE ${fieldConditions(w, field)} LIMIT ${w.param(cap)})`;
  return { sql, params: w.params };
}

/**
 * Adds "the JSON in `column` contains `filter`" (`containsJson`). A NULL (or JSON null) column
 * never contains anything, not even `{}`; `nullable` says the column may hold one. `index`: SQLite
 * only, the field index to answer top-level scalars from.
 */
export function addContainment(
  w: SqlWhere,
  column: string,
  filter: JsonObject,
  options: { index?: FieldIndex | undefined; nullable?: boolean } = {},
): void {
  const { index, nullable = false } = options;
  if (hasNullMember(filter)) {
    w.add('FALSE');
    return;
  }
  if (Object.keys(filter).length === 0 && !nullable) return;
  if (w.dialect === 'postgres') {
    w.add(`${column} @> ${w.json(filter)}`);
    return;
  }
  const rest: JsonObject = {};
  for (const [key, value] of Object.entries(filter)) {
    if (index && isScalar(value)) w.add(fieldEquals(w, index, key, value));
    else rest[key] = value;
  }
  // A field row exists only for an object column; `{}` still asks for an object.
  if (Object.keys(rest).length > 0 || Object.keys(filter).length === 0)
    w.add(`tp_contains(${column}, ${w.json(rest)})`);
}

/** One condition of an auth filter, normalised: what `matchesAuthFilters` checks for one key. */
type AuthClause =
  | { key: string; op: 'eq'; value: Scalar }
  | { key: string; op: 'absent' }
  | { key: string; op: 'contains'; items: Scalar[] }
  | { op: 'never' };

/** The clauses of `filters`, each a condition `matchesAuthFilters` applies. */
function authClauses(filters: AuthFilters): AuthClause[] {
  const clauses: AuthClause[] = [];
  const equal = (key: string, value: unknown): AuthClause =>
    value === undefined ? { key, op: 'absent' } : isScalar(value) ? { key, op: 'eq', value } : { op: 'never' };
  for (const [key, condition] of Object.entries(filters)) {
    if (condition === null || typeof condition !== 'object') {
      clauses.push(equal(key, condition));
      continue;
    }
    if ('$eq' in condition) clauses.push(equal(key, condition.$eq));
    if ('$contains' in condition) {
      const items = Array.isArray(condition.$contains) ? condition.$contains : [condition.$contains];
      // `Array.prototype.includes` finds an object only by identity, never in parsed JSON.
      clauses.push(items.every(isScalar) ? { key, op: 'contains', items } : { op: 'never' });
    }
  }
  return clauses;
}

/**
 * Adds "the metadata in `column` satisfies the custom auth handler's `filters`"
 * (`matchesAuthFilters`). `index`: SQLite only, as for `addContainment`.
 */
export function addAuthFilters(w: SqlWhere, column: string, filters: AuthFilters | undefined, index?: FieldIndex) {
  if (!filters) return;
  const clauses = authClauses(filters);
  if (clauses.some((clause) => clause.op === 'never')) {
    w.add('FALSE');
    return;
  }
  if (w.dialect === 'sqlite') {
    const rest = index ? clauses.filter((clause) => clause.op !== 'eq') : clauses;
    for (const clause of clauses)
      if (index && clause.op === 'eq') w.add(fieldEquals(w, index, clause.key, clause.value));
    if (rest.length > 0) w.add(`tp_auth(${column}, ${w.json(rest)})`);
    return;
  }
  for (const clause of clauses) {
    if (clause.op === 'eq') w.add(`${column} @> ${w.json({ [clause.key]: clause.value })}`);
    else if (clause.op === 'absent') w.add(`NOT (${column} ? ${w.param(clause.key)})`);
    else if (clause.op === 'contains') {
      const key = w.param(clause.key);
      w.add(`jsonb_typeof(${column} -> ${key}) = 'array' AND ${column} @> ${w.json({ [clause.key]: clause.items })}`);
    }
  }
}

/** `tp_auth`: the normalised clauses applied to one row's metadata, as `matchesAuthFilters` would. */
function matchesClauses(metadata: Record<string, unknown>, clauses: AuthClause[]): boolean {
  const filters: AuthFilters = {};
  for (const clause of clauses) {
    if (clause.op === 'never') return false;
    if (clause.op === 'absent' && metadata[clause.key] !== undefined) return false;
    if (clause.op === 'eq') filters[clause.key] = clause.value;
    if (clause.op === 'contains' && !matchesAuthFilters(metadata, { [clause.key]: { $contains: clause.items } }))
      return false;
  }
  return matchesAuthFilters(metadata, filters);
}

/** Parses a JSON parameter once per statement, not once per row (the text repeats on every call). */
function lastParsed(): (text: string) => unknown {
  let text: string | undefined;
  let value: unknown;
  return (next) => {
    if (next !== text) {
      text = next;
      value = JSON.parse(next);
    }
    return value;
  };
}

/** What a SQLite connection needs to run the conditions above: `tp_contains`, `tp_auth`, `tp_lower`. */
export function registerSqliteFilterFunctions(db: {
  function(name: string, options: { deterministic: boolean }, fn: (...args: never[]) => unknown): unknown;
}): void {
  db.function('tp_lower', { deterministic: true }, (value: string | null) => value?.toLowerCase() ?? null);
  const filterOf = lastParsed();
  const clausesOf = lastParsed();
  db.function('tp_contains', { deterministic: true }, (target: string | null, filter: string) =>
    target === null ? 0 : Number(containsJson(JSON.parse(target), filterOf(filter))),
  );
  db.function('tp_auth', { deterministic: true }, (metadata: string | null, clauses: string) =>
    Number(matchesClauses(metadata === null ? {} : JSON.parse(metadata), clausesOf(clauses) as AuthClause[])),
  );
}
