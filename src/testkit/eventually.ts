// Waiting for an outcome in tests (part of `tracepipe/testing`): the one way the tests wait for
// something that happens in the background. Never a fixed sleep, and never an assertion on how long
// it took: the timeout is only a bound on a hang.

import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  /** How long to keep trying before giving up (default 20 s: a bound on a hang on a loaded machine). */
  readonly timeoutMs?: number;
  /** The pause between attempts (default 20 ms). */
  readonly intervalMs?: number;
  /** What is awaited, for the error of a predicate that never held (a function is called then). */
  readonly message?: string | (() => string);
  /** Stops waiting at once, rejecting with the signal's reason (e.g. when the process watched exits). */
  readonly signal?: AbortSignal;
}

/**
 * Calls `check` until it passes, and resolves to what it returned. `check` is either an assertion
 * (it passes when it does not throw) or a predicate (it passes when it returns anything but
 * `false`). On timeout the last assertion error is thrown as it is, so the failure reads like the
 * assertion's own; a predicate that never held gives an error naming `message`.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Exclude<Awaited<T>, false>> {
  const { timeoutMs = 20_000, intervalMs = 20, message, signal } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    signal?.throwIfAborted();
    let failure: { error: unknown } | undefined;
    try {
      const result = await check();
      if (result !== false) return result as Exclude<Awaited<T>, false>;
    } catch (error) {
      failure = { error };
    }
    if (Date.now() >= deadline) {
      if (failure) throw failure.error;
      const what = typeof message === 'function' ? message() : (message ?? 'the condition to hold');
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    try {
      await sleep(intervalMs, undefined, { signal });
    } catch {
      signal?.throwIfAborted();
    }
  }
}
