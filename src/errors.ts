// Coded errors: an error with a stable code (the wire value clients and scripts match on), an HTTP
// status and a message formatted from a template. The framework's own codes are registered here;
// a plugin defines its own with `createCodedError` (exported from `tracepipe/plugin`), as Fastify
// plugins do with @fastify/error, so the framework names no plugin's errors. Every code, core or
// plugin, is documented in docs/errors.md; a test fails when a code is undocumented or a documented
// code no longer exists.

/** An error with a stable code, an HTTP status and a formatted message; the base of every coded error. */
export class CodedError<Code extends string = string> extends Error {
  override readonly name: string = 'CodedError';
  constructor(
    readonly code: Code,
    readonly statusCode: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The constructor `createCodedError` returns; its code and status are readable without an instance. */
export interface CodedErrorConstructor<Code extends string> {
  /** `args` fill the message template's `%s` placeholders in order. */
  new (args?: readonly (string | number)[], options?: ErrorOptions): CodedError<Code>;
  readonly code: Code;
  readonly statusCode: number;
}

/** Fills a message template's `%s` placeholders with `args`, in order (a missing one reads as ''). */
function formatMessage(template: string, args: readonly (string | number)[]): string {
  let index = 0;
  return template.replace(/%s/g, () => String(args[index++] ?? ''));
}

/**
 * Defines one coded error: `const NotFound = createCodedError('TP_ERR_MY_NOT_FOUND', 'no such %s', 404)`,
 * then `throw new NotFound(['thing'])` and `error instanceof NotFound`. Codes are wire values: once
 * clients see one, keep it.
 */
export function createCodedError<const Code extends string>(
  code: Code,
  message: string,
  statusCode = 500,
): CodedErrorConstructor<Code> {
  return class extends CodedError<Code> {
    static readonly code = code;
    static readonly statusCode = statusCode;
    constructor(args: readonly (string | number)[] = [], options?: ErrorOptions) {
      super(code, statusCode, formatMessage(message, args), options);
    }
  };
}

const CODES = {
  TP_ERR_CONFIG_READ: { status: 500, message: 'cannot read config file %s: %s' },
  TP_ERR_CONFIG_PARSE: { status: 400, message: '%s' },
  TP_ERR_CONFIG_INVALID: { status: 400, message: 'invalid configuration:\n%s' },
  TP_ERR_PLUGIN_LOAD: { status: 500, message: 'cannot load plugin %s: %s' },
  TP_ERR_PLUGIN_INVALID: { status: 500, message: 'plugin %s does not export a component factory: %s' },
  TP_ERR_REGISTRY_DUPLICATE: { status: 500, message: 'component %s/%s is registered twice' },
  TP_ERR_REGISTRY_INVALID: { status: 500, message: 'invalid component factory %s: %s' },
  TP_ERR_START: { status: 500, message: 'component %s failed to start: %s' },
  // Sent by the Host guard every HTTP server shares (src/http/host-guard.ts).
  TP_ERR_API_HOST_NOT_ALLOWED: { status: 403, message: '%s' },
} as const satisfies Record<string, { status: number; message: string }>;

/** A code of the framework itself (plugins' codes are theirs, see `createCodedError`). */
export type ErrorCode = keyof typeof CODES;
export const ERROR_CODES = Object.keys(CODES) as ErrorCode[];

/** A coded error of the framework itself: configuration, plugin loading, registry, start-up. */
export class TracepipeError extends CodedError<ErrorCode> {
  override readonly name = 'TracepipeError';
  constructor(code: ErrorCode, args: readonly (string | number)[] = [], options?: ErrorOptions) {
    super(code, CODES[code].status, formatMessage(CODES[code].message, args), options);
  }
}
