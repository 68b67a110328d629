// Custom auth handlers, written as LangGraph.js deployments write them: a module exporting an
// `Auth` from `@langchain/langgraph-sdk/auth`, named by `langgraph.json`'s `"auth": {"path":
// "./auth.ts:auth"}` (or the receiver's `auth.path`). `authenticate(request)` turns a request into
// a user; `.on(event)` handlers authorize each operation, may change the operation's value (add
// `metadata.owner` on create) and may return a filter that narrows what the user sees.
//
// The server never imports the SDK at run time: the `Auth` object is recognised by its handler
// cache, and the SDK's `HTTPException` by its `status` and `headers` (as the reference server
// does), so the handler module may bring its own copy of the SDK.

import { access } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AuthEventValueMap } from '@langchain/langgraph-sdk/auth';
import {
  ApiAuthHandlerError,
  ApiConflictError,
  ApiForbiddenError,
  ApiInvalidError,
  ApiNotFoundError,
  ApiUnauthorizedError,
} from '../../errors.ts';
import { readLanggraphJson } from '../graphs/spec.ts';
import { checkAuthFilters } from './filters.ts';
import type { AuthFilters } from './filters.ts';

/** `resource:action`, as the SDK's auth types name them (`threads:create_run`, `store:put`, ...). */
export type AuthEvent = keyof AuthEventValueMap;
export type AuthEventValue<E extends AuthEvent> = AuthEventValueMap[E];

/** The authenticated user, normalised as the reference server does. */
export interface AuthUser {
  identity: string;
  permissions: string[];
  display_name: string;
  is_authenticated: boolean;
  [key: string]: unknown;
}

/** What a request carries once authenticated: the user and its permissions (`scopes`). */
export interface AuthContext {
  readonly user: AuthUser;
  readonly scopes: string[];
}

/** Where the handler is: an absolute module path and the export holding the `Auth`. */
export interface AuthHandlerSpec {
  readonly path: string;
  readonly exportName: string;
  /** Where the spec came from, for messages (`langgraph.json`, `auth.path`). */
  readonly source: string;
}

type Callback = (parameters: Record<string, unknown>) => unknown;

interface HandlerCache {
  authenticate?: (request: Request) => unknown;
  callbacks?: Record<string, Callback>;
}

/**
 * A refusal from the handler: an `HTTPException` it threw (any status, with its message and
 * headers), `false` returned from an authorization handler (403), or a handler that broke its
 * contract (500). The HTTP layer sends `status` with a JSON error body and `headers`.
 */
export class AuthRefusal extends Error {
  override readonly name = 'AuthRefusal';
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** The coded error the response carries (see docs/errors.md). */
  get code(): string {
    const codes: Record<number, string> = {
      401: ApiUnauthorizedError.code,
      403: ApiForbiddenError.code,
      404: ApiNotFoundError.code,
      409: ApiConflictError.code,
      422: ApiInvalidError.code,
    };
    return codes[this.statusCode] ?? ApiAuthHandlerError.code;
  }
}

const DEFAULT_MESSAGES: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' };

function isHttpException(error: unknown): error is { status: number; message?: string; headers?: unknown } {
  return (
    typeof error === 'object' &&
    error !== null &&
    'status' in error &&
    'headers' in error &&
    typeof (error as { status: unknown }).status === 'number'
  );
}

function headersOf(value: unknown): Record<string, string> {
  if (!value) return {};
  try {
    return Object.fromEntries(new Headers(value as ConstructorParameters<typeof Headers>[0]).entries());
  } catch {
    return {};
  }
}

/** Turns what a handler threw into an AuthRefusal: its HTTPException as it is; anything else a 500. */
function refusalFrom(error: unknown, where: string): AuthRefusal {
  if (error instanceof AuthRefusal) return error;
  if (isHttpException(error)) {
    const status = error.status >= 400 && error.status <= 599 ? error.status : 500;
    const message =
      typeof error.message === 'string' && error.message !== ''
        ? error.message
        : (DEFAULT_MESSAGES[status] ?? 'Refused');
    return new AuthRefusal(status, message, headersOf(error.headers), { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new AuthRefusal(500, `The custom auth handler failed in ${where}: ${message}`, {}, { cause: error });
}

/** Splits `./auth.ts:auth` on its last colon; `./auth.ts` alone names the default export. */
function parseSpec(text: string, baseDir: string, source: string): AuthHandlerSpec {
  const colon = text.lastIndexOf(':');
  const hasExport = colon > 0 && !/[\\/]/.test(text.slice(colon + 1)) && colon < text.length - 1;
  const file = hasExport ? text.slice(0, colon) : text.replace(/:$/, '');
  const exportName = hasExport ? text.slice(colon + 1) : 'default';
  if (!/^[A-Za-z_$][\w$]*$/.test(exportName)) throw new Error(`${source}: "${exportName}" is not a valid export name`);
  return { path: resolve(baseDir, file), exportName, source };
}

/**
 * The handler the deployment names: the receiver's `auth.path` (relative to the config file), else
 * the `auth.path` of the `langgraph.json` the graphs come from (relative to that file). None when
 * neither names one.
 */
export function findAuthHandler(
  input: { authPath?: string; graphs?: Record<string, string>; langgraph_config?: string },
  baseDir: string,
): AuthHandlerSpec | undefined {
  if (input.authPath) return parseSpec(input.authPath, baseDir, 'auth.path');
  if (input.langgraph_config === undefined || Object.keys(input.graphs ?? {}).length > 0) return undefined;
  const file = resolve(baseDir, input.langgraph_config);
  const auth = readLanggraphJson(file).auth;
  if (auth === undefined || auth === null) return undefined;
  if (typeof auth !== 'object' || Array.isArray(auth))
    throw new Error(`${file}: "auth" must be an object such as {"path": "./auth.ts:auth"}`);
  const path = (auth as { path?: unknown }).path;
  if (path === undefined || path === null) return undefined;
  if (typeof path !== 'string' || path.trim() === '')
    throw new Error(`${file}: "auth.path" must be a string such as "./auth.ts:auth"`);
  return parseSpec(path, dirname(file), `${file} auth.path`);
}

/** The deployment's custom auth: authentication of requests and authorization of operations. */
export class CustomAuth {
  private constructor(
    private readonly handlers: HandlerCache,
    readonly spec: AuthHandlerSpec,
  ) {}

  /** Imports the handler module; throws a message naming the file when it is not an `Auth`. */
  static async load(spec: AuthHandlerSpec): Promise<CustomAuth> {
    const where = `custom auth handler ${spec.path}:${spec.exportName} (${spec.source})`;
    try {
      await access(spec.path);
    } catch (error) {
      throw new Error(`${where}: file not found`, { cause: error });
    }
    let module: Record<string, unknown>;
    try {
      module = (await import(pathToFileURL(spec.path).href)) as Record<string, unknown>;
    } catch (error) {
      throw new Error(`${where}: import failed: ${(error as Error).message}`, { cause: error });
    }
    const exported = await module[spec.exportName];
    if (exported === undefined || exported === null) {
      const available = Object.keys(module).filter((key) => key !== '__esModule');
      throw new Error(
        `${where}: the module has no export "${spec.exportName}" (exports: ${available.join(', ') || 'none'})`,
      );
    }
    const cache = (exported as { '~handlerCache'?: unknown })['~handlerCache'];
    if (typeof cache !== 'object' || cache === null) {
      throw new Error(`${where}: the export is not an Auth from @langchain/langgraph-sdk/auth`);
    }
    return new CustomAuth(cache as HandlerCache, spec);
  }

  /**
   * Runs `authenticate(request)`: a string is the identity; an object needs `identity` and may
   * have `permissions`, `display_name`, `is_authenticated` and anything else (kept on the user).
   * Undefined when the module registers no `authenticate` (then nothing is authorized either,
   * as in the reference server). Throws AuthRefusal.
   */
  async authenticate(request: Request): Promise<AuthContext | undefined> {
    const authenticate = this.handlers.authenticate;
    if (!authenticate) return undefined;
    let result: unknown;
    try {
      result = await authenticate(request);
    } catch (error) {
      throw refusalFrom(error, 'authenticate');
    }
    if (typeof result === 'string' && result !== '') {
      return { scopes: [], user: { identity: result, permissions: [], display_name: result, is_authenticated: true } };
    }
    if (
      typeof result === 'object' &&
      result !== null &&
      typeof (result as { identity?: unknown }).identity === 'string'
    ) {
      const user = result as Record<string, unknown> & { identity: string };
      const scopes = Array.isArray(user.permissions) ? user.permissions.map(String) : [];
      return {
        scopes,
        user: {
          ...user,
          identity: user.identity,
          permissions: scopes,
          is_authenticated: typeof user.is_authenticated === 'boolean' ? user.is_authenticated : true,
          display_name: typeof user.display_name === 'string' ? user.display_name : user.identity,
        },
      };
    }
    throw new AuthRefusal(
      500,
      'The custom auth handler returned neither an identity string nor an object with an `identity` string from authenticate().',
    );
  }

  /**
   * Runs the handler for `event` — the first of `resource:action`, `resource`, `*:action`, `*`
   * that is registered — with `{event, resource, action, value, user, permissions}`. The handler
   * may change `value` in place (the caller reads it back). Returns the filter to apply, or
   * undefined for none (no handler, no user, or the handler returned nothing or `true`).
   * `false` is a 403; a thrown HTTPException keeps its status; anything else is a 500.
   */
  async authorize<E extends AuthEvent>(
    context: AuthContext | undefined,
    event: E,
    value: AuthEventValue<E>,
  ): Promise<AuthFilters | undefined> {
    const [resource, action] = event.split(':') as [string, string];
    const callbacks = this.handlers.callbacks ?? {};
    const key = [event, resource, `*:${action}`, '*'].find((candidate) => typeof callbacks[candidate] === 'function');
    if (!key || !context) return undefined;
    let result: unknown;
    try {
      result = await callbacks[key]!({
        event,
        resource,
        action,
        value,
        user: context.user,
        permissions: context.scopes,
      });
    } catch (error) {
      throw refusalFrom(error, `the "${key}" handler`);
    }
    if (result === undefined || result === null || result === true) return undefined;
    if (result === false) throw new AuthRefusal(403, 'Forbidden');
    if (typeof result !== 'object' || Array.isArray(result)) {
      throw new AuthRefusal(
        500,
        `The "${key}" auth handler returned ${Array.isArray(result) ? 'an array' : typeof result}; expected a filter object, true, false, null or nothing.`,
      );
    }
    const problem = checkAuthFilters(result as Record<string, unknown>);
    if (problem) throw new AuthRefusal(500, `The "${key}" auth handler returned an unusable filter: ${problem}.`);
    return Object.keys(result).length === 0 ? undefined : (result as AuthFilters);
  }
}
