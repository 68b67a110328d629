// Pipeline error classes. Errors are classified by type, never matched by message:
// a consumer rejects with PermanentError (the data is bad: do not retry), ThrottleError (the
// pipeline is full: retry after a delay), or anything else, which counts as retryable.

/** The data itself is unacceptable; retrying the same data cannot succeed. Receivers answer 400. */
export class PermanentError extends Error {
  override readonly name = 'PermanentError';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * The pipeline cannot take more data right now (a bounded buffer is full). Receivers answer 429 or
 * 503 with `Retry-After`, so that clients back off instead of the process growing without bound.
 */
export class ThrottleError extends Error {
  override readonly name = 'ThrottleError';
  constructor(
    message: string,
    /** How long the client should wait before retrying. */
    readonly retryAfterMs: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export function isPermanent(error: unknown): error is PermanentError {
  return error instanceof PermanentError;
}

export function isThrottle(error: unknown): error is ThrottleError {
  return error instanceof ThrottleError;
}

/** The message of any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof AggregateError) {
    return [error.message, ...error.errors.map(errorMessage)].filter(Boolean).join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}
