// Tests of the span timestamp conversion (internal/time.ts): it caches recent seconds and trims
// the fraction by arithmetic, so it is checked against the plain Date-and-regex form it replaced,
// over arbitrary nanosecond values and in orders that defeat its cache.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { nanosToRfc3339 } from './internal/time.ts';

/** The straightforward conversion: whole seconds through Date, the fraction padded then trimmed. */
function reference(nanos: bigint): string {
  const clamped = nanos < 0n ? 0n : nanos;
  const base = new Date(Number(clamped / 1_000_000_000n) * 1000).toISOString().slice(0, 19);
  const fraction = clamped % 1_000_000_000n;
  if (fraction === 0n) return `${base}Z`;
  return `${base}.${fraction.toString().padStart(9, '0').replace(/0+$/, '')}Z`;
}

// OTLP timestamps are fixed64: 0 to 2^64 - 1 nanoseconds (negative values only from bad input).
const nanos = fc.bigInt({ min: -(10n ** 12n), max: 2n ** 64n - 1n });

describe('nanosToRfc3339', () => {
  it('writes whole seconds without a fraction and trims trailing zeros', () => {
    assert.equal(nanosToRfc3339(1_700_000_001_000_000_000n), '2023-11-14T22:13:21Z');
    assert.equal(nanosToRfc3339(1_700_000_001_250_000_000n), '2023-11-14T22:13:21.25Z');
    assert.equal(nanosToRfc3339(1_700_000_001_000_000_001n), '2023-11-14T22:13:21.000000001Z');
    assert.equal(nanosToRfc3339(1_700_000_001_000_000_100n), '2023-11-14T22:13:21.0000001Z');
  });

  it('clamps a negative time to the epoch', () => {
    assert.equal(nanosToRfc3339(-5n), '1970-01-01T00:00:00Z');
  });

  it('agrees with the plain conversion for any value', () => {
    fc.assert(
      fc.property(nanos, (value) => nanosToRfc3339(value) === reference(value)),
      { numRuns: 20_000 },
    );
  });

  it('agrees with the plain conversion for runs of values in a few seconds, in any order', () => {
    // Sequences revisiting a handful of seconds exercise the cache's hits, misses and evictions.
    const nearby = fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 999_999_999 })), {
      minLength: 1,
      maxLength: 40,
    });
    fc.assert(
      fc.property(nearby, (points) =>
        points.every(([second, fraction]) => {
          const value = 1_700_000_000_000_000_000n + BigInt(second) * 1_000_000_000n + BigInt(fraction);
          return nanosToRfc3339(value) === reference(value);
        }),
      ),
    );
  });
});
