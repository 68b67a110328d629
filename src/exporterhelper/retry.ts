// The retry loop every exporter uses: exponential backoff with full jitter, the server's
// `Retry-After` as a floor, no retry of permanent failures, and no attempt that would start after
// the caller's deadline. Transports report each attempt as an `ExportResult` (as in OTel JS
// `export-response.ts`) instead of throwing, so that the loop never has to guess from messages.

import { setTimeout as sleep } from 'node:timers/promises';

export type ExportStatus = 'success' | 'failure' | 'retryable';

/** The outcome of one attempt to send a batch. */
export interface ExportResult {
  readonly status: ExportStatus;
  /** The server's requested delay (`Retry-After`), used as a floor for the next backoff. */
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
}

export interface RetryOptions {
  /** Epoch ms; no attempt is started when its backoff would end after this time. */
  readonly deadline?: number;
  /** Aborting stops the loop at once (during a backoff) with the last result. */
  readonly signal?: AbortSignal;
  /** Called before each backoff sleep: for metrics. */
  readonly onRetry?: (result: ExportResult, delayMs: number, retryNumber: number) => void;
  /** A source of uniform numbers in [0, 1); tests pass a fixed one. */
  readonly random?: () => number;
}

export interface RetryOutcome extends ExportResult {
  /** How many attempts were made (1 when the first one settled it). */
  readonly attempts: number;
}

/**
 * The sleep before retry number `retryNumber` (1-based): a uniform draw in [0, cap) where
 * cap = min(max_backoff_ms, initial_backoff_ms × multiplier^(retryNumber−1)) ("full jitter": it
 * spreads many clients' retries after a shared outage), raised to the server's delay if larger.
 */
export function backoffDelay(
  config: RetryConfig,
  retryNumber: number,
  retryAfterMs = 0,
  random: () => number = Math.random,
): number {
  const cap = Math.min(config.max_backoff_ms, config.initial_backoff_ms * config.multiplier ** (retryNumber - 1));
  const jittered = Math.floor(random() * cap);
  return Math.max(jittered, retryAfterMs);
}

/**
 * Calls `attempt` until it succeeds, fails permanently, the retries are used up, the next attempt
 * would start after the deadline, or `signal` aborts. Returns the last attempt's result: the caller
 * decides what a final `retryable` means (the backend exporter persists the batch).
 */
export async function withRetry<R extends ExportResult = ExportResult>(
  attempt: (attemptNumber: number) => Promise<R>,
  config: RetryConfig,
  options: RetryOptions = {},
): Promise<R & RetryOutcome> {
  const random = options.random ?? Math.random;
  for (let attempts = 1; ; attempts++) {
    const result = await attempt(attempts);
    if (result.status !== 'retryable') return { ...result, attempts };
    if (attempts > config.max_retries || options.signal?.aborted) return { ...result, attempts };
    const delay = backoffDelay(config, attempts, result.retryAfterMs ?? 0, random);
    if (options.deadline !== undefined && Date.now() + delay >= options.deadline) return { ...result, attempts };
    options.onRetry?.(result, delay, attempts);
    try {
      await sleep(delay, undefined, { signal: options.signal });
    } catch {
      return { ...result, attempts }; // Aborted during the backoff.
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
