// Route validators that compile on a route's first request instead of when the server starts.
//
// Fastify compiles every route's JSON schemas with ajv before it listens. The agent API alone has
// well over a hundred routes, most of which a given deployment calls rarely or never, and that
// compilation was the largest single cost of its start after module loading (ajv under
// `compileSchemasForValidation` in a `--cpu-prof` profile of a cold start). Compiled on first use,
// a route's validator costs the same once, and only for the routes that are called.
//
// Query strings, path parameters and headers are text, so their validators convert (`?limit=10`
// is the number 10): Fastify's default ajv options, `coerceTypes: 'array'`. A JSON body already
// carries its types, and is validated as sent: its validators are built without `coerceTypes`, so
// `{"tags": "x"}` where an array is expected, or `{"limit": "10"}` where a number is, is refused
// (a 422 naming the field) instead of being stored as `["x"]` or 10. Defaults and the removal of
// unknown keys (`useDefaults`, `removeAdditional`) are the same for both.

import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';

type ValidatorFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']
>;
type ValidatorCompiler = ReturnType<ValidatorFactory>;
type Validator = ReturnType<ValidatorCompiler>;

/** What Fastify asks a validator compiler for: a route's schema of one part of the request. */
type Route = Parameters<FastifySchemaCompiler<unknown>>[0];
type RouteCompiler = (route: Route) => Validator;

/**
 * Fastify's own validator factory (`@fastify/ajv-compiler`, with the server's ajv options), each
 * route's validator compiled when it first validates; a body's with `coerceTypes: false`. A
 * schema ajv rejects then fails that route's requests (500) rather than the start.
 */
export function lazyValidatorFactory(): ValidatorFactory {
  // The casts are sound: `@fastify/ajv-compiler` builds exactly the factory Fastify calls, but its
  // published types declare it apart from Fastify's `buildValidator` type, and the wrapper below
  // returns functions of the shapes Fastify's own types name.
  const buildFromPool = AjvCompiler() as unknown as (...args: unknown[]) => RouteCompiler;
  return ((externalSchemas: unknown, options: AjvServerOptions | undefined) => {
    const textCompiler = buildFromPool(externalSchemas, options);
    // A second ajv instance (the pool keys instances by their options), made on a body's first use.
    let bodyCompiler: RouteCompiler | undefined;
    const bodyCompilerOf = () =>
      (bodyCompiler ??= buildFromPool(externalSchemas, {
        ...options,
        customOptions: { ...options?.customOptions, coerceTypes: false },
      }));
    return ((route: Route) =>
      compiledOnFirstUse(() =>
        (route.httpPart === 'body' ? bodyCompilerOf() : textCompiler)(route),
      )) as ValidatorCompiler;
  }) as unknown as ValidatorFactory;
}

/** What Fastify passes a validator factory besides the shared schemas: its `ajv` server option. */
interface AjvServerOptions {
  readonly customOptions?: Record<string, unknown>;
  readonly plugins?: unknown[];
}

/**
 * A validator that compiles itself on its first call. Fastify reads `errors` after a failed
 * validation and `schemaEnv` (ajv's, to pass the parent object so that defaults and coercions
 * reach the root value) before calling it: both are the compiled function's.
 */
function compiledOnFirstUse(compile: () => Validator): Validator {
  let compiled: Validator | undefined;
  const validator = () => (compiled ??= compile());
  const lazy = (data: unknown, context?: unknown) =>
    (validator() as (data: unknown, context?: unknown) => unknown)(data, context);
  Object.defineProperties(lazy, {
    errors: { get: () => (validator() as { errors?: unknown }).errors },
    schemaEnv: { get: () => (validator() as { schemaEnv?: unknown }).schemaEnv },
  });
  // A function with the validator's properties: what Fastify's `Validator` type describes.
  return lazy as unknown as Validator;
}
