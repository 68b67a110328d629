// Every answer of the OTLP receiver leaves its connection clean for the next request: a client
// that keeps connections alive (as OTel exporters do; here Node's fetch, which is undici) sends
// every kind of bad request one after another over one connection, each followed by a good one,
// and each gets its answer; and none of them keeps memory reserved afterwards. A request that never answers fails the test by its (generous) bound,
// which is there so that a hang is reported rather than stalling the suite; nothing is timed.

import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { startReceiver } from './testing/test-server.ts';
import type { RunningReceiver } from './testing/test-server.ts';

/** Long enough for any machine to answer; a request still unanswered after it is a hang. */
const HANG_BOUND_MS = 60_000;

const VALID_JSON = JSON.stringify({
  resourceSpans: [
    {
      resource: { attributes: [] },
      scopeSpans: [
        {
          spans: [
            {
              traceId: '5b8efff798038103d269b633813fc60c',
              spanId: 'eee19b7ec3c1b174',
              name: 'ok',
              startTimeUnixNano: '1700000000000000000',
              endTimeUnixNano: '1700000001000000000',
            },
          ],
        },
      ],
    },
  ],
});

interface BadRequest {
  name: string;
  headers: Record<string, string>;
  body: Uint8Array | string;
  status: number;
}

const BAD_REQUESTS: BadRequest[] = [
  {
    name: 'JSON with a null resourceSpans entry',
    headers: { 'content-type': 'application/json' },
    body: '{"resourceSpans":[null]}',
    status: 400,
  },
  {
    name: 'JSON that does not parse',
    headers: { 'content-type': 'application/json' },
    body: '{"resourceSpans":[',
    status: 400,
  },
  {
    name: 'gzip header, body not gzip',
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
    body: Buffer.from('this is not gzip at all, and quite long enough to be read in more than one go'.repeat(2000)),
    status: 400,
  },
  {
    name: 'octet-stream with gzip, body not gzip',
    headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' },
    body: Buffer.from('not gzip'.repeat(5000)),
    status: 415,
  },
  {
    name: 'protobuf with content-encoding br',
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'br' },
    body: Buffer.alloc(100_000, 7),
    status: 415,
  },
  {
    name: 'truncated gzip',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(VALID_JSON).subarray(0, 20),
    status: 400,
  },
  { name: 'no content type', headers: {}, body: Buffer.alloc(50_000, 1), status: 415 },
  { name: 'text/plain', headers: { 'content-type': 'text/plain' }, body: 'hello', status: 415 },
  {
    name: 'protobuf that does not decode',
    headers: { 'content-type': 'application/x-protobuf' },
    body: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]),
    status: 400,
  },
  {
    name: 'body over the limit, without content-length',
    headers: { 'content-type': 'application/json' },
    body: Buffer.alloc(300_000, 0x20),
    status: 413,
  },
  {
    name: 'gzip body that decompresses over the limit',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(Buffer.alloc(5_000_000, 0x20)),
    status: 413,
  },
];

describe('otlp receiver: bad requests on a kept-alive connection', () => {
  let running: RunningReceiver;
  const connections = new Set<Socket>();
  before(async () => {
    running = await startReceiver({ max_body_bytes: 200_000, api_key: 'test-key' });
    const server = (running.receiver as unknown as { app: { server: import('node:http').Server } }).app.server;
    server.on('connection', (socket: Socket) => connections.add(socket));
  });
  after(() => running.close());

  async function post(headers: Record<string, string>, body: Uint8Array | string) {
    const response = await fetch(running.tracesUrl, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(HANG_BOUND_MS),
    });
    return { status: response.status, text: await response.text(), connection: response.headers.get('connection') };
  }

  it('answers each bad request and then the next good one', async () => {
    assert.equal((await post({ 'content-type': 'application/json' }, VALID_JSON)).status, 200);
    for (const bad of BAD_REQUESTS) {
      const answer = await post(bad.headers, bad.body).catch((error: Error) => {
        throw new Error(`${bad.name}: no answer (${error.message})`);
      });
      assert.equal(answer.status, bad.status, `${bad.name}: ${answer.text}`);
      const next = await post({ 'content-type': 'application/json' }, VALID_JSON).catch((error: Error) => {
        throw new Error(`the request after "${bad.name}": no answer (${error.message})`);
      });
      assert.equal(next.status, 200, `after ${bad.name}: ${next.text}`);
    }
    // No error path kept its room in the memory bound: what requests hold is back to nothing.
    const metrics = await (
      await fetch(`${running.origin}/metrics`, { signal: AbortSignal.timeout(HANG_BOUND_MS) })
    ).text();
    assert.match(metrics, /^tracepipe_receiver_held_bytes\{[^}]*where="memory"[^}]*\} 0$/m);
    // The connection was reused, except where the server closed it on purpose (a body too large to drain).
    assert.ok(
      connections.size < BAD_REQUESTS.length,
      `${connections.size} connections for ${BAD_REQUESTS.length * 2 + 1} requests`,
    );
  });
});
