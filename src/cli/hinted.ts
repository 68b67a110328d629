// A hint carried by an error up to the command line, which prints it under the one-line reason.

const HINT = Symbol.for('tracepipe.cli.hint');

/** Attaches `hint` to `error` (when both exist) and returns the error. */
export function withHint<E>(error: E, hint: string | undefined): E {
  if (hint && typeof error === 'object' && error !== null) Object.defineProperty(error, HINT, { value: hint });
  return error;
}

/** The hint attached with `withHint`, if any. */
export function hintOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as Record<symbol, string | undefined>)[HINT] : undefined;
}
