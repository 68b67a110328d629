// The trace explorer behind the agent server's authentication. Traces hold the inputs and outputs
// of every user's runs — and of whatever else sends spans to the pipeline — so the explorer is an
// operator's view, not a per-user one: with API keys it takes the same `X-Api-Key`; with a custom
// auth handler it authenticates each request through the handler's `authenticate` and lets in
// only identities granted the `traces:read` permission (403 for the others). Both configured:
// both must pass, as on the API.

import type { TraceAccessCheck, TraceAccessRefusal } from 'tracepipe/plugin';
import { ApiForbiddenError, ApiUnauthorizedError } from '../../errors.ts';
import type { ApiKeys } from '../auth/api-keys.ts';
import { AuthRefusal } from '../auth/custom.ts';
import type { CustomAuth } from '../auth/custom.ts';
import { toFetchRequest } from './request-guard.ts';

/** The permission a custom auth handler grants an identity to read traces in the explorer. */
export const TRACES_PERMISSION = 'traces:read';

/** The explorer's check for this server's auth; undefined when the server has none. */
export function explorerAccessCheck(
  apiKeys: ApiKeys,
  customAuth: CustomAuth | undefined,
): TraceAccessCheck | undefined {
  if (!apiKeys.enabled && !customAuth) return undefined;
  return async (request): Promise<TraceAccessRefusal | undefined> => {
    if (apiKeys.enabled && !apiKeys.accepts(request.headers['x-api-key'])) {
      return { statusCode: 401, code: ApiUnauthorizedError.code, message: 'Missing or invalid X-Api-Key header' };
    }
    if (!customAuth) return undefined;
    let permissions: readonly string[];
    try {
      permissions = (await customAuth.authenticate(toFetchRequest(request)))?.scopes ?? [];
    } catch (error) {
      const refusal =
        error instanceof AuthRefusal
          ? error
          : new AuthRefusal(500, `The custom auth handler failed: ${(error as Error).message}`);
      return { statusCode: refusal.statusCode, code: refusal.code, message: refusal.message, headers: refusal.headers };
    }
    if (permissions.includes(TRACES_PERMISSION)) return undefined;
    return {
      statusCode: 403,
      code: ApiForbiddenError.code,
      message: `Reading traces needs the "${TRACES_PERMISSION}" permission from the custom auth handler`,
    };
  };
}
