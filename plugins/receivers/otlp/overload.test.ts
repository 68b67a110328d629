// Under overload the receiver answers the request it admitted without reading the bodies it
// refused when they are large: an answer sent before a body of more than 256 KiB has arrived closes
// the connection, so the server stops reading that body. A small body keeps its connection, the
// 429 included. Raw sockets on both sides, so that what is asserted is what went over the wire:
// who was answered what, which connections the server closed, and how many bytes it read of each.
// Nothing is timed.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { encodeTraceRequestProtobuf } from 'tracepipe/otlp';
import { eventually, makeBatch, plainSpan } from 'tracepipe/testing';
import { startReceiver } from './testing/test-server.ts';
import type { RunningReceiver } from './testing/test-server.ts';

/** Above the 256 KiB a server reads and discards to keep a connection. */
const LARGE_BODY_BYTES = 300 * 1024;

const validBody = Buffer.from(
  encodeTraceRequestProtobuf(
    makeBatch([
      plainSpan({
        traceId: '5b8efff798038103d269b633813fc60c',
        spanId: 'eee19b7ec3c1b174',
        name: 'admitted',
        startTimeUnixNano: 1_700_000_000_000_000_000n,
        endTimeUnixNano: 1_700_000_001_000_000_000n,
      }),
    ]),
  ),
);

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** One client connection, written byte by byte as the test says and read one response at a time. */
class RawConnection {
  private received = Buffer.alloc(0);
  private ended = false;
  private wake: () => void = () => {};
  /** Resolves once the server has closed the connection. */
  readonly closed: Promise<void>;
  /** The client's port: the server's name for the connection (gone from the socket once closed). */
  readonly localPort: number;

  private constructor(readonly socket: Socket) {
    this.localPort = socket.localPort!;
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.wake();
    });
    // A reset (the server closing while this side still writes) ends the connection as well.
    socket.on('error', () => {});
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.ended = true;
        this.wake();
        resolve();
      }),
    );
  }

  static open(port: number, opened: RawConnection[]): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        const connection = new RawConnection(socket);
        opened.push(connection);
        resolve(connection);
      });
      socket.once('error', reject);
    });
  }

  write(...parts: (string | Buffer)[]): void {
    this.socket.write(Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part))));
  }

  /** The next response on the connection (headers and a Content-Length body). */
  async response(): Promise<RawResponse> {
    for (;;) {
      const parsed = this.parse();
      if (parsed) return parsed;
      if (this.ended) throw new Error(`the connection closed before a whole response: ${this.received.toString()}`);
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private parse(): RawResponse | undefined {
    const headEnd = this.received.indexOf('\r\n\r\n');
    if (headEnd < 0) return undefined;
    const [statusLine, ...lines] = this.received.subarray(0, headEnd).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    const length = Number(headers['content-length'] ?? 0);
    const end = headEnd + 4 + length;
    if (this.received.length < end) return undefined;
    const body = this.received.subarray(headEnd + 4, end).toString();
    this.received = this.received.subarray(end);
    return { status: Number(statusLine!.split(' ')[1]), headers, body };
  }
}

describe('otlp receiver: large refused bodies are not read under overload', () => {
  let running: RunningReceiver;
  let path: string;
  let port: number;
  /** Bytes the server read from each connection it has closed, by the client's port. */
  const serverBytesRead = new Map<number, number>();

  before(async () => {
    // An empty receiver admits any request; once one is admitted, the bound is full.
    running = await startReceiver({ memory_limit_bytes: 1 });
    path = new URL(running.tracesUrl).pathname;
    port = Number(new URL(running.tracesUrl).port);
    const server = (running.receiver as unknown as { app: { server: Server } }).app.server;
    server.on('connection', (socket: Socket) => {
      const clientPort = socket.remotePort!;
      socket.once('close', () => serverBytesRead.set(clientPort, socket.bytesRead));
    });
  });
  /** Every client connection, closed after each test whatever its outcome. */
  const opened: RawConnection[] = [];
  afterEach(() => {
    for (const connection of opened.splice(0)) connection.socket.destroy();
  });
  after(() => running.close());

  const head = (length: number, contentType = 'application/x-protobuf') =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nX-API-Key: key-1\r\nContent-Length: ${length}\r\n\r\n`;

  /** Resolves once the receiver refuses a small request: the admitted one holds the bound. */
  async function boundIsFull(): Promise<void> {
    await eventually(async () => {
      const probe = await RawConnection.open(port, opened);
      try {
        probe.write(head(1), 'x');
        assert.equal((await probe.response()).status, 429);
      } finally {
        probe.socket.destroy();
      }
    });
  }

  it('answers the admitted request and cuts off large refused ones without reading their bodies', async () => {
    // Admitted: headers and the first bytes of its body; the rest comes after the others.
    const admitted = await RawConnection.open(port, opened);
    admitted.write(head(validBody.length), validBody.subarray(0, 10));
    await boundIsFull();

    // Refused: each sends its whole request at once, as an exporter does.
    const refusedBody = Buffer.alloc(LARGE_BODY_BYTES, 0x61);
    const refused = await Promise.all(Array.from({ length: 6 }, () => RawConnection.open(port, opened)));
    for (const connection of refused) connection.write(head(refusedBody.length), refusedBody);
    for (const connection of refused) {
      const answer = await connection.response();
      assert.equal(answer.status, 429, answer.body);
      assert.equal(answer.headers.connection, 'close');
      assert.ok(answer.headers['retry-after']);
      // The server closed the connection rather than read the body it refused.
      await connection.closed;
      const read = await eventually(() => {
        const bytes = serverBytesRead.get(connection.localPort);
        assert.ok(bytes !== undefined);
        return bytes;
      });
      assert.ok(read < refusedBody.length, `the server read ${read} bytes of a ${refusedBody.length}-byte body`);
    }

    // The admitted request, still open, is answered once its body is in; nothing was lost.
    admitted.write(validBody.subarray(10));
    const answer = await admitted.response();
    assert.equal(answer.status, 200, answer.body);
    assert.equal(running.sink.batches.length, 1);
    assert.equal(answer.headers.connection, 'keep-alive');
  });

  it('keeps the connection of a refused request whose small body arrived with its headers', async () => {
    const admitted = await RawConnection.open(port, opened);
    admitted.write(head(validBody.length), validBody.subarray(0, 10));
    await boundIsFull();
    const small = await RawConnection.open(port, opened);
    const smallBody = Buffer.alloc(200, 0x61);
    small.write(head(smallBody.length), smallBody);
    const refused = await small.response();
    assert.equal(refused.status, 429, refused.body);
    assert.notEqual(refused.headers.connection, 'close');

    admitted.write(validBody.subarray(10));
    assert.equal((await admitted.response()).status, 200);
    // The same connection carries the next request, now that the bound has room.
    // (once the admitted request is delivered, which frees the bound).
    await eventually(async () => {
      small.write(head(validBody.length), validBody);
      assert.equal((await small.response()).status, 200);
    });
    assert.equal(small.socket.closed, false);
  });

  it('closes the connection of a request refused before a body larger than the server discards', async () => {
    const connection = await RawConnection.open(port, opened);
    // Only the start of the body: the answer and the close come without the rest.
    connection.write(head(LARGE_BODY_BYTES, 'text/plain'), Buffer.alloc(1024, 0x61));
    const answer = await connection.response();
    assert.equal(answer.status, 415, answer.body);
    assert.equal(answer.headers.connection, 'close');
    await connection.closed;
  });
});
