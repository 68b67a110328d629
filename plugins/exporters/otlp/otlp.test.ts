// The otlp exporter against a plain OTLP/HTTP endpoint (tracepipe/testing's OtlpHttpServer): what
// it sends decodes to the batches it was given, for the right tenant, and the endpoint's answers
// (retryable, rejected, down) are retried, counted or queued.

import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import {
  validateAgainst,
  nopHost,
  nopSettings,
  runComponentConformance,
  eventually,
  metricValue,
  makeSpanBatch,
  startOtlpHttpServer,
} from 'tracepipe/testing';
import type { OtlpHttpServer } from 'tracepipe/testing';
import type { Exporter, SpanBatch } from 'tracepipe/plugin';
import type { OtlpExporterConfig } from './index.ts';
import { otlpExporterFactory } from './index.ts';

runComponentConformance(otlpExporterFactory, {
  testdataDir: join(import.meta.dirname, 'testdata'),
  config: { endpoint: 'http://127.0.0.1:9', retry_on_failure: { max_retries: 0 } },
  sample: () => makeSpanBatch(2),
});

let workDir: string;
before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'tp-otlpx-'));
});
after(async () => {
  await rm(workDir, { recursive: true, force: true });
});

function createExporter(overrides: Record<string, unknown>): { exporter: Exporter<'spans'>; metrics: Registry } {
  const config: Record<string, unknown> = {
    ...overrides,
    retry_on_failure: { initial_backoff_ms: 5, max_backoff_ms: 20, ...(overrides.retry_on_failure as object) },
  };
  assert.deepEqual(validateAgainst(otlpExporterFactory.configSchema, config, 'otlp'), []);
  const host = nopHost({ resolvePath: (path) => resolve(workDir, path) });
  const exporter = otlpExporterFactory.create(
    nopSettings('exporter', 'otlp', host),
    config as unknown as OtlpExporterConfig,
  );
  return { exporter, metrics: host.metrics };
}

describe('otlp exporter → an OTLP/HTTP endpoint', () => {
  for (const encoding of ['protobuf', 'json'] as const) {
    for (const compression of ['gzip', 'none'] as const) {
      it(`delivers spans intact (${encoding}, ${compression}) with the tenant forwarded`, async () => {
        const endpoint = await startOtlpHttpServer();
        const { sink } = endpoint;
        const { exporter, metrics } = createExporter({
          endpoint: endpoint.url,
          encoding,
          compression,
          forward_tenant: true,
        });
        await exporter.start(new AbortController().signal);
        try {
          const batches = [makeSpanBatch(3), makeSpanBatch(5)];
          for (const batch of batches) await exporter.consume(batch, { project: 'proj-x', apiKey: 'key-x' });
          await sink.waitFor(() => sink.batches.length === 2);
          const received = sink.batches.map((b) => b.data);
          // Send order is not guaranteed with concurrent uploads; compare as a set.
          const byFirstSpan = (batch: SpanBatch) => batch.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.spanId;
          assert.deepEqual(
            received.sort((a, b) => byFirstSpan(a).localeCompare(byFirstSpan(b))),
            batches.sort((a, b) => byFirstSpan(a).localeCompare(byFirstSpan(b))),
          );
          for (const { context } of sink.batches) {
            assert.equal(context.apiKey, 'key-x');
            assert.equal(context.project, 'proj-x');
          }
          await exporter.shutdown(Date.now() + 2000);
          assert.equal(await metricValue(metrics, 'tracepipe_otlp_exporter_spans_sent_total'), 8);
        } finally {
          await exporter.shutdown(Date.now() + 2000);
          await endpoint.close();
        }
      });
    }
  }
});

describe('otlp exporter against a scripted endpoint', () => {
  let server: OtlpHttpServer;
  let url: string;

  beforeEach(async () => {
    server = await startOtlpHttpServer();
    url = server.url;
  });
  afterEach(async () => {
    await server.close();
  });

  /** Every request decoded as OTLP: the exporter never sends a malformed body. */
  const malformed = () => server.requests.flatMap((request) => (request.error ? [request.error] : []));

  it('sends configured headers, and no tenant headers unless asked', async () => {
    const { exporter } = createExporter({ endpoint: url, headers: { authorization: 'Bearer t' } });
    await exporter.start(new AbortController().signal);
    await exporter.consume(makeSpanBatch(1), { project: 'p', apiKey: 'secret' });
    await exporter.shutdown(Date.now() + 2000);
    assert.deepEqual(malformed(), []);
    assert.equal(server.requests[0]!.headers.authorization, 'Bearer t');
    assert.equal(server.requests[0]!.headers['x-api-key'], undefined);
    assert.equal(server.requests[0]!.headers['content-type'], 'application/x-protobuf');
  });

  it('retries 503 and 429, then delivers', async () => {
    server.answer = (index) =>
      index === 0 ? { status: 503 } : index === 1 ? { status: 429, headers: { 'Retry-After': '0' } } : { status: 200 };
    const { exporter, metrics } = createExporter({ endpoint: url });
    await exporter.start(new AbortController().signal);
    await exporter.consume(makeSpanBatch(4), { project: 'p' });
    await exporter.shutdown(Date.now() + 5000);
    assert.equal(server.requests.length, 3);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_retries_total'), 2);
    assert.equal(await metricValue(metrics, 'tracepipe_otlp_exporter_spans_sent_total'), 4);
  });

  it('drops a batch the receiver rejects (400), counted', async () => {
    server.answer = () => ({ status: 400 });
    const { exporter, metrics } = createExporter({ endpoint: url });
    await exporter.start(new AbortController().signal);
    await exporter.consume(makeSpanBatch(3), { project: 'p' });
    await exporter.shutdown(Date.now() + 5000);
    assert.equal(server.requests.length, 1);
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'rejected' }), 3);
  });

  it('with a persistent queue, keeps what it cannot send and replays it later', async () => {
    let down = true;
    server.answer = () => (down ? { status: 503 } : { status: 200 });
    const queue = { enabled: true, directory: 'otlp-queue', replay_interval_ms: 20 };
    const { exporter, metrics } = createExporter({
      endpoint: url,
      retry_on_failure: { max_retries: 0 },
      persistent_queue: queue,
    });
    await exporter.start(new AbortController().signal);
    for (let i = 0; i < 3; i++) await exporter.consume(makeSpanBatch(2), { project: 'p' });
    await eventually(
      async () => (await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' })) === 3,
    );
    down = false;
    await eventually(async () => (await metricValue(metrics, 'tracepipe_otlp_exporter_spans_sent_total')) === 6);
    await exporter.shutdown(Date.now() + 2000);
    assert.deepEqual(
      (await readdir(join(workDir, 'otlp-queue'))).filter((n) => n.endsWith('.batch')),
      [],
    );
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total'), 0);
  });

  it('without a persistent queue, counts what it cannot send', async () => {
    server.answer = () => ({ status: 503 });
    const { exporter, metrics } = createExporter({ endpoint: url, retry_on_failure: { max_retries: 1 } });
    await exporter.start(new AbortController().signal);
    await exporter.consume(makeSpanBatch(5), { project: 'p' });
    await exporter.shutdown(Date.now() + 5000);
    assert.equal(
      await metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'retries_exhausted' }),
      5,
    );
  });
});
