// A batch is encoded only once the sending queue has room for it. The destination is a real HTTP
// server on loopback that holds every request until the test lets it answer, so the one sender
// stays busy and the queue fills; what is asserted is how many batches were encoded, and how many
// answers the server had given when each was, never how long anything took.

import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { RunBatch } from '../model/runs.ts';
import type { Exporter } from '../pipeline/component.ts';
import { ThrottleError } from '../pipeline/errors.ts';
import { nopSettings } from '../pipeline/testing.ts';
import { eventually } from '../testkit/eventually.ts';
import { metricValue } from '../testkit/observe.ts';
import { HttpSender } from './http_sender.ts';
import { newExporter } from './new_exporter.ts';
import type { ExportRequest, RequestCodec } from './queued_exporter.ts';
import { httpVerdict } from './verdict.ts';

interface Body extends ExportRequest {
  readonly body: Buffer;
}

const codec: RequestCodec<Body, object> = {
  encode: (request) => ({ header: {}, body: request.body }),
  decode: (header, body) => ({ body, items: header.items, bytes: body.byteLength }),
};

/** A destination that holds each request until told to answer, then answers 200 to all. */
class HoldingServer {
  readonly received: string[] = [];
  answered = 0;
  private answering = false;
  private readonly held: ServerResponse[] = [];
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      this.received.push(Buffer.concat(chunks).toString('utf8'));
      if (this.answering) this.answer(res);
      else this.held.push(res);
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/runs`;
  }

  /** Answers every request held now, and every later one at once. */
  answerAll(): void {
    this.answering = true;
    for (const res of this.held.splice(0)) this.answer(res);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(res: ServerResponse): void {
    this.answered++;
    res.end('{}');
  }
}

let server: HoldingServer;
let url: string;
/** Shut down after each test, passed or failed, before the server closes. */
let components: Exporter<'runs'>[] = [];
beforeEach(async () => {
  server = new HoldingServer();
  url = await server.listen();
});
afterEach(async () => {
  server.answerAll();
  for (const component of components.splice(0)) await component.shutdown(Date.now() + 5000);
  await server.close();
});

/** An exporter with one sender and a queue of one batch; `encoded` lists, per encoded batch, its ids and the answers given by then. */
function exporter(blockOnOverflow: boolean, overflowTo?: string) {
  const sender = new HttpSender(url, 2);
  const encoded: { ids: string; answeredBefore: number }[] = [];
  const settings = nopSettings('exporter', 'slow');
  const component = newExporter(
    settings,
    {
      max_concurrent_uploads: 1,
      sending_queue: {
        queue_size: 1,
        max_bytes: 1 << 20,
        block_on_overflow: blockOnOverflow,
        overflow_to_disk: overflowTo !== undefined,
      },
      retry_on_failure: {
        max_retries: 0,
        initial_backoff_ms: 0,
        max_backoff_ms: 1,
        multiplier: 1,
        max_retry_after_ms: 0,
      },
      persistent_queue: {
        enabled: overflowTo !== undefined,
        directory: overflowTo ?? '.',
        max_bytes: 1 << 20,
        replay_interval_ms: 60000,
      },
    },
    {
      dataType: 'runs',
      endpoint: url,
      codec,
      close: () => sender.close(),
      encode: (batch: RunBatch) => {
        const ids = batch.runs.map((run) => String(run.id)).join(',');
        encoded.push({ ids, answeredBefore: server.answered });
        const body = Buffer.from(ids);
        const request: Body = { body, items: batch.runs.length, bytes: body.byteLength };
        return { request };
      },
      push: async (request, { signal }) => httpVerdict(await sender.post(request.body, {}, 30_000, signal)),
    },
  );
  components.push(component);
  return { component, encoded, settings };
}

function runs(...ids: string[]): RunBatch {
  return { runs: ids.map((id) => ({ id }) as RunBatch['runs'][number]) };
}

describe('an exporter whose destination holds its requests', () => {
  it('refuses a batch the full queue has no room for without encoding it', async () => {
    const { component, encoded } = exporter(false);
    await component.start(new AbortController().signal);
    await component.consume(runs('a'), { project: 'p' });
    await eventually(() => assert.deepEqual(server.received, ['a'])); // the sender waits on `a`
    await component.consume(runs('b'), { project: 'p' }); // fills the queue
    for (const id of ['c', 'd', 'e']) {
      await assert.rejects(component.consume(runs(id), { project: 'p' }), ThrottleError);
    }
    assert.deepEqual(
      encoded.map(({ ids }) => ids),
      ['a', 'b'],
    );
    server.answerAll();
    await eventually(() => assert.equal(server.answered, 2));
    await component.consume(runs('c'), { project: 'p' }); // room again: taken and encoded
    await eventually(() => assert.equal(server.answered, 3));
    assert.deepEqual(
      encoded.map(({ ids }) => ids),
      ['a', 'b', 'c'],
    );
    await component.shutdown(Date.now() + 5000);
  });

  it('with block_on_overflow, encodes a waiting batch only once a place is free for it', async () => {
    const { component, encoded } = exporter(true);
    await component.start(new AbortController().signal);
    await component.consume(runs('a'), { project: 'p' });
    await eventually(() => assert.deepEqual(server.received, ['a']));
    await component.consume(runs('b'), { project: 'p' }); // fills the queue
    let accepted = false;
    const waiting = component.consume(runs('c'), { project: 'p' }).then(() => (accepted = true));
    // Turns of the event loop in which an encoding before the wait would have happened.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(accepted, false);
    assert.deepEqual(
      encoded.map(({ ids }) => ids),
      ['a', 'b'],
    );
    server.answerAll(); // `a` answered: `b` goes to the sender, and `c` gets its place
    await waiting;
    await eventually(() => assert.equal(server.answered, 3));
    assert.deepEqual(encoded, [
      { ids: 'a', answeredBefore: 0 },
      { ids: 'b', answeredBefore: 0 },
      { ids: 'c', answeredBefore: 1 },
    ]);
    await component.shutdown(Date.now() + 5000);
  });

  it('with overflow_to_disk, encodes a batch the queue has no room for and stores it on disk', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'encode-after-room-'));
    const { component, encoded, settings } = exporter(false, directory);
    try {
      await component.start(new AbortController().signal);
      await component.consume(runs('a'), { project: 'p' });
      await eventually(() => assert.deepEqual(server.received, ['a']));
      await component.consume(runs('b'), { project: 'p' }); // fills the queue
      await component.consume(runs('c'), { project: 'p' }); // to disk
      assert.deepEqual(
        encoded.map(({ ids }) => ids),
        ['a', 'b', 'c'],
      );
      const overflowed = await metricValue(settings.host.metrics, 'tracepipe_exporter_items_overflowed_to_disk_total');
      assert.equal(overflowed, 1);
      assert.equal((await readdir(directory)).filter((name) => name.endsWith('.batch')).length, 1);
      server.answerAll(); // `a` answered: the replayer sends `c` from disk too
      await eventually(() => assert.deepEqual([...server.received].sort(), ['a', 'b', 'c']));
      await eventually(async () =>
        assert.deepEqual(
          (await readdir(directory)).filter((name) => !name.startsWith('.tracepipe-lock')),
          [],
        ),
      );
    } finally {
      await component.shutdown(Date.now() + 5000);
      await rm(directory, { recursive: true, force: true });
    }
  });
});
