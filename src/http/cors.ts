// The `cors` block that every HTTP receiver spells the same way, with the OpenTelemetry Collector's
// keys (confighttp's `cors`: `allowed_origins`, `allowed_headers`, `max_age`), and the one place
// that applies it to a server with @fastify/cors. No origins, no CORS: a server that names none
// never sends a CORS header, so browsers keep other sites from reading or calling it.

import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { ConfigOf } from '../config/config-of.ts';

/** The `cors` block of a receiver's schema; `maxAge` is the receiver's default `max_age`. */
export function corsSchema(defaults: { maxAge: number; description: string }) {
  return {
    type: 'object',
    additionalProperties: false,
    default: {},
    description: defaults.description,
    // The spellings the two HTTP receivers used before they shared this block.
    'x-removed-keys': {
      allow_origins: 'renamed to allowed_origins',
      enabled: 'removed: CORS is on exactly when allowed_origins names an origin',
      max_age_s: 'renamed to max_age, in seconds',
    },
    properties: {
      allowed_origins: {
        type: ['array', 'string'],
        items: { type: 'string', minLength: 1 },
        default: [],
        description:
          'Origins (`https://app.example.com`) whose pages may call this server: a list, or one comma-separated string (as an environment variable gives it). Empty (the default): no CORS headers at all. `*` allows any site — avoid it on a server holding data.',
      },
      allowed_headers: {
        type: ['array', 'string'],
        items: { type: 'string', minLength: 1 },
        default: [],
        description:
          "Request headers browsers may send besides the ones the receiver needs itself (a list or a comma-separated string); `*` allows any. As in the Collector's `cors.allowed_headers`.",
      },
      max_age: {
        type: 'integer',
        minimum: 0,
        default: defaults.maxAge,
        description: 'How long browsers may cache a preflight answer, in seconds.',
      },
    },
  } as const;
}

export type CorsConfig = ConfigOf<ReturnType<typeof corsSchema>>;

/** What a receiver adds to its users' `cors` block: what its routes need. */
export interface CorsRequirements {
  /** The methods its routes answer. */
  readonly methods: readonly string[];
  /**
   * The request headers its clients send; `undefined` accepts whatever a preflight asks for (for
   * an API whose clients add their own headers, such as the LangGraph SDK's `defaultHeaders`).
   */
  readonly headers?: readonly string[];
  /** Response headers browser clients may read. */
  readonly exposedHeaders?: readonly string[];
}

/** A list key given as a list or as one comma-separated string (an environment variable). */
export function splitList(value: string | readonly string[]): string[] {
  const items = typeof value === 'string' ? value.split(',') : value;
  return items.map((item) => item.trim()).filter((item) => item !== '');
}

/** Whether a request's `Origin` may call the server under a `cors` block. */
export type OriginCheck = (origin: string | undefined) => boolean;

/** The configured origins, trailing slashes removed (`*` kept). */
function originsOf(config: CorsConfig): string[] {
  return splitList(config.allowed_origins).map((origin) => (origin === '*' ? origin : origin.replace(/\/+$/, '')));
}

/** Whether a `cors` block enables CORS at all (it names at least one origin). */
export function corsEnabled(config: CorsConfig): boolean {
  return originsOf(config).length > 0;
}

/**
 * Registers @fastify/cors on `app` for the configured origins (nothing when there are none) and
 * returns the check of a request's origin against them, for guards that need it too.
 */
export async function registerCors(
  app: FastifyInstance,
  config: CorsConfig,
  requirements: CorsRequirements,
): Promise<OriginCheck> {
  const origins = originsOf(config);
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  const check: OriginCheck = (origin) => origin !== undefined && (anyOrigin || allowed.has(origin));
  if (origins.length === 0) return check;
  const extraHeaders = splitList(config.allowed_headers);
  const allowedHeaders =
    requirements.headers === undefined || extraHeaders.includes('*')
      ? undefined // reflect what the preflight asks for
      : [...requirements.headers, ...extraHeaders];
  await app.register(cors, {
    origin: anyOrigin ? '*' : origins,
    methods: [...requirements.methods],
    ...(allowedHeaders ? { allowedHeaders } : {}),
    ...(requirements.exposedHeaders ? { exposedHeaders: [...requirements.exposedHeaders] } : {}),
    maxAge: config.max_age,
  });
  return check;
}
