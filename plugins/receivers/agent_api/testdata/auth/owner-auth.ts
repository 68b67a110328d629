// A custom auth handler for the two-user tests: the bearer token is the user's name (`Bearer
// user-a`); threads, assistants and crons are stamped with their writer as `owner` on every create
// and update and filtered by it; store items live in namespaces that hold the user's name. The
// handler never checks what a write leaves behind: the server must hold every write to the
// filter it returned. `Bearer operator` may read the trace explorer. Not an auth scheme to copy.

import { Auth, HTTPException } from '@langchain/langgraph-sdk/auth';

const USERS = new Set(['user-a', 'user-b', 'operator']);

export const auth = new Auth()
  .authenticate(async (request) => {
    const authorization = request.headers.get('Authorization') ?? '';
    const name = authorization.toLowerCase().startsWith('bearer ') ? authorization.slice(7) : '';
    if (!USERS.has(name)) throw new HTTPException(401, { message: 'Could not validate credentials' });
    // The operator may read traces in the trace explorer; the users may not.
    return { identity: name, permissions: name === 'operator' ? ['traces:read'] : ['read', 'write'] };
  })
  .on(['threads', 'assistants', 'crons'], ({ action, value, user }) => {
    if (action === 'create' || action === 'update' || action === 'create_run') {
      const writable = value as { metadata?: Record<string, unknown> | null };
      writable.metadata ??= {};
      writable.metadata.owner = user.identity;
    }
    return { owner: user.identity };
  })
  .on('store', ({ value, user }) => {
    const namespace = (value as { namespace?: string[] | null }).namespace;
    if (namespace?.length && !namespace.includes(user.identity)) throw new HTTPException(403, { message: 'Not authorized' });
    return { namespace: { $contains: user.identity } };
  });
