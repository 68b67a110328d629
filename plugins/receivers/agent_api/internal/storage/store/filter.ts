// A store search's `filter`, as LangGraph's stores define it (`compareValues` in
// @langchain/langgraph-checkpoint's `store/utils`, which its `InMemoryStore` applies): each
// top-level key of the filter names a top-level member of the item's value, and its filter value
// is either a plain value (equality: here the containment rule of `containsJson`, as before) or an
// object of operators, all of which must hold:
//
// - `$eq` / `$ne`: the member equals / does not equal the operand (deep JSON equality; a missing
//   member equals nothing, so `$ne` matches it).
// - `$gt`, `$gte`, `$lt`, `$lte`: the operand is a number or a string; a number compares with
//   numeric members, a string with string members (by code point, as PostgreSQL's "C" collation
//   orders UTF-8); any other member (a string against a number operand, a number against a string
//   operand, booleans, null, arrays, objects, a missing member) does not match. InMemoryStore
//   converts both sides with `Number()` instead: there a numeric string compares with a number,
//   and two non-numeric strings never match.
// - `$in` / `$nin`: the operand is an array; the member equals one of its elements / none of them
//   (a missing member is in no array).
//
// Anything else is refused (`StoreFilterError`, a 422 through the API) rather than matching
// nothing, as InMemoryStore silently does: an unknown `$` operator, an operand of the wrong type,
// operators mixed with plain keys in one object, and a `$` key below the top level (operators
// apply to top-level members only).
//
// SQLite runs `matchesConditions` (in SQL, as the function `tp_store_filter`); PostgreSQL runs
// `addStoreFilter`'s conditions; both before the page's LIMIT.

import { containsJson } from '../json-match.ts';
import { hasNullMember } from '../sql-filters.ts';
import type { SqlWhere } from '../sql-filters.ts';

export const STORE_FILTER_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin'] as const;
type Operator = (typeof STORE_FILTER_OPERATORS)[number];
type Range = '$gt' | '$gte' | '$lt' | '$lte';

/** One condition of a filter on one top-level key. */
export type StoreCondition =
  | { key: string; op: 'contains'; operand: unknown }
  | { key: string; op: '$eq' | '$ne'; operand: unknown }
  | { key: string; op: Range; operand: number | string }
  | { key: string; op: '$in' | '$nin'; operand: unknown[] };

/** A filter the store cannot apply; `message` names the key (`filter.<key>: …`). */
export class StoreFilterError extends Error {
  override readonly name = 'InvalidStoreFilterError';
  constructor(
    readonly key: string,
    readonly problem: string,
  ) {
    super(`filter.${key}: ${problem}`);
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const isOperator = (key: string): key is Operator => (STORE_FILTER_OPERATORS as readonly string[]).includes(key);

const shown = (value: unknown): string => JSON.stringify(value) ?? String(value);

/** The first object key starting with `$` anywhere in `value`, if any. */
function nestedOperator(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = nestedOperator(item);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isPlainObject(value)) return undefined;
  for (const [key, member] of Object.entries(value)) {
    if (key.startsWith('$')) return key;
    const found = nestedOperator(member);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The conditions of `filter`, or a `StoreFilterError` for the first thing it cannot apply. */
export function storeConditions(filter: Record<string, unknown> | undefined): StoreCondition[] {
  const conditions: StoreCondition[] = [];
  for (const [key, wanted] of Object.entries(filter ?? {})) {
    const operators = isPlainObject(wanted) ? Object.keys(wanted).filter((name) => name.startsWith('$')) : [];
    if (!isPlainObject(wanted) || operators.length === 0) {
      const nested = nestedOperator(wanted);
      if (nested !== undefined)
        throw new StoreFilterError(key, `operators apply to top-level keys only (found "${nested}" below "${key}")`);
      conditions.push({ key, op: 'contains', operand: wanted });
      continue;
    }
    const plain = Object.keys(wanted).filter((name) => !name.startsWith('$'));
    if (plain.length > 0)
      throw new StoreFilterError(
        key,
        `cannot mix operators (${operators.join(', ')}) with plain keys (${plain.join(', ')})`,
      );
    for (const [op, operand] of Object.entries(wanted)) {
      if (!isOperator(op))
        throw new StoreFilterError(key, `unknown operator "${op}" (supported: ${STORE_FILTER_OPERATORS.join(', ')})`);
      if (operand === undefined) throw new StoreFilterError(key, `${op} needs an operand`);
      if (op === '$eq' || op === '$ne') conditions.push({ key, op, operand });
      else if (op === '$in' || op === '$nin') {
        if (!Array.isArray(operand)) throw new StoreFilterError(key, `${op} needs an array (got ${shown(operand)})`);
        conditions.push({ key, op, operand });
      } else {
        if (!(typeof operand === 'string' || (typeof operand === 'number' && Number.isFinite(operand))))
          throw new StoreFilterError(key, `${op} needs a number or a string (got ${shown(operand)})`);
        conditions.push({ key, op, operand });
      }
    }
  }
  return conditions;
}

/** Deep JSON equality: arrays in order, objects by their members; `undefined` equals nothing. */
function jsonEquals(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return false;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => jsonEquals(item, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return (
    keys.length === Object.keys(right).length &&
    keys.every((key) => Object.hasOwn(right, key) && jsonEquals(left[key], right[key]))
  );
}

/** Strings by code point (UTF-16 code units order astral characters before U+E000–U+FFFF). */
function compareCodePoints(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(j)!;
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return i < a.length ? 1 : j < b.length ? -1 : 0;
}

/** How `member` compares with `operand` when they are of the same kind (number or string). */
function compareSameKind(member: unknown, operand: number | string): number | undefined {
  if (typeof operand === 'number')
    return typeof member === 'number' ? (member < operand ? -1 : member > operand ? 1 : 0) : undefined;
  return typeof member === 'string' ? compareCodePoints(member, operand) : undefined;
}

function conditionHolds(value: Record<string, unknown>, condition: StoreCondition): boolean {
  const member = Object.hasOwn(value, condition.key) ? value[condition.key] : undefined;
  switch (condition.op) {
    case 'contains':
      return containsJson(member, condition.operand);
    case '$eq':
      return jsonEquals(member, condition.operand);
    case '$ne':
      return !jsonEquals(member, condition.operand);
    case '$in':
      return condition.operand.some((item) => jsonEquals(member, item));
    case '$nin':
      return !condition.operand.some((item) => jsonEquals(member, item));
    default: {
      const order = compareSameKind(member, condition.operand);
      if (order === undefined) return false;
      if (condition.op === '$gt') return order > 0;
      if (condition.op === '$gte') return order >= 0;
      if (condition.op === '$lt') return order < 0;
      return order <= 0;
    }
  }
}

/** Whether an item's `value` passes every condition of a filter. */
export function matchesConditions(value: Record<string, unknown>, conditions: readonly StoreCondition[]): boolean {
  return conditions.every((condition) => conditionHolds(value, condition));
}

/** Whether an item's `value` passes `filter` (`storeConditions`; throws `StoreFilterError`). */
export function matchesStoreFilter(value: Record<string, unknown>, filter: Record<string, unknown>): boolean {
  return matchesConditions(value, storeConditions(filter));
}

const SQL_RANGE: Record<Range, string> = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' };

/**
 * Adds the conditions of `filter` on the jsonb column `value` (PostgreSQL). Plain keys stay one
 * `@>` (the GIN index's), as before; `$eq` adds the same containment, which equality implies.
 */
export function addStoreFilter(w: SqlWhere, conditions: readonly StoreCondition[]): void {
  const plain: Record<string, unknown> = {};
  for (const condition of conditions) if (condition.op === 'contains') plain[condition.key] = condition.operand;
  if (Object.keys(plain).length > 0) {
    // A null below the top level never matches (`containsJson`); at the top level it asks for a
    // JSON null, as `@>` does.
    if (Object.values(plain).some(hasNullMember)) w.add('FALSE');
    else w.add(`value @> ${w.json(plain)}`);
  }
  for (const condition of conditions) {
    if (condition.op === 'contains') continue;
    const key = condition.key;
    switch (condition.op) {
      case '$eq':
        w.add(`value @> ${w.json({ [key]: condition.operand })}`);
        w.add(`value -> ${w.param(key)} = ${w.json(condition.operand)}`);
        break;
      case '$ne':
        w.add(`value -> ${w.param(key)} IS DISTINCT FROM ${w.json(condition.operand)}`);
        break;
      case '$in':
      case '$nin': {
        const member = `value -> ${w.param(key)}`;
        const exists = `EXISTS (SELECT 1 FROM jsonb_array_elements(${w.json(condition.operand)}) AS e (item) WHERE e.item = ${member})`;
        w.add(condition.op === '$in' ? exists : `NOT ${exists}`);
        break;
      }
      default: {
        // CASE, not AND: PostgreSQL may evaluate an AND's operands in any order, and a string
        // member cast to numeric is an error. The key's placeholder serves both references.
        const sign = SQL_RANGE[condition.op];
        const member = `value -> ${w.param(key)}`;
        const [kind, left, right] =
          typeof condition.operand === 'number'
            ? ['number', `(${member})::numeric`, `${w.param(String(condition.operand))}::numeric`]
            : ['string', `(${member} #>> '{}') COLLATE "C"`, `${w.param(condition.operand)}::text COLLATE "C"`];
        w.add(`CASE WHEN jsonb_typeof(${member}) = '${kind}' THEN ${left} ${sign} ${right} ELSE FALSE END`);
      }
    }
  }
}
