// Tests of QueuedExporter against a real HTTP server on a loopback port: the send path, a drop
// counted and logged when there is no disk queue, holding to disk and re-sending once the
// destination is back, a push that throws, the idempotent lifecycle, Retry-After bounded by
// `max_retry_after_ms`, the outage log, the memory gauges, splitting, and delivery holds
// (src/pipeline/delivery.ts). Waits poll with a generous bound; no test asserts how long anything took.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Delivery } from '../pipeline/delivery.ts';
import { ThrottleError } from '../pipeline/errors.ts';
import { nopSettings } from '../pipeline/testing.ts';
import { eventually } from '../testkit/eventually.ts';
import { captureLogs, metricValue } from '../testkit/observe.ts';
import type { LogLine } from '../testkit/observe.ts';
import { HttpSender } from './http_sender.ts';
import { QueuedExporter, tenantHeader } from './queued_exporter.ts';
import type { ExportRequest, PushContext, TenantHeader } from './queued_exporter.ts';
import type { RetryConfig } from './retry.ts';
import type { Verdict } from './verdict.ts';
import { httpVerdict, sent, split } from './verdict.ts';

interface Item extends ExportRequest {
  readonly body: Buffer;
}

interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  /** Never answer (until the client gives up). */
  readonly hang?: boolean;
}

/** A destination that answers per request (`answer`, changeable) and records the bodies it got. */
class Destination {
  answer: (index: number) => Answer = () => ({ status: 200 });
  readonly requests: { body: string; headers: IncomingHttpHeaders; status: number }[] = [];
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = this.answer(this.requests.length);
      this.requests.push({
        body: Buffer.concat(chunks).toString('utf8'),
        headers: request.headers,
        status: answer.status,
      });
      if (!answer.hang) response.writeHead(answer.status, answer.headers).end();
    });
  });
  url = '';

  set status(status: number) {
    this.answer = () => ({ status });
  }

  /** Bodies answered with a 2xx. */
  get delivered(): string[] {
    return this.requests.filter((r) => r.status >= 200 && r.status < 300).map((r) => r.body);
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://user:secret-password@127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/items?token=secret-token`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let destination: Destination;
let workDir: string;
const senders: HttpSender[] = [];
beforeEach(async () => {
  destination = new Destination();
  await destination.start();
  workDir = await mkdtemp(join(tmpdir(), 'tp-qe-'));
});
afterEach(async () => {
  for (const sender of senders.splice(0)) sender.close();
  await destination.stop();
  await rm(workDir, { recursive: true, force: true });
});

interface Options {
  disk?: boolean;
  overflowToDisk?: boolean;
  consumers?: number;
  retry?: Partial<RetryConfig>;
  push?: (item: Item, context: PushContext) => Promise<Verdict<Item>>;
}

function create(options: Options = {}) {
  const { logger, lines } = captureLogs();
  const settings = nopSettings('exporter', 'queued/test', undefined, { logger });
  const sender = new HttpSender(destination.url, 4);
  senders.push(sender);
  const pipeline = new QueuedExporter<Item, TenantHeader>({
    settings,
    dataType: 'spans',
    endpoint: destination.url,
    consumers: options.consumers ?? 1,
    sendingQueue: {
      queue_size: 10,
      max_bytes: 1 << 20,
      block_on_overflow: false,
      overflow_to_disk: options.overflowToDisk ?? false,
    },
    persistentQueue: {
      enabled: options.disk ?? false,
      directory: join(workDir, 'queue'),
      max_bytes: 1 << 20,
      replay_interval_ms: 60_000,
    },
    retry: {
      max_retries: 0,
      initial_backoff_ms: 0,
      max_backoff_ms: 1,
      multiplier: 1,
      max_retry_after_ms: 30_000,
      ...options.retry,
    },
    push:
      options.push ??
      (async (item, { signal }) =>
        httpVerdict(
          await sender.post(item.body, { 'Content-Type': 'text/plain', 'X-API-Key': item.tenant ?? '' }, 5000, signal),
        )),
    codec: {
      encode: (item) => ({ header: tenantHeader('default', item.tenant), body: item.body }),
      decode: (header, body) => ({ body, items: header.items, ...(header.apiKey ? { tenant: header.apiKey } : {}) }),
    },
  });
  return { pipeline, lines, metrics: settings.host.metrics };
}

const item = (text: string, items = 2, tenant?: string): Item => ({
  body: Buffer.from(text),
  items,
  bytes: Buffer.byteLength(text),
  ...(tenant ? { tenant } : {}),
});

const dropLines = (lines: LogLine[]) => lines.filter((line) => line.reason !== undefined && line.level === 50);

/** A delivery as a receiver makes one: its own reference is released once `consume()` returned. */
function delivery(durable: boolean) {
  const state = { settled: false, abandoned: false };
  const made = new Delivery(durable, (outcome) => {
    if (outcome === 'settled') state.settled = true;
    else state.abandoned = true;
  });
  return { delivery: made, state, consumed: () => made.release() };
}

describe('QueuedExporter', () => {
  it('sends a queued batch with the push function', async () => {
    const { pipeline } = create();
    await pipeline.start();
    await pipeline.offer(item('first'));
    await eventually(() => destination.requests.length === 1);
    assert.equal(destination.requests[0]!.body, 'first');
    assert.equal(destination.requests[0]!.headers['content-type'], 'text/plain');
    await pipeline.shutdown(Date.now() + 1000);
  });

  it('without a disk queue, counts and logs a batch that could not be sent', async () => {
    destination.status = 503;
    const { pipeline, lines, metrics } = create();
    await pipeline.start();
    await pipeline.offer(item('lost', 3));
    const dropped = () =>
      metricValue(metrics, 'tracepipe_component_items_dropped_total', {
        reason: 'retries_exhausted',
        data_type: 'spans',
      });
    await eventually(async () => (await dropped()) === 3);
    await pipeline.shutdown(Date.now() + 1000);
    const [line] = dropLines(lines);
    assert.equal(line!.reason, 'retries_exhausted');
    assert.equal(line!.spans, 3);
    assert.equal(line!.status, 503);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_send_failures_total', { status: '503' }), 1);
  });

  it('holds a batch on disk while the destination is away and re-sends it once a live send succeeds', async () => {
    destination.status = 503;
    const { pipeline, metrics } = create({ disk: true });
    await pipeline.start();
    await pipeline.offer(item('held', 2, 'key-held'));
    await eventually(
      async () => (await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' })) === 1,
    );
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_items', { queue: 'disk' }), 2);
    destination.status = 200;
    await pipeline.offer(item('live'));
    await eventually(() => destination.delivered.includes('held'));
    // Decoded from disk: re-sent with its own tenant's key.
    assert.equal(destination.requests.filter((r) => r.body === 'held').at(-1)!.headers['x-api-key'], 'key-held');
    await eventually(
      async () => (await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' })) === 0,
    );
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_items', { queue: 'disk' }), 0);
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total'), 0);
    await pipeline.shutdown(Date.now() + 1000);
  });

  it('counts and logs the batch of a push that throws', async () => {
    const { pipeline, lines, metrics } = create({ push: () => Promise.reject(new Error('bug')) });
    await pipeline.start();
    await pipeline.offer(item('x', 4));
    await eventually(
      async () =>
        (await metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'internal_error' })) === 4,
    );
    await pipeline.shutdown(Date.now() + 1000);
    assert.equal(dropLines(lines)[0]!.spans, 4);
  });

  it('shuts down once, safely without start, and does not start afterwards', async () => {
    const { pipeline } = create({ disk: true });
    const first = pipeline.shutdown(Date.now() + 1000);
    assert.equal(pipeline.shutdown(Date.now() + 1000), first);
    await first;
    assert.equal(pipeline.stopping, true);
    await pipeline.start();
    assert.equal(pipeline.disk!.depth, 0);
    await assert.rejects(pipeline.offer(item('late')));
  });

  it('honours a Retry-After of an hour only up to max_retry_after_ms', async () => {
    destination.answer = (index) =>
      index === 0 ? { status: 429, headers: { 'Retry-After': '3600' } } : { status: 200 };
    const { pipeline, metrics } = create({ retry: { max_retries: 3, max_retry_after_ms: 100 } });
    await pipeline.start();
    await pipeline.offer(item('throttled', 5));
    // Bounded far below the hour the server asked for: the retry comes after the cap.
    await eventually(() => destination.delivered.length === 1);
    assert.deepEqual(destination.delivered, ['throttled']);
    assert.equal(destination.requests.length, 2);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_retries_total'), 1);
    await pipeline.shutdown(Date.now() + 1000);
  });

  it('splits a request into parts that share one delivery hold', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const pushed: string[] = [];
    const { pipeline, metrics } = create({
      push: async (request) => {
        const text = request.body.toString();
        pushed.push(text);
        if (text === 'ab') return split({ httpStatus: 413 }, [item('a', 1), item('b', 1)]);
        if (text === 'b') await gate;
        return sent();
      },
    });
    await pipeline.start();
    const { delivery: made, state, consumed } = delivery(true);
    await pipeline.offer(item('ab', 2), { delivery: made });
    consumed();
    await eventually(() => pushed.includes('b'));
    assert.equal(state.settled, false); // `a` is sent, `b` is not yet.
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_items', { queue: 'memory' }), 1);
    open();
    await eventually(() => state.settled);
    assert.deepEqual(pushed, ['ab', 'a', 'b']);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'memory' }), 0);
    await pipeline.shutdown(Date.now() + 1000);
  });
});

describe('QueuedExporter memory gauges', () => {
  it('count batches, items and bytes held in memory, waiting or being retried', async () => {
    // A first retry ten minutes away: the batch sits in its sender's backoff.
    destination.answer = () => ({ status: 503, headers: { 'Retry-After': '600' } });
    const { pipeline, metrics } = create({ retry: { max_retries: 5, max_retry_after_ms: 600_000 } });
    await pipeline.start();
    await pipeline.offer(item('retrying', 3));
    await pipeline.offer(item('waiting', 4));
    await eventually(async () => (await metricValue(metrics, 'tracepipe_exporter_retries_total')) === 1);
    assert.equal(destination.requests.length, 1);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'memory' }), 2);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_items', { queue: 'memory' }), 7);
    assert.equal(
      await metricValue(metrics, 'tracepipe_exporter_memory_queue_bytes'),
      'retrying'.length + 'waiting'.length,
    );
    await pipeline.shutdown(Date.now() + 200);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'memory' }), 0);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_items', { queue: 'memory' }), 0);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_memory_queue_bytes'), 0);
  });
});

describe('QueuedExporter outage log', () => {
  const infoLines = (lines: LogLine[]) =>
    lines.filter((line) => line.level === 30 && line.msg.includes('destination is back'));
  const warnLines = (lines: LogLine[]) =>
    lines.filter((line) => line.level === 40 && line.msg.includes('destination is failing'));

  it('logs one WARN when the destination starts failing and one INFO once what waited is delivered', async () => {
    destination.answer = (index) => (index < 12 ? { status: 503 } : { status: 200 });
    const { pipeline, lines } = create({
      consumers: 2,
      retry: { max_retries: 20, initial_backoff_ms: 5, max_backoff_ms: 20 },
    });
    await pipeline.start();
    await pipeline.offer(item('a', 1, 'secret-key-aaaa'));
    await pipeline.offer(item('b', 2, 'secret-key-bbbb'));
    await pipeline.offer(item('c', 3, 'secret-key-aaaa'));
    await eventually(() => destination.delivered.length === 3);
    await eventually(() => infoLines(lines).length === 1);
    await pipeline.shutdown(Date.now() + 1000);

    const warnings = warnLines(lines);
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.reason, '503');
    assert.equal(warnings[0]!.endpoint, `http://127.0.0.1:${new URL(destination.url).port}/v1/items`);
    assert.ok((warnings[0]!.tenants_affected as number) >= 1);
    const [info] = infoLines(lines);
    assert.equal(info!.tenants_affected, 2);
    assert.equal(info!.failed_attempts, 12);
    assert.deepEqual(info!.delivered_late, { batches: 3, spans: 6 });
    // Nothing per attempt, and no secret anywhere.
    assert.equal(lines.filter((line) => line.level >= 40).length, 1);
    for (const secret of ['secret-key', 'secret-password', 'secret-token'])
      assert.equal(JSON.stringify(lines).includes(secret), false, secret);
  });

  it('with a disk queue, reports recovery once the batches kept on disk are re-sent', async () => {
    destination.status = 503;
    const { pipeline, lines, metrics } = create({ disk: true });
    await pipeline.start();
    for (const text of ['a', 'b', 'c']) await pipeline.offer(item(text, 1, 'secret-key-aaaa'));
    await eventually(
      async () => (await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' })) === 3,
    );
    assert.equal(warnLines(lines).length, 1);
    assert.equal(infoLines(lines).length, 0);
    destination.status = 200;
    await pipeline.offer(item('live', 1));
    await eventually(() => infoLines(lines).length === 1);
    assert.deepEqual(new Set(destination.delivered), new Set(['a', 'b', 'c', 'live']));
    assert.deepEqual(infoLines(lines)[0]!.delivered_late, { batches: 3, spans: 3 });
    assert.equal(warnLines(lines).length, 1);
    await pipeline.shutdown(Date.now() + 1000);
  });
});

describe('QueuedExporter delivery holds', () => {
  it('releases the delivery of a delivered batch', async () => {
    const { pipeline } = create();
    await pipeline.start();
    const { delivery: made, state, consumed } = delivery(true);
    await pipeline.offer(item('kept'), { delivery: made });
    consumed();
    await eventually(() => state.settled);
    assert.deepEqual(destination.delivered, ['kept']);
    await pipeline.shutdown(Date.now() + 1000);
  });

  it('releases the delivery of a batch written to the disk queue', async () => {
    destination.status = 503;
    const { pipeline } = create({ disk: true });
    await pipeline.start();
    const { delivery: made, state, consumed } = delivery(true);
    await pipeline.offer(item('stored'), { delivery: made });
    consumed();
    await eventually(() => state.settled);
    assert.equal(pipeline.disk!.depth, 1);
    await pipeline.shutdown(Date.now() + 1000);
  });

  it('releases the delivery of a rejected batch, counted', async () => {
    destination.status = 400;
    const { pipeline, metrics } = create();
    await pipeline.start();
    const { delivery: made, state, consumed } = delivery(true);
    await pipeline.offer(item('bad', 3), { delivery: made });
    consumed();
    await eventually(() => state.settled);
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'rejected' }), 3);
    await pipeline.shutdown(Date.now() + 1000);
  });

  it('at a shutdown past the deadline without a disk queue, leaves a durable delivery to the journal, uncounted', async () => {
    destination.answer = () => ({ status: 200, hang: true });
    const { pipeline, metrics, lines } = create({ consumers: 1 });
    await pipeline.start();
    const inFlight = delivery(true);
    const waiting = delivery(true);
    await pipeline.offer(item('in flight', 2), { delivery: inFlight.delivery });
    await pipeline.offer(item('waiting', 3), { delivery: waiting.delivery });
    inFlight.consumed();
    waiting.consumed();
    await eventually(() => destination.requests.length === 1);
    await pipeline.shutdown(Date.now() + 200);
    // Given up, not settled: the journal delivers them again.
    assert.deepEqual(inFlight.state, { settled: false, abandoned: true });
    assert.deepEqual(waiting.state, { settled: false, abandoned: true });
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total'), 0);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_items_left_to_journal_total'), 5);
    const notices = lines.filter((line) => line.msg.includes('receiver journal'));
    assert.equal(notices.length, 1);
    assert.equal(notices[0]!.level, 30);
    assert.equal(notices[0]!.spans, 5);
    assert.equal(dropLines(lines).length, 0);
  });

  it('at a shutdown past the deadline without a disk queue, counts a non-durable delivery as dropped', async () => {
    destination.answer = () => ({ status: 200, hang: true });
    const { pipeline, metrics } = create({ consumers: 1 });
    await pipeline.start();
    const notDurable = delivery(false);
    await pipeline.offer(item('in flight', 2), { delivery: notDurable.delivery });
    await pipeline.offer(item('no delivery', 3));
    notDurable.consumed();
    await eventually(() => destination.requests.length === 1);
    await pipeline.shutdown(Date.now() + 200);
    assert.equal(notDurable.state.settled, true);
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'shutdown' }), 5);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_items_left_to_journal_total'), 0);
  });

  it('with overflow_to_disk, keeps what a full queue cannot take on disk instead of refusing it', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const pushed: string[] = [];
    const { pipeline, metrics } = create({
      disk: true,
      overflowToDisk: true,
      push: async (request) => {
        await held; // A destination that hangs until the test lets it answer.
        pushed.push(request.body.toString());
        return sent();
      },
    });
    await pipeline.start();
    const deliveries = Array.from({ length: 12 }, () => delivery(true));
    // One batch in the hung sender, ten in the memory queue, the twelfth has no room.
    for (const [index, made] of deliveries.entries()) {
      await pipeline.offer(item(`batch-${index}`, 1), { delivery: made.delivery });
      made.consumed();
    }
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_items_overflowed_to_disk_total'), 1);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' }), 1);
    assert.equal(deliveries[11]!.state.settled, true, 'the overflowed batch is settled once on disk');
    assert.equal(deliveries[0]!.state.settled, false, 'the batch in the hung sender is still held');
    release();
    // Every batch ends sent or on disk: settled, none dropped.
    await eventually(() => deliveries.every((made) => made.state.settled));
    assert.ok(pushed.length > 0);
    await pipeline.shutdown(Date.now() + 1000);
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total'), 0);
  });

  it('without overflow_to_disk, a full queue refuses with ThrottleError even with a disk queue', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { pipeline } = create({ disk: true, push: () => held.then(() => sent()) });
    await pipeline.start();
    for (let index = 0; index < 11; index++) await pipeline.offer(item(`batch-${index}`, 1));
    await assert.rejects(pipeline.offer(item('refused', 1)), ThrottleError);
    release();
    await pipeline.shutdown(Date.now() + 1000);
  });

  it('releases the hold of a batch the queue refuses', async () => {
    const { pipeline } = create();
    await pipeline.shutdown(Date.now() + 1000);
    const { delivery: made, state, consumed } = delivery(true);
    await assert.rejects(pipeline.offer(item('refused'), { delivery: made }));
    consumed();
    assert.equal(state.settled, true);
  });
});
