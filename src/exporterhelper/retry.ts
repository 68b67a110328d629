// The retry loop every exporter uses: exponential backoff with full jitter, the server's
// `Retry-After` as a floor up to a cap (`max_retry_after_ms`: one `Retry-After: 3600` must not park
// a sender for an hour), and no retry of anything but a `retry` verdict (verdict.ts). Transports
// report each attempt as an `ExportResult` (as in OTel JS `export-response.ts`) instead of
// throwing, so that no one has to guess from messages.

import { setTimeout as sleep } from 'node:timers/promises';

export type ExportStatus = 'success' | 'failure' | 'retryable';

/** The outcome of one attempt to send a batch, as a transport classifies it. */
export interface ExportResult {
  readonly status: ExportStatus;
  /** The server's requested delay (`Retry-After`). */
  readonly retryAfterMs?: number;
  /** The HTTP status of the answer, when there was one. */
  readonly httpStatus?: number;
  /** What went wrong, for logs. */
  readonly error?: Error;
}

/** The `retry_on_failure` block, as exporters' configs spell it. */
export interface RetryConfig {
  /** Attempts after the first one; 0 disables retries. */
  readonly max_retries: number;
  readonly initial_backoff_ms: number;
  readonly max_backoff_ms: number;
  readonly multiplier: number;
  /** The longest server `Retry-After` honoured; a longer one is waited only this long. */
  readonly max_retry_after_ms: number;
}

export interface RetryOptions {
  /** Aborting stops the loop at once (during a backoff) with the last verdict. */
  readonly signal?: AbortSignal;
  /** Called before each backoff sleep: for metrics. */
  readonly onRetry?: (delayMs: number, retryNumber: number) => void;
  /** A source of uniform numbers in [0, 1); tests pass a fixed one. */
  readonly random?: () => number;
}

/** The part of a verdict the loop reads. */
interface Retryable {
  readonly verdict: string;
  readonly afterMs?: number;
}

/**
 * The sleep before retry number `retryNumber` (1-based): a uniform draw in [0, cap) where
 * cap = min(max_backoff_ms, initial_backoff_ms × multiplier^(retryNumber−1)) ("full jitter": it
 * spreads many clients' retries after a shared outage), raised to the server's delay if larger —
 * the server's delay counting at most `max_retry_after_ms`.
 */
export function backoffDelay(
  config: RetryConfig,
  retryNumber: number,
  retryAfterMs = 0,
  random: () => number = Math.random,
): number {
  const cap = Math.min(config.max_backoff_ms, config.initial_backoff_ms * config.multiplier ** (retryNumber - 1));
  const jittered = Math.floor(random() * cap);
  return Math.max(jittered, Math.min(retryAfterMs, config.max_retry_after_ms));
}

/**
 * Calls `attempt` until its verdict is not `retry`, the retries are used up, or `signal` aborts.
 * Returns the last verdict and how many attempts were made: the caller decides what a final
 * `retry` means (the helper stores the request on disk).
 */
export async function withRetry<V extends Retryable>(
  attempt: (attemptNumber: number) => Promise<V>,
  config: RetryConfig,
  options: RetryOptions = {},
): Promise<{ readonly last: V; readonly attempts: number }> {
  const random = options.random ?? Math.random;
  for (let attempts = 1; ; attempts++) {
    const last = await attempt(attempts);
    if (last.verdict !== 'retry' || attempts > config.max_retries || options.signal?.aborted) return { last, attempts };
    const delay = backoffDelay(config, attempts, last.afterMs ?? 0, random);
    options.onRetry?.(delay, attempts);
    try {
      await sleep(delay, undefined, { signal: options.signal });
    } catch {
      return { last, attempts }; // Aborted during the backoff.
    }
  }
}

/**
 * Parses a `Retry-After` header: delta-seconds or an HTTP date. Returns milliseconds, or
 * undefined when absent or unreadable (an unreadable header must not stall retries).
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/^[A-Za-z]{3},/.test(trimmed)) return undefined; // An HTTP date starts with the day name.
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Classifies an HTTP status the way every exporter here does: 2xx, retryable, or not. */
export function classifyHttpStatus(status: number): ExportStatus {
  if (status >= 200 && status < 300) return 'success';
  if (status === 408 || status === 425 || status === 429 || status === 499 || status >= 500) return 'retryable';
  return 'failure';
}
