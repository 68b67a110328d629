// A custom auth handler that breaks the rules on purpose, for the tests of how the server treats
// each kind of answer: the user comes from `x-user`; some users make authenticate() throw or
// return nonsense; some handlers refuse (`false`), return an unusable filter or a non-filter.

import { Auth, HTTPException } from '@langchain/langgraph-sdk/auth';

export default new Auth()
  .authenticate((request) => {
    const user = request.headers.get('x-user');
    if (user === 'crash') throw new Error('database down');
    if (user === 'teapot') throw new HTTPException(418, { message: 'I am a teapot', headers: { 'x-why': 'tea' } });
    if (user === 'nobody') return {} as never;
    if (!user) throw new HTTPException(401);
    return user;
  })
  .on('threads:search', () => false)
  .on('assistants:search', () => ({ owner: { $regex: 'x' } }) as never)
  .on('assistants:read', ({ user }) => ({ tags: { $contains: user.identity } }))
  .on('store:get', () => 'yes' as never);
