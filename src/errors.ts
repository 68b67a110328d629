// The registry of coded start-up and API errors. Every code is documented in docs/errors.md; a
// test fails when a code is undocumented or a documented code no longer exists.

const CODES = {
  TP_ERR_CONFIG_READ: { status: 500, message: 'cannot read config file %s: %s' },
  TP_ERR_CONFIG_PARSE: { status: 400, message: '%s' },
  TP_ERR_CONFIG_INVALID: { status: 400, message: 'invalid configuration:\n%s' },
  TP_ERR_PLUGIN_LOAD: { status: 500, message: 'cannot load plugin %s: %s' },
  TP_ERR_PLUGIN_INVALID: { status: 500, message: 'plugin %s does not export a component factory: %s' },
  TP_ERR_REGISTRY_DUPLICATE: { status: 500, message: 'component %s/%s is registered twice' },
  TP_ERR_REGISTRY_INVALID: { status: 500, message: 'invalid component factory %s: %s' },
  TP_ERR_START: { status: 500, message: 'component %s failed to start: %s' },
  TP_ERR_API_INVALID: { status: 422, message: '%s' },
  TP_ERR_API_UNAUTHORIZED: { status: 401, message: '%s' },
  TP_ERR_API_FORBIDDEN: { status: 403, message: '%s' },
  TP_ERR_API_HOST_NOT_ALLOWED: { status: 403, message: '%s' },
  TP_ERR_API_CROSS_SITE: { status: 403, message: '%s' },
  TP_ERR_API_UNSUPPORTED_MEDIA_TYPE: { status: 415, message: '%s' },
  TP_ERR_API_AUTH_HANDLER: { status: 500, message: '%s' },
  TP_ERR_API_NOT_FOUND: { status: 404, message: '%s' },
  TP_ERR_API_CONFLICT: { status: 409, message: '%s' },
  TP_ERR_API_MALFORMED_JSON: { status: 400, message: 'Request body is not valid JSON' },
  TP_ERR_API_GRAPH: { status: 500, message: '%s' },
  TP_ERR_API_INTERNAL: { status: 500, message: 'Internal error: %s' },
  TP_ERR_API_UNAVAILABLE: { status: 503, message: 'The database is unavailable; retry shortly (%s)' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof CODES;
export const ERROR_CODES = Object.keys(CODES) as ErrorCode[];

/** An error with a stable code, an HTTP status and a formatted message. */
export class TracepipeError extends Error {
  override readonly name = 'TracepipeError';
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    args: readonly (string | number)[] = [],
    options?: ErrorOptions,
  ) {
    const template: string = CODES[code].message;
    let index = 0;
    super(
      template.replace(/%s/g, () => String(args[index++] ?? '')),
      options,
    );
    this.statusCode = CODES[code].status;
  }
}
