// Pipeline error classes. Errors are classified by type, never matched by message:
// a consumer rejects with PermanentError (the data is bad: do not retry), ThrottleError (the
// pipeline is full: retry after a delay), or anything else, which counts as retryable.
//
// The checks read a brand (a registered symbol) rather than the prototype chain, so that an error
// thrown by a plugin that resolved its own copy of `tracepipe/plugin` (a nested install, or the
// TypeScript sources next to the compiled framework) is classified like one of ours.

const PERMANENT = Symbol.for('tracepipe.PermanentError');
const THROTTLE = Symbol.for('tracepipe.ThrottleError');

function branded(value: unknown, brand: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/** `instanceof` as it is without an override: for subclasses, which keep the usual meaning. */
function ordinaryHasInstance(constructor: object, value: unknown): boolean {
  return Function.prototype[Symbol.hasInstance].call(constructor, value);
}

/** The data itself is unacceptable; retrying the same data cannot succeed. Receivers answer 400. */
export class PermanentError extends Error {
  override readonly name = 'PermanentError';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    Object.defineProperty(this, PERMANENT, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return this === PermanentError ? branded(value, PERMANENT) : ordinaryHasInstance(this, value);
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
    Object.defineProperty(this, THROTTLE, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return this === ThrottleError ? branded(value, THROTTLE) : ordinaryHasInstance(this, value);
  }
}

export function isPermanent(error: unknown): error is PermanentError {
  return branded(error, PERMANENT);
}

export function isThrottle(error: unknown): error is ThrottleError {
  return branded(error, THROTTLE);
}

/** The message of any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof AggregateError) {
    return [error.message, ...error.errors.map(errorMessage)].filter(Boolean).join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}
