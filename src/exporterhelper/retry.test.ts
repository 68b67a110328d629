import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { RetryConfig } from './retry.ts';
import { backoffDelay, classifyHttpStatus, parseRetryAfter, withRetry } from './retry.ts';
import type { Verdict } from './verdict.ts';
import { reject, retry, sent } from './verdict.ts';

const fast: RetryConfig = {
  max_retries: 3,
  initial_backoff_ms: 1,
  max_backoff_ms: 4,
  multiplier: 2,
  max_retry_after_ms: 30_000,
};

function script(...results: Verdict<never>[]) {
  const calls: number[] = [];
  return {
    calls,
    attempt: async (n: number) => {
      calls.push(n);
      return results[Math.min(n - 1, results.length - 1)]!;
    },
  };
}

describe('backoffDelay', () => {
  it('draws below a bound that doubles from the initial backoff up to the cap', () => {
    const config: RetryConfig = {
      max_retries: 10,
      initial_backoff_ms: 100,
      max_backoff_ms: 1000,
      multiplier: 2,
      max_retry_after_ms: 0,
    };
    const top = () => 0.999999;
    assert.equal(backoffDelay(config, 1, 0, top), 99);
    assert.equal(backoffDelay(config, 2, 0, top), 199);
    assert.equal(backoffDelay(config, 4, 0, top), 799);
    assert.equal(backoffDelay(config, 9, 0, top), 999);
    assert.equal(
      backoffDelay(config, 3, 0, () => 0),
      0,
    );
  });

  it('never goes below the server delay up to its cap, nor above max(backoff cap, capped server delay)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (initial, retryNumber, server, serverCap, r) => {
          const config: RetryConfig = {
            max_retries: 20,
            initial_backoff_ms: initial,
            max_backoff_ms: initial * 8,
            multiplier: 2,
            max_retry_after_ms: serverCap,
          };
          const delay = backoffDelay(config, retryNumber, server, () => r);
          assert.ok(delay >= Math.min(server, serverCap));
          assert.ok(delay <= Math.max(initial * 8, Math.min(server, serverCap)));
        },
      ),
    );
  });

  it('honours a Retry-After of an hour only up to max_retry_after_ms', () => {
    const config: RetryConfig = { ...fast, max_retry_after_ms: 30_000 };
    assert.equal(
      backoffDelay(config, 1, 3_600_000, () => 0),
      30_000,
    );
    assert.equal(
      backoffDelay(config, 1, 2_000, () => 0),
      2_000,
    );
    assert.equal(
      backoffDelay({ ...config, max_retry_after_ms: 0 }, 1, 3_600_000, () => 0),
      0,
    );
  });
});

describe('withRetry', () => {
  it('makes max_retries + 1 attempts, then returns the last retry verdict', async () => {
    const s = script(retry({ httpStatus: 503 }));
    let retries = 0;
    const { last, attempts } = await withRetry(s.attempt, fast, { onRetry: () => retries++ });
    assert.equal(last.verdict, 'retry');
    assert.equal(attempts, 4);
    assert.equal(retries, 3);
  });

  it('stops at the first verdict that is not retry', async () => {
    const s = script(retry({}), sent());
    const outcome = await withRetry(s.attempt, fast);
    assert.deepEqual([outcome.last.verdict, outcome.attempts], ['sent', 2]);
  });

  it('does not retry a rejection', async () => {
    const s = script(reject({ httpStatus: 400 }));
    const outcome = await withRetry(s.attempt, fast);
    assert.deepEqual([outcome.last.verdict, outcome.attempts], ['reject', 1]);
  });

  it('with max_retries 0 makes one attempt', async () => {
    const s = script(retry({}));
    const outcome = await withRetry(s.attempt, { ...fast, max_retries: 0 });
    assert.equal(outcome.attempts, 1);
  });

  it('returns at once when aborted during a backoff', async () => {
    const controller = new AbortController();
    const s = script(retry({}, 60_000));
    const pending = withRetry(s.attempt, fast, { signal: controller.signal });
    setImmediate(() => controller.abort());
    const outcome = await pending;
    assert.deepEqual([outcome.last.verdict, outcome.attempts], ['retry', 1]);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    assert.equal(parseRetryAfter('2'), 2000);
    assert.equal(parseRetryAfter(' 0 '), 0);
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now), 0);
  });

  it('ignores what it cannot read', () => {
    assert.equal(parseRetryAfter(undefined), undefined);
    assert.equal(parseRetryAfter('soon'), undefined);
    assert.equal(parseRetryAfter('-5'), undefined);
    assert.equal(parseRetryAfter('1.5'), undefined);
  });
});

describe('classifyHttpStatus', () => {
  it('retries 408, 425, 429, 499 and 5xx; accepts any 2xx; fails the rest', () => {
    for (const status of [200, 201, 202, 204]) assert.equal(classifyHttpStatus(status), 'success');
    for (const status of [408, 425, 429, 499, 500, 502, 503, 504])
      assert.equal(classifyHttpStatus(status), 'retryable');
    for (const status of [301, 400, 401, 403, 404, 409, 413, 422]) assert.equal(classifyHttpStatus(status), 'failure');
  });
});

describe('backoffDelay with a zero initial backoff', () => {
  it('retries at once unless the server asks for a delay', () => {
    const config: RetryConfig = {
      max_retries: 3,
      initial_backoff_ms: 0,
      max_backoff_ms: 100,
      multiplier: 2,
      max_retry_after_ms: 30_000,
    };
    assert.equal(backoffDelay(config, 1), 0);
    assert.equal(backoffDelay(config, 3), 0);
    assert.equal(backoffDelay(config, 2, 500), 500);
  });
});
