// The one error type of OTLP decoding: the request body is malformed. Receivers answer it with
// 400; the message starts with the path of the offending field so that a client can find it.

export class OtlpDecodeError extends Error {
  override readonly name = 'OtlpDecodeError';
  /** Path segments from the request root to the offending field, outermost first. */
  readonly path: string[];
  readonly reason: string;

  constructor(reason: string, path: readonly string[] = []) {
    super(reason);
    this.reason = reason;
    this.path = [...path];
    this.message = formatMessage(this.path, reason);
  }

  /** Prepends an enclosing field's segment (callers add segments while the error unwinds). */
  within(segment: string): this {
    this.path.unshift(segment);
    this.message = formatMessage(this.path, this.reason);
    return this;
  }
}

function formatMessage(path: readonly string[], reason: string): string {
  if (path.length === 0) return reason;
  let text = '';
  for (const segment of path) text += segment.startsWith('[') || text === '' ? segment : `.${segment}`;
  return `${text}: ${reason}`;
}

/** Adds `segment` to an OtlpDecodeError's path; rethrows anything else unchanged. */
export function rethrowWithin(error: unknown, segment: string): never {
  if (error instanceof OtlpDecodeError) throw error.within(segment);
  throw error;
}
