// A custom auth handler for the cron, MCP and A2A tests: the bearer token is the user's name
// (`Bearer alice`); threads, assistants and crons are stamped with their creator as `owner` and
// filtered by it. Not an auth scheme to copy.

import { Auth, HTTPException } from '@langchain/langgraph-sdk/auth';

const USERS = new Set(['alice', 'bob']);

export const auth = new Auth()
  .authenticate(async (request) => {
    const authorization = request.headers.get('Authorization') ?? '';
    const name = authorization.toLowerCase().startsWith('bearer ') ? authorization.slice(7) : '';
    if (!USERS.has(name)) throw new HTTPException(401, { message: 'Could not validate credentials' });
    return { identity: name, permissions: ['read', 'write'] };
  })
  .on(['threads', 'assistants', 'crons'], ({ action, value, user }) => {
    if (action === 'create' || action === 'update' || action === 'create_run') {
      const writable = value as { metadata?: Record<string, unknown> | null };
      writable.metadata ??= {};
      writable.metadata.owner = user.identity;
    }
    return { owner: user.identity };
  });
