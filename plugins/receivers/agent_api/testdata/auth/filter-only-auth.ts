// A custom auth handler that stamps `owner` only on creates and filters every other action by it:
// an update naming another owner must be refused by the server, since the handler lets it through.
// The bearer token is the user's name. Not an auth scheme to copy.

import { Auth, HTTPException } from '@langchain/langgraph-sdk/auth';

const USERS = new Set(['user-a', 'user-b']);

export const auth = new Auth()
  .authenticate(async (request) => {
    const authorization = request.headers.get('Authorization') ?? '';
    const name = authorization.toLowerCase().startsWith('bearer ') ? authorization.slice(7) : '';
    if (!USERS.has(name)) throw new HTTPException(401, { message: 'Could not validate credentials' });
    return { identity: name, permissions: ['read', 'write'] };
  })
  .on(['threads', 'assistants', 'crons'], ({ action, value, user }) => {
    if (action === 'create' || action === 'create_run') {
      const writable = value as { metadata?: Record<string, unknown> | null };
      writable.metadata ??= {};
      writable.metadata.owner = user.identity;
    }
    return { owner: user.identity };
  });
