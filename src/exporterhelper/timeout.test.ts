import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TimeoutError, withTimeout } from './timeout.ts';

const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_resolve, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
  );

describe('withTimeout', () => {
  it("returns the work's result when it settles in time", async () => {
    assert.equal(await withTimeout(async () => 42, 1000), 42);
  });

  it('aborts the work and raises TimeoutError when it does not', async () => {
    let aborted = false;
    await assert.rejects(
      withTimeout((signal) => {
        signal.addEventListener('abort', () => (aborted = true));
        return untilAborted(signal);
      }, 10),
      (error: unknown) => error instanceof TimeoutError && error.timeoutMs === 10,
    );
    assert.equal(aborted, true);
  });

  it("passes a parent abort through with the parent's reason", async () => {
    const parent = new AbortController();
    const reason = new Error('shutting down');
    const pending = withTimeout(untilAborted, 60_000, parent.signal);
    parent.abort(reason);
    await assert.rejects(pending, (error: unknown) => error === reason);
    const already = new AbortController();
    already.abort(reason);
    await assert.rejects(withTimeout(untilAborted, 60_000, already.signal), (error: unknown) => error === reason);
  });

  it("lets the work's own errors through", async () => {
    await assert.rejects(
      withTimeout(async () => Promise.reject(new RangeError('bad')), 1000),
      RangeError,
    );
  });
});
