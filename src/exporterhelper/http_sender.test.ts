import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { HttpSender } from './http_sender.ts';
import { TimeoutError } from './timeout.ts';

interface Received {
  readonly method?: string;
  readonly url?: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

describe('HttpSender', () => {
  let server: Server;
  let base: string;
  let received: Received[];
  let closed: number;
  let answer: (res: ServerResponse) => void;

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
        answer(res);
      });
    });
    server.on('connection', (socket) => socket.on('close', () => closed++));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    received = [];
    closed = 0;
    answer = (res) => res.writeHead(202).end('{"ok":true}');
  });

  it('posts the body with its headers to the path and query of the URL, and reads a 2xx as success', async () => {
    const sender = new HttpSender(`${base}/runs/multipart?tenant=a`, 2);
    try {
      const body = Buffer.from('hello');
      const result = await sender.post(body, { 'content-type': 'text/plain', 'x-api-key': 'k' }, 5000);
      assert.deepEqual(result, { status: 'success', httpStatus: 202 });
      assert.equal(received.length, 1);
      const [request] = received;
      assert.equal(request!.method, 'POST');
      assert.equal(request!.url, '/runs/multipart?tenant=a');
      assert.equal(request!.headers['content-type'], 'text/plain');
      assert.equal(request!.headers['x-api-key'], 'k');
      assert.equal(request!.headers['content-length'], '5');
      assert.deepEqual(request!.body, body);
      // Kept alive: a second upload reuses the connection.
      await sender.post(body, {}, 5000);
      assert.equal(received.length, 2);
      assert.equal(closed, 0);
    } finally {
      sender.close();
    }
  });

  it('sends the credentials of the URL as basic authentication', async () => {
    const sender = new HttpSender(`${base.replace('http://', 'http://us%20er:p%40ss@')}/x`, 1);
    try {
      await sender.post(Buffer.from('x'), {}, 5000);
      assert.equal(received[0]!.headers.authorization, `Basic ${Buffer.from('us er:p@ss').toString('base64')}`);
    } finally {
      sender.close();
    }
  });

  it('reads 503 as retryable with the Retry-After delay and the start of the answer', async () => {
    answer = (res) => res.writeHead(503, { 'retry-after': '3' }).end('x'.repeat(5000));
    const sender = new HttpSender(`${base}/x`, 1);
    try {
      const result = await sender.post(Buffer.from('x'), {}, 5000);
      assert.equal(result.status, 'retryable');
      assert.equal(result.httpStatus, 503);
      assert.equal(result.retryAfterMs, 3000);
      assert.equal(result.responseText, 'x'.repeat(1024));
      assert.equal((result.error as Error).message, 'HTTP 503');
    } finally {
      sender.close();
    }
  });

  it('gives up on an answer that does not come in time with a TimeoutError, and frees the socket', async () => {
    answer = () => undefined; // never answered
    const sender = new HttpSender(`${base}/x`, 1);
    try {
      const result = await sender.post(Buffer.from('x'), {}, 50);
      assert.equal(result.status, 'retryable');
      assert.ok(result.error instanceof TimeoutError);
      assert.equal((result.error as TimeoutError).timeoutMs, 50);
      await waitFor(() => closed === 1);
    } finally {
      sender.close();
    }
  });

  it('times out an answer whose body does not end in time', async () => {
    answer = (res) => res.writeHead(200, { 'content-length': '10' }).write('12345');
    const sender = new HttpSender(`${base}/x`, 1);
    try {
      const result = await sender.post(Buffer.from('x'), {}, 100);
      assert.equal(result.status, 'retryable');
      assert.ok(result.error instanceof TimeoutError);
      await waitFor(() => closed === 1);
    } finally {
      sender.close();
    }
  });

  it("ends the attempt when the caller's signal aborts, with its reason", async () => {
    answer = () => undefined;
    const sender = new HttpSender(`${base}/x`, 1);
    try {
      const stop = new AbortController();
      const reason = new Error('shutting down');
      const pending = sender.post(Buffer.from('x'), {}, 60_000, stop.signal);
      await waitFor(() => received.length === 1);
      stop.abort(reason);
      const result = await pending;
      assert.equal(result.status, 'retryable');
      assert.equal(result.error, reason);
      await waitFor(() => closed === 1);
      // Already aborted: nothing is sent.
      const again = await sender.post(Buffer.from('x'), {}, 60_000, stop.signal);
      assert.equal(again.error, reason);
      assert.equal(received.length, 1);
    } finally {
      sender.close();
    }
  });

  it('reports a refused connection as retryable', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const sender = new HttpSender(`http://127.0.0.1:${port}/x`, 1);
    try {
      const result = await sender.post(Buffer.from('x'), {}, 5000);
      assert.equal(result.status, 'retryable');
      assert.equal((result.error as NodeJS.ErrnoException).code, 'ECONNREFUSED');
    } finally {
      sender.close();
    }
  });
});

async function waitFor(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !predicate(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(predicate(), 'condition not reached in 2 s');
}
