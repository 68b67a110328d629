// A custom auth handler for the tests, written exactly as a LangGraph.js deployment writes one
// (it is a port of the reference server's `tests/graphs/auth.mts`), except that the bearer token
// is not a signed JWT but `<user>:<scope> <scope> ...`: the user must exist and not be disabled,
// and the token's scopes are cut down to the user's own permissions. Not an auth scheme to copy.

import { Auth, HTTPException } from '@langchain/langgraph-sdk/auth';

const USERS: Record<string, { identity: string; display_name: string; permissions: string[]; disabled: boolean }> = {
  johndoe: { identity: 'johndoe', display_name: 'John Doe', permissions: ['read', 'write', 'assistants:write', 'me'], disabled: false },
  alice: { identity: 'alice', display_name: 'Alice Chains', permissions: ['read', 'write', 'assistants:write', 'me'], disabled: false },
};

export const auth = new Auth()
  .authenticate(async (request) => {
    const authorization = request.headers.get('Authorization');
    const refused = new HTTPException(401, { message: 'Could not validate credentials', headers: { 'WWW-Authenticate': 'Bearer' } });
    if (!authorization?.toLowerCase().startsWith('bearer ')) throw refused;
    const token = authorization.slice('bearer '.length);
    const colon = token.indexOf(':');
    const name = colon === -1 ? token : token.slice(0, colon);
    const scopes = colon === -1 ? '' : token.slice(colon + 1);
    const user = USERS[name];
    if (!user || user.disabled) throw refused;
    const permissions = scopes.split(' ').filter((scope) => user.permissions.includes(scope));
    return { identity: user.identity, display_name: user.display_name, permissions };
  })
  .on('*', ({ permissions }) => {
    if (!permissions?.length) throw new HTTPException(403, { message: 'Not authorized' });
  })
  .on('assistants:create', ({ value, user, permissions }) => {
    if (!permissions?.includes('assistants:write')) throw new HTTPException(403, { message: 'Not authorized' });
    value.metadata ??= {};
    value.metadata.owner = user.identity;
  })
  .on('assistants:search', (params) => ({ owner: params.user.identity }))
  .on(['threads', 'assistants'], ({ action, value, user }) => {
    const filters = { owner: user.identity };
    if (action === 'create' || action === 'update' || action === 'create_run') {
      const writable = value as { metadata?: Record<string, unknown> | null };
      writable.metadata ??= {};
      writable.metadata.owner = user.identity;
    }
    return filters;
  })
  .on('store', ({ value, user }) => {
    const identity = user.identity;
    if (!identity) throw new HTTPException(403, { message: 'Not authorized' });
    const namespace = (value as { namespace?: string[] | null }).namespace;
    if (namespace?.length && !namespace.includes(identity)) throw new HTTPException(403, { message: 'Not authorized' });
    return { namespace: { $contains: identity } };
  })
  .on('threads:create', ({ value, user, permissions }) => {
    if (!['me', 'threads:write', 'threads:*'].some((p) => permissions?.includes(p))) throw new HTTPException(403, { message: 'Not authorized' });
    value.metadata ??= {};
    value.metadata.owner = user.identity;
    return { owner: user.identity };
  });
