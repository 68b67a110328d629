// A partial structural match for acceptance tests, with the semantics of vitest's `toMatchObject`
// (which the reference server's suite uses): objects need only the expected keys, arrays must have
// the same length and match element by element, and a function stands for a predicate on the value
// (`anyString`, `matching(/re/)`), so expectations can be ported from that suite as they are written.

import assert from 'node:assert/strict';

export type Predicate = (value: unknown) => boolean;

export const anyString: Predicate = (value) => typeof value === 'string';
export const anyObject: Predicate = (value) => value !== null && typeof value === 'object';
export const matching =
  (pattern: RegExp): Predicate =>
  (value) =>
    typeof value === 'string' && pattern.test(value);

/** Asserts that `actual` matches `expected` as described above; the message names the first path that differs. */
export function assertMatches(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected === 'function') {
    assert.ok((expected as Predicate)(actual), `${path}: ${JSON.stringify(actual)} does not satisfy the predicate`);
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array, got ${JSON.stringify(actual)}`);
    assert.equal(
      actual.length,
      expected.length,
      `${path}: expected ${expected.length} items, got ${actual.length}: ${JSON.stringify(actual)}`,
    );
    expected.forEach((item, index) => assertMatches(actual[index], item, `${path}[${index}]`));
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    assert.ok(
      actual !== null && typeof actual === 'object',
      `${path}: expected an object, got ${JSON.stringify(actual)}`,
    );
    for (const [key, value] of Object.entries(expected)) {
      assertMatches((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
    }
    return;
  }
  assert.deepEqual(actual, expected, `${path} differs`);
}
