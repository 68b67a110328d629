import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { nopHost } from '../pipeline/testing.ts';
import { runGroup } from '../testkit/processes.ts';
import { createHttpServer } from './server.ts';

const LIMIT = 1024 * 1024;

// The client sends a body over the limit with Node's fetch (the LangGraph SDK's transport) from
// another process, as clients do: in this process the two sides would take turns on one event
// loop, and the race below could not happen.
const CLIENT = `
const [url, bytes, attempts] = process.argv.slice(1);
const body = 'x'.repeat(Number(bytes));
const outcomes = [];
for (let i = 0; i < Number(attempts); i++) {
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
    outcomes.push(String(response.status));
    await response.arrayBuffer();
  } catch (error) {
    outcomes.push(error.cause?.code ?? error.message);
  }
}
console.log(JSON.stringify(outcomes));
`;

describe('a body over the limit', () => {
  let app: FastifyInstance;
  let url: string;

  before(async () => {
    app = createHttpServer({ logger: pino({ level: 'silent' }), host: nopHost(), bodyLimit: LIMIT });
    app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    app.post('/items', async () => ({ ok: true }));
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => app.close());

  // If the server closed with the rest of the body unread, the kernel answered the unread bytes
  // with a reset, which could reach the client before the 413 did: fetch failed with EPIPE.
  it('reaches a client still sending it as a 413, every time', async () => {
    const { code, stdout, stderr } = await runGroup(
      process.execPath,
      ['--input-type=module', '-e', CLIENT, `${url}/items`, String(11 * LIMIT), '10'],
      { timeoutMs: 60_000 },
    );
    assert.equal(code, 0, stderr);
    assert.deepEqual(JSON.parse(stdout), Array(10).fill('413'));
  });
});
