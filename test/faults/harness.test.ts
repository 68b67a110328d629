// The fault harness checked on its own, without the proxy: the capture backend's modes (counting
// distinct runs and duplicates, refusing connections while down and reopening the same port, a
// throttle that ends by itself, hung uploads, slow answers that still deliver), the load sender's
// accounting of acknowledged, refused and failed requests, and the config variants the CLI accepts.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  MultipartZstdWriter,
  multipartContentType,
} from '../../plugins/exporters/backend/internal/multipart_writer.ts';
import { idToUuid } from '../../plugins/processors/genai/internal/ids.ts';
import { decodeTraceRequestJson } from '../../src/otlp/decode-json.ts';
import { decodeTraceRequestProtobuf } from '../../src/otlp/decode-protobuf.ts';
import { eventually } from '../../src/testkit/eventually.ts';
import { runGroup } from '../../src/testkit/processes.ts';
import { makeRun } from '../../src/testkit/runs.ts';
import { CaptureBackend, FaultLab, LoadSender, REPO_ROOT, genAiRequest, mode, proxyConfigVariant } from './harness.ts';

function upload(ids: string[]): { body: Buffer; contentType: string } {
  const writer = new MultipartZstdWriter(3);
  for (const id of ids) writer.addRun(makeRun({ id }));
  const encoded = writer.finish();
  return { body: encoded.body, contentType: multipartContentType(encoded.boundary) };
}

async function post(backend: CaptureBackend, ids: string[], signal?: AbortSignal): Promise<Response> {
  const { body, contentType } = upload(ids);
  return fetch(`${backend.url}/runs/multipart`, {
    method: 'POST',
    headers: { 'content-type': contentType, 'content-encoding': 'zstd' },
    body,
    ...(signal ? { signal } : {}),
  });
}

const uuid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;

describe('fault harness: capture backend', () => {
  const lab = new FaultLab();
  after(() => lab.cleanup());

  it('records distinct runs and duplicates of 2xx uploads, and refuses malformed bodies', async () => {
    const backend = lab.backend();
    await backend.start();
    assert.equal((await post(backend, [uuid(1), uuid(2)])).status, 202);
    assert.equal((await post(backend, [uuid(2), uuid(3)])).status, 202);
    assert.equal(backend.distinct, 3);
    assert.equal(backend.duplicates, 1);
    assert.equal(backend.duplicatesAmong([uuid(1), uuid(2)]), 1);
    assert.deepEqual(backend.missing([uuid(1), uuid(4)]), [uuid(4)]);
    const bad = await fetch(`${backend.url}/runs/multipart`, {
      method: 'POST',
      headers: { 'content-encoding': 'zstd' },
      body: 'nope',
    });
    assert.equal(bad.status, 400);
    assert.equal(backend.malformed.length, 1);
  });

  it('throttles n uploads with Retry-After, delivering none of them, then answers 2xx', async () => {
    const backend = lab.backend();
    await backend.start(mode.throttle(429, 3600, 2));
    for (let i = 0; i < 2; i++) {
      const response = await post(backend, [uuid(10 + i)]);
      assert.equal(response.status, 429);
      assert.equal(response.headers.get('retry-after'), '3600');
    }
    assert.equal(backend.distinct, 0);
    assert.equal(backend.mode.kind, 'ok');
    assert.equal((await post(backend, [uuid(10)])).status, 202);
    assert.ok(backend.has(uuid(10)));
  });

  it('answers error(5xx) without delivering', async () => {
    const backend = lab.backend();
    await backend.start(mode.error(503));
    assert.equal((await post(backend, [uuid(20)])).status, 503);
    await backend.set(mode.ok());
    assert.equal(backend.distinct, 0);
  });

  it('while down refuses connections, and comes back on the same port', async () => {
    const backend = lab.backend();
    const first = await backend.start();
    await backend.set(mode.down());
    await assert.rejects(
      post(backend, [uuid(30)]),
      (error: Error & { cause?: { code?: string } }) => error.cause?.code === 'ECONNREFUSED',
    );
    await backend.set(mode.ok());
    assert.equal(backend.url, first);
    assert.equal((await post(backend, [uuid(30)])).status, 202);
    assert.ok(backend.has(uuid(30)));
  });

  it('starting down still reserves a port, which comes up later', async () => {
    const backend = lab.backend();
    const url = await backend.start(mode.down());
    assert.notEqual(backend.port, 0);
    await assert.rejects(post(backend, [uuid(40)]));
    await backend.set(mode.ok());
    assert.equal(backend.url, url);
    assert.equal((await post(backend, [uuid(40)])).status, 202);
  });

  it('hung: never answers and delivers nothing', async () => {
    const backend = lab.backend();
    await backend.start(mode.hung());
    const controller = new AbortController();
    const pending = post(backend, [uuid(50)], controller.signal);
    await eventually(() => backend.answers.get('none') === 1, { message: 'the hung upload to arrive' });
    controller.abort();
    await assert.rejects(pending);
    assert.equal(backend.distinct, 0);
  });

  it('slow: delivers when it answers, also to a client that gave up meanwhile (its re-send is a duplicate)', async () => {
    const backend = lab.backend();
    await backend.start(mode.slow(300));
    const controller = new AbortController();
    const pending = post(backend, [uuid(60)], controller.signal);
    await eventually(() => backend.uploads === 1, { message: 'the slow upload to arrive' });
    controller.abort();
    await assert.rejects(pending);
    await eventually(() => backend.has(uuid(60)), { message: 'the slow upload to be stored' });
    assert.equal((await post(backend, [uuid(60)])).status, 202);
    assert.equal(backend.duplicates, 1);
    assert.equal(backend.answers.get('gone'), 1);
  });
});

describe('fault harness: load sender', () => {
  let server: ReturnType<typeof createServer>;
  let url: string;
  let count = 0;
  const bodies: { contentType: string; body: Buffer }[] = [];

  before(async () => {
    // Answers in turn 200, 503 with Retry-After, 429 without, 500.
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        bodies.push({ contentType: String(request.headers['content-type']), body: Buffer.concat(chunks) });
        const turn = count++ % 4;
        if (turn === 0) response.writeHead(200).end();
        else if (turn === 1) response.writeHead(503, { 'retry-after': '5' }).end();
        else if (turn === 2) response.writeHead(429).end();
        else response.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('the run id of each span is the one the genai processor derives from its trace id', () => {
    for (const encoding of ['protobuf', 'json'] as const) {
      const request = genAiRequest(5, encoding);
      const body = typeof request.body === 'string' ? Buffer.from(request.body) : Buffer.from(request.body);
      const decoded = encoding === 'json' ? decodeTraceRequestJson(body) : decodeTraceRequestProtobuf(body);
      const spans = decoded.batch.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
      assert.equal(spans.length, 5);
      assert.deepEqual(
        spans.map((span) => idToUuid(span.traceId)),
        request.runIds,
      );
      assert.ok(
        spans.every((span) => span.parentSpanId === ''),
        'every span is a root, so its run id is its trace UUID',
      );
    }
  });

  it('sends a bounded number of requests and sorts them into acknowledged, refused and failed', async () => {
    count = 0;
    const sender = new LoadSender({ url, spansPerRequest: 10, maxRequests: 8, concurrency: 1 }).start();
    const summary = await sender.done;
    assert.equal(summary.requests, 8);
    assert.equal(summary.ackedRequests, 2);
    assert.equal(sender.acked.size, 20);
    assert.deepEqual(summary.refusedByStatus, { '503': 2, '429': 2 });
    assert.equal(summary.refusedWithoutRetryAfter, 2);
    assert.deepEqual(summary.failures, { '500': 2 });
    const acked = sender.records.filter((r) => r.outcome === 'acked').flatMap((r) => r.runIds);
    assert.deepEqual(new Set(acked), sender.acked);
  });

  it('a retrying sender sends a refused request again, the same spans, until it gets another answer', async () => {
    count = 0;
    const sender = new LoadSender({
      url,
      spansPerRequest: 10,
      maxRequests: 2,
      concurrency: 1,
      retryRefusedAfterMs: 10,
    }).start();
    const summary = await sender.done;
    // Request 0: 200. Request 1: 503, 429, then 500 (failed, not retried).
    assert.deepEqual(
      sender.records.map((r) => [r.index, r.status]),
      [
        [0, 200],
        [1, 503],
        [1, 429],
        [1, 500],
      ],
    );
    assert.equal(new Set(sender.records.filter((r) => r.index === 1).map((r) => r.runIds.join())).size, 1);
    assert.equal(summary.ackedSpans, 10);
  });

  it('counts connection errors as failed, never as acknowledged', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const sender = new LoadSender({
      url: `http://127.0.0.1:${port}/v1/traces`,
      spansPerRequest: 10,
      maxRequests: 3,
      concurrency: 2,
    }).start();
    const summary = await sender.done;
    assert.equal(summary.failedRequests, 3);
    assert.equal(sender.acked.size, 0);
  });
});

describe('fault harness: config variants', () => {
  const lab = new FaultLab();
  after(() => lab.cleanup());

  it('proxy.yaml without the journal and without the disk queue is a valid config', async () => {
    const dir = await lab.tempDir();
    const path = proxyConfigVariant(dir, { journal: false, persistentQueue: false });
    const text = (await import('node:fs')).readFileSync(path, 'utf8');
    assert.doesNotMatch(text, /journal:/);
    assert.match(text, /persistent_queue:\s*\n\s*enabled: false/);
    const { code, stdout, stderr } = await runGroup(
      process.execPath,
      ['bin/tracepipe.js', 'validate', '--config', path],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, DATA_DIR: dir },
      },
    );
    assert.equal(code, 0, stderr);
    assert.match(stdout, /valid/);
  });
});
