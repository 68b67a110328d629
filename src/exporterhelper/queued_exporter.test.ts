// Tests of QueuedExporter against a real HTTP server on a loopback port: the send path, a drop
// counted and logged when there is no disk queue, holding to disk and re-sending once the
// destination is back, a failing send, and the idempotent lifecycle.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { nopSettings } from '../pipeline/testing.ts';
import { captureLogs, metricValue } from '../../test/support/observe.ts';
import type { LogLine } from '../../test/support/observe.ts';
import { QueuedExporter, tenantBatchHeader } from './queued_exporter.ts';
import type { TenantBatchHeader } from './queued_exporter.ts';

interface Item {
  readonly body: Buffer;
  readonly items: number;
}

/** A destination that answers every request with `status` (changeable) and records the bodies. */
class Destination {
  status = 200;
  readonly requests: { body: string; headers: IncomingHttpHeaders }[] = [];
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      this.requests.push({ body: Buffer.concat(chunks).toString('utf8'), headers: request.headers });
      response.writeHead(this.status).end();
    });
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/items`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let destination: Destination;
let workDir: string;
beforeEach(async () => {
  destination = new Destination();
  await destination.start();
  workDir = await mkdtemp(join(tmpdir(), 'tp-qe-'));
});
afterEach(async () => {
  await destination.stop();
  await rm(workDir, { recursive: true, force: true });
});

function create(options: { disk?: boolean; send?: (item: Item) => Promise<void> } = {}) {
  const { logger, lines } = captureLogs();
  const settings = { ...nopSettings('exporter', 'queued/test'), logger };
  const header = (item: Item): TenantBatchHeader => tenantBatchHeader(item.items, 'default', undefined);
  const replayed: string[] = [];
  const pipeline: QueuedExporter<Item, TenantBatchHeader> = new QueuedExporter<Item, TenantBatchHeader>({
    settings,
    dataType: 'spans',
    url: destination.url,
    consumers: 1,
    sendingQueue: { queue_size: 10, block_on_overflow: false },
    persistentQueue: { enabled: options.disk ?? false, directory: join(workDir, 'queue'), max_bytes: 1 << 20, replay_interval_ms: 60_000 },
    retry: { max_retries: 0, initial_backoff_ms: 0, max_backoff_ms: 1, multiplier: 1 },
    timeoutMs: 5000,
    itemCount: (item) => item.items,
    send:
      options.send ??
      (async (item) => {
        const result = await pipeline.withRetry(() => pipeline.attempt(item.body, { 'Content-Type': 'text/plain' }));
        if (result.status === 'success') pipeline.destinationBack();
        else await pipeline.hold(header(item), item.body, result);
      }),
    keepUnsent: (item) => pipeline.hold(header(item), item.body),
    replay: async (entry, body) => {
      const result = await pipeline.attempt(body, { 'Content-Type': 'text/plain' });
      if (result.status === 'retryable') return 'stop';
      replayed.push(body.toString('utf8'));
      await pipeline.removeStored(entry);
      return 'continue';
    },
  });
  return { pipeline, lines, metrics: settings.metrics, replayed };
}

const item = (text: string, items = 2): Item => ({ body: Buffer.from(text), items });

async function until(predicate: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail('the condition was never met');
}

const dropLines = (lines: LogLine[]) => lines.filter((line) => line.reason !== undefined);

describe('QueuedExporter', () => {
  it('sends a queued batch to the URL with the given headers', async () => {
    const { pipeline } = create();
    await pipeline.start();
    await pipeline.offer(item('first'));
    await until(() => destination.requests.length === 1);
    assert.equal(destination.requests[0]!.body, 'first');
    assert.equal(destination.requests[0]!.headers['content-type'], 'text/plain');
    await pipeline.shutdown(Date.now() + 1000);
  });

  it('without a disk queue, counts and logs a batch that could not be sent', async () => {
    destination.status = 503;
    const { pipeline, lines, metrics } = create();
    await pipeline.start();
    await pipeline.offer(item('lost', 3));
    const dropped = () => metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'retries_exhausted', data_type: 'spans' });
    await until(async () => (await dropped()) === 3);
    await pipeline.shutdown(Date.now() + 1000);
    const [line] = dropLines(lines);
    assert.equal(line!.reason, 'retries_exhausted');
    assert.equal(line!.spans, 3);
    assert.equal(line!.status, 503);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_send_failures_total', { status: '503' }), 1);
  });

  it('holds a batch on disk while the destination is away and re-sends it once a live send succeeds', async () => {
    destination.status = 503;
    const { pipeline, metrics, replayed } = create({ disk: true });
    await pipeline.start();
    await pipeline.offer(item('held'));
    await until(async () => (await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' })) === 1);
    destination.status = 200;
    await pipeline.offer(item('live'));
    await until(() => replayed.length === 1);
    assert.deepEqual(replayed, ['held']);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' }), 0);
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total'), 0);
    await pipeline.shutdown(Date.now() + 1000);
  });

  it('counts and logs the batch of a send that throws', async () => {
    const { pipeline, lines, metrics } = create({ send: () => Promise.reject(new Error('bug')) });
    await pipeline.start();
    await pipeline.offer(item('x', 4));
    await until(async () => (await metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'internal_error' })) === 4);
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
});
