// What an exporter's `push` answers about one attempt to send one request. The exporter decides
// (it knows its destination's statuses); the helper acts on the decision (queued_exporter.ts):
// retries, splits, dead letters, the disk queue, counting and delivery holds are the helper's.

import type { DropReason } from './metrics.ts';
import type { ExportResult } from './retry.ts';
import { TimeoutError } from './timeout.ts';

/** Why an attempt did not succeed: for the failure metric and for logs. */
export interface Failure {
  /** The HTTP status of the answer, when there was one. */
  readonly httpStatus?: number;
  readonly error?: Error;
  /** The start of the answer's body, for logs of rejections (never of retries). */
  readonly responseText?: string;
}

export type Verdict<R> =
  /** The destination accepted the request. */
  | { readonly verdict: 'sent' }
  /** A transient failure: try again after a backoff (`afterMs`: the server's Retry-After). */
  | { readonly verdict: 'retry'; readonly failure: Failure; readonly afterMs?: number }
  /**
   * The destination will never accept this request: the helper writes `deadLetters` (one record
   * per item, when it has a disk queue), counts the items as dropped (`reason`, default
   * `rejected`) and logs one error.
   */
  | {
      readonly verdict: 'reject';
      readonly failure: Failure;
      readonly reason?: DropReason;
      readonly message?: string;
      readonly deadLetters?: readonly Record<string, unknown>[];
    }
  /** The request is too large or holds a bad item: send these smaller requests instead. */
  | { readonly verdict: 'split'; readonly failure: Failure; readonly parts: readonly R[] }
  /**
   * Not sendable until an operator acts (a refused key, a wrong address): straight to the disk
   * queue without retries; a replay pass steps over it instead of stopping.
   */
  | { readonly verdict: 'park'; readonly failure: Failure };

export const sent = (): Verdict<never> => SENT;
const SENT = Object.freeze({ verdict: 'sent' as const });

export const retry = (failure: Failure, afterMs?: number): Verdict<never> => ({
  verdict: 'retry',
  failure,
  ...(afterMs !== undefined ? { afterMs } : {}),
});

export const reject = (
  failure: Failure,
  options: { reason?: DropReason; message?: string; deadLetters?: readonly Record<string, unknown>[] } = {},
): Verdict<never> => ({ verdict: 'reject', failure, ...options });

export const split = <R>(failure: Failure, parts: readonly R[]): Verdict<R> => ({ verdict: 'split', failure, parts });

export const park = (failure: Failure): Verdict<never> => ({ verdict: 'park', failure });

/**
 * The usual reading of one HTTP attempt (http_sender.ts classifies statuses): 2xx sent; network
 * errors, timeouts, 408/425/429/499/5xx retried after the server's Retry-After; the rest rejected.
 */
export function httpVerdict(result: ExportResult & Failure): Verdict<never> {
  if (result.status === 'success') return sent();
  if (result.status === 'retryable') return retry(result, result.retryAfterMs);
  return reject(result);
}

/** A short label for a failed attempt's metric: its HTTP status, `timeout` or `network`. */
export function failureLabel(failure: Failure): string {
  if (failure.httpStatus !== undefined) return String(failure.httpStatus);
  return failure.error instanceof TimeoutError ? 'timeout' : 'network';
}
