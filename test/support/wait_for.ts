// Polling for a condition, for tests and benchmarks that watch real processes: never a fixed sleep,
// never an assertion on how long something took. The timeout is only a bound on a hang.

import { setTimeout as sleep } from 'node:timers/promises';

export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
}

/**
 * Resolves once `condition` returns true (it may be async), checking every `intervalMs`; rejects
 * with WaitTimeoutError after `timeoutMs`, naming `what` (a string, or a function called then,
 * so that the message can carry the state that was not reached).
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string | (() => string) = 'condition',
  intervalMs = 25,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() >= deadline) {
      throw new WaitTimeoutError(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`,
      );
    }
    await sleep(intervalMs);
  }
}

/** Like waitFor, but resolves to false instead of rejecting when the time is up. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  intervalMs = 25,
): Promise<boolean> {
  try {
    await waitFor(condition, timeoutMs, 'condition', intervalMs);
    return true;
  } catch (error) {
    if (error instanceof WaitTimeoutError) return false;
    throw error;
  }
}
