import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
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
  captureLogs,
  metricValue,
  makeRun,
  makeRuns,
} from 'tracepipe/testing';
import type { Exporter } from 'tracepipe/plugin';
import { Delivery, ThrottleError } from 'tracepipe/plugin';
import { BackendStub } from './testing/backend_stub.ts';
import type { LogLine } from 'tracepipe/testing';
import type { BackendExporterConfig } from './config.ts';
import { backendExporterFactory } from './index.ts';

const testdataDir = join(import.meta.dirname, 'testdata');
let conformanceDir: string;
before(async () => {
  conformanceDir = await mkdtemp(join(tmpdir(), 'tp-backend-conf-'));
});
after(async () => {
  await rm(conformanceDir, { recursive: true, force: true });
});

runComponentConformance(backendExporterFactory, {
  testdataDir,
  // Nothing listens on port 9 of loopback: the sample batch fails fast and goes to disk.
  config: () => ({
    endpoint: 'http://127.0.0.1:9',
    retry_on_failure: { max_retries: 0 },
    persistent_queue: { directory: join(conformanceDir, 'queue') },
  }),
  sample: () => ({ runs: [makeRun()] }),
});

interface Harness {
  exporter: Exporter<'runs'>;
  metrics: Registry;
  logs: LogLine[];
  queueDir: string;
}

describe('backend exporter against a real backend stub', () => {
  let stub: BackendStub;
  let url: string;
  let workDir: string;
  const started: Exporter<'runs'>[] = [];

  beforeEach(async () => {
    stub = new BackendStub();
    url = await stub.start();
    workDir = await mkdtemp(join(tmpdir(), 'tp-backend-'));
  });
  afterEach(async () => {
    for (const exporter of started.splice(0)) await exporter.shutdown(Date.now() + 2000);
    await stub.close();
    await rm(workDir, { recursive: true, force: true });
  });

  async function startExporter(overrides: Record<string, unknown> = {}): Promise<Harness> {
    const host = nopHost({ resolvePath: (path) => resolve(workDir, path) });
    const { logger, lines } = captureLogs();
    const settings = nopSettings('exporter', 'backend', host, { logger });
    const config: Record<string, unknown> = {
      endpoint: url,
      timeout_ms: 2000,
      ...overrides,
      retry_on_failure: { initial_backoff_ms: 5, max_backoff_ms: 20, ...(overrides.retry_on_failure as object) },
      persistent_queue: { directory: 'queue', replay_interval_ms: 50, ...(overrides.persistent_queue as object) },
    };
    assert.deepEqual(validateAgainst(backendExporterFactory.configSchema, config, 'backend'), []);
    const exporter = backendExporterFactory.create(settings, config as unknown as BackendExporterConfig);
    await exporter.start(new AbortController().signal);
    started.push(exporter);
    return { exporter, metrics: host.metrics, logs: lines, queueDir: join(workDir, 'queue') };
  }

  const queuedFiles = async (dir: string) => (await readdir(dir)).filter((name) => name.endsWith('.batch'));

  it('uploads each batch as one zstd multipart POST with its tenant key', async () => {
    const { exporter, metrics } = await startExporter({ api_key: 'fallback-key' });
    const a = makeRuns(3);
    const b = makeRuns(2);
    const c = makeRuns(1);
    await exporter.consume({ runs: a }, { project: 'p1', apiKey: 'key-a' });
    await exporter.consume({ runs: b }, { project: 'p2', apiKey: 'key-b' });
    await exporter.consume({ runs: c }, { project: 'p3' });
    await stub.waitFor(() => stub.accepted.size === 6);
    assert.deepEqual(stub.malformed, []);
    assert.equal(stub.requests.length, 3);
    for (const request of stub.requests) {
      assert.equal(request.path, '/runs/multipart');
      assert.equal(request.headers['content-encoding'], 'zstd');
      assert.match(
        String(request.headers['content-type']),
        /^multipart\/form-data; boundary=----LangSmithFormBoundary-/,
      );
    }
    for (const run of a) assert.equal(stub.accepted.get(run.id)!.apiKey, 'key-a');
    for (const run of b) assert.equal(stub.accepted.get(run.id)!.apiKey, 'key-b');
    assert.equal(stub.accepted.get(c[0]!.id)!.apiKey, 'fallback-key');
    for (const run of [...a, ...b, ...c]) assert.deepEqual(stub.accepted.get(run.id)!.run, run);
    // Cross-check the body with an independent multipart parser (undici's, built into Node).
    const form = await new Response(stub.rawBodies[0], {
      headers: { 'content-type': String(stub.requests[0]!.headers['content-type']) },
    }).formData();
    const names = [...form.keys()];
    assert.deepEqual(
      names,
      stub.requests[0]!.runs.flatMap((run) => [`post.${run.id}`, `post.${run.id}.inputs`, `post.${run.id}.outputs`]),
    );
    for (const run of stub.requests[0]!.runs) {
      const { inputs, outputs, ...rest } = run;
      assert.deepEqual(JSON.parse(String(form.get(`post.${run.id}`))), rest);
      assert.deepEqual(JSON.parse(String(form.get(`post.${run.id}.inputs`))), inputs);
      assert.deepEqual(JSON.parse(String(form.get(`post.${run.id}.outputs`))), outputs);
    }
    await exporter.shutdown(Date.now() + 2000);
    assert.equal(await metricValue(metrics, 'tracepipe_backend_batches_sent_total'), 3);
    assert.equal(await metricValue(metrics, 'tracepipe_backend_runs_sent_total'), 6);
    const raw = await metricValue(metrics, 'tracepipe_backend_bytes_sent_total', { encoding: 'raw' });
    const compressed = await metricValue(metrics, 'tracepipe_backend_bytes_sent_total', { encoding: 'compressed' });
    assert.equal(
      raw,
      stub.requests.reduce((sum, r) => sum + r.rawBytes, 0),
    );
    assert.equal(
      compressed,
      stub.requests.reduce((sum, r) => sum + r.compressedBytes, 0),
    );
  });

  it('treats an empty batch as nothing to send', async () => {
    const { exporter } = await startExporter();
    await exporter.consume({ runs: [] }, { project: 'p' });
    await exporter.shutdown(Date.now() + 2000);
    assert.equal(stub.requests.length, 0);
  });

  it('retries 500s and delivers once', async () => {
    stub.answer = (request) => (request.index < 2 ? { status: 500 } : { status: 200 });
    const { exporter, metrics } = await startExporter();
    const runs = makeRuns(4);
    await exporter.consume({ runs }, { project: 'p', apiKey: 'k' });
    await stub.waitFor(() => stub.accepted.size === 4);
    assert.equal(stub.requests.length, 3);
    assert.equal(stub.duplicates, 0);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_retries_total'), 2);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_send_failures_total', { status: '500' }), 2);
  });

  it('waits at least the Retry-After of a 429 before retrying', async () => {
    stub.answer = (request) =>
      request.index === 0 ? { status: 429, headers: { 'Retry-After': '1' } } : { status: 202 };
    const { exporter, metrics } = await startExporter();
    await exporter.consume({ runs: makeRuns(2) }, { project: 'p', apiKey: 'k' });
    await stub.waitFor(() => stub.accepted.size === 2);
    const [first, second] = stub.requests;
    // A lower bound only: the server's delay is a floor for the backoff.
    assert.ok(
      second!.receivedAt - first!.receivedAt >= 950,
      `retried after ${second!.receivedAt - first!.receivedAt} ms`,
    );
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_send_failures_total', { status: '429' }), 1);
  });

  it('honours a Retry-After of an hour only up to max_retry_after_ms', async () => {
    stub.answer = (request) =>
      request.index === 0 ? { status: 429, headers: { 'Retry-After': '3600' } } : { status: 200 };
    const { exporter, metrics } = await startExporter({ retry_on_failure: { max_retry_after_ms: 100 } });
    const runs = makeRuns(3);
    await exporter.consume({ runs }, { project: 'p', apiKey: 'k' });
    // The bound is generous, and far below the hour the backend asked for.
    await stub.waitFor(() => stub.accepted.size === 3, 20_000);
    assert.equal(stub.requests.length, 2);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_send_failures_total', { status: '429' }), 1);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' }), 0);
  });

  it('logs one WARN when the backend starts failing and one INFO when it is back, without keys', async () => {
    let failures = 0;
    stub.answer = () => (failures++ < 10 ? { status: 503 } : { status: 202 });
    const { exporter, logs } = await startExporter({
      retry_on_failure: { max_retries: 20 },
      max_concurrent_uploads: 2,
    });
    for (const apiKey of ['secret-key-1111', 'secret-key-2222', 'secret-key-3333']) {
      await exporter.consume({ runs: makeRuns(2) }, { project: 'p', apiKey });
    }
    await stub.waitFor(() => stub.accepted.size === 6);
    await eventually(() => logs.some((line) => line.msg.includes('destination is back')));
    const warnings = logs.filter((line) => line.level === 40);
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.reason, '503');
    assert.equal(warnings[0]!.endpoint, `${url}/runs/multipart`);
    assert.equal(warnings[0]!.tenants_affected, 3);
    const [back] = logs.filter((line) => line.level === 30 && line.msg.includes('destination is back'));
    assert.deepEqual(back!.delivered_late, { batches: 3, runs: 6 });
    assert.equal(back!.failed_attempts, 10);
    assert.equal(logs.filter((line) => line.level >= 40).length, 1);
    assert.equal(JSON.stringify(logs).includes('secret-key'), false);
  });

  it('settles a delivered batch, and gives one it cannot send or store back to the journal', async () => {
    let down = true;
    stub.answer = () => (down ? { status: 503 } : { status: 202 });
    const { exporter, metrics } = await startExporter({
      retry_on_failure: { max_retries: 0 },
      persistent_queue: { enabled: false },
    });
    const consumeWith = async (durable: boolean) => {
      const state = { settled: false, abandoned: false };
      const delivery = new Delivery(durable, (outcome) => {
        if (outcome === 'settled') state.settled = true;
        else state.abandoned = true;
      });
      await exporter.consume({ runs: makeRuns(2) }, { project: 'p', apiKey: 'k', delivery });
      delivery.release(); // The receiver's own reference, once consume() returned.
      return state;
    };
    const lost = await consumeWith(true);
    // No disk queue and no retries: given up — abandoned to the journal (which delivers it again), not counted.
    await eventually(async () => (await metricValue(metrics, 'tracepipe_exporter_items_left_to_journal_total')) === 2);
    down = false;
    const sent = await consumeWith(true);
    await eventually(() => sent.settled);
    assert.deepEqual(lost, { settled: false, abandoned: true });
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total'), 0);
  });

  it('times out slow answers and retries them', async () => {
    stub.answer = (request) => (request.index === 0 ? { status: 200, delayMs: 1500 } : { status: 200 });
    const { exporter, metrics } = await startExporter({ timeout_ms: 100 });
    const runs = makeRuns(3);
    await exporter.consume({ runs }, { project: 'p', apiKey: 'k' });
    await stub.waitFor(() => stub.accepted.size === 3);
    assert.equal(await metricValue(metrics, 'tracepipe_exporter_send_failures_total', { status: 'timeout' }), 1);
    assert.equal(stub.duplicates, 0);
  });

  it('keeps batches on disk while the backend is down and delivers all of them exactly once when it is back', async () => {
    let down = true;
    stub.answer = () => (down ? { status: 503 } : { status: 202 });
    const { exporter, metrics, queueDir } = await startExporter({ retry_on_failure: { max_retries: 1 } });
    const batches = Array.from({ length: 10 }, () => makeRuns(5));
    for (const runs of batches) await exporter.consume({ runs }, { project: 'p', apiKey: 'k' });
    // Every batch has used its retries and sits on disk.
    await eventually(
      async () => (await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' })) === 10,
    );
    assert.equal((await queuedFiles(queueDir)).length, 10);
    assert.equal(stub.accepted.size, 0);
    down = false;
    await stub.waitFor(() => stub.accepted.size === 50);
    await eventually(async () => (await queuedFiles(queueDir)).length === 0);
    assert.equal(stub.duplicates, 0);
    for (const runs of batches) for (const run of runs) assert.ok(stub.accepted.has(run.id));
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total'), 0);
    await eventually(
      async () => (await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' })) === 0,
    );
  });

  it('logs a refused key once (redacted), keeps its batches, and lets other tenants through', async () => {
    let revoked = true;
    stub.answer = (request) =>
      request.headers['x-api-key'] === 'secret-key-1234' && revoked
        ? { status: 401, body: 'invalid key' }
        : { status: 202 };
    const { exporter, logs, queueDir } = await startExporter();
    const bad = [makeRuns(2), makeRuns(2), makeRuns(2)];
    for (const runs of bad) await exporter.consume({ runs }, { project: 'p', apiKey: 'secret-key-1234' });
    const good = makeRuns(3);
    await exporter.consume({ runs: good }, { project: 'p', apiKey: 'other-key' });
    await stub.waitFor(() => good.every((run) => stub.accepted.has(run.id)));
    await eventually(async () => (await queuedFiles(queueDir)).length === 3);
    // 401 is not retried.
    assert.equal(stub.requests.filter((r) => r.headers['x-api-key'] === 'secret-key-1234').length >= 3, true);
    const authLogs = logs.filter((line) => line.msg.includes('refused this API key'));
    assert.equal(authLogs.length, 1);
    assert.equal(authLogs[0]!.api_key, '…1234');
    assert.equal(JSON.stringify(logs).includes('secret-key-1234'), false);
    revoked = false;
    await stub.waitFor(() => stub.accepted.size === 9);
    await eventually(async () => (await queuedFiles(queueDir)).length === 0);
    assert.equal(stub.duplicates, 0);
  });

  it('splits a rejected batch to isolate a bad run, dead-letters it and delivers the rest', async () => {
    stub.answer = (request) =>
      request.runs.some((run) => run.name === 'poison')
        ? { status: 422, body: '{"detail":"post.x.session_id: invalid"}' }
        : { status: 202 };
    const { exporter, metrics, queueDir } = await startExporter();
    const runs = makeRuns(7);
    runs.splice(4, 0, makeRun({ name: 'poison' }));
    await exporter.consume({ runs }, { project: 'p', apiKey: 'k' });
    await stub.waitFor(() => stub.accepted.size === 7);
    await eventually(
      async () => (await metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'rejected' })) === 1,
    );
    const deadLetters = (await readFile(join(queueDir, 'dead-letter.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(deadLetters.length, 1);
    assert.equal(deadLetters[0].run.name, 'poison');
    assert.equal(deadLetters[0].status, 422);
    assert.equal(stub.duplicates, 0);
  });

  it('splits a batch read back from disk when the backend rejects it on replay', async () => {
    let phase: 'down' | 'strict' = 'down';
    stub.answer = (request) => {
      if (phase === 'down') return { status: 503 };
      return request.runs.some((run) => run.name === 'poison') ? { status: 400 } : { status: 202 };
    };
    const { exporter, metrics, queueDir } = await startExporter({ retry_on_failure: { max_retries: 0 } });
    const runs = [...makeRuns(3), makeRun({ name: 'poison' }), ...makeRuns(2)];
    await exporter.consume({ runs }, { project: 'p', apiKey: 'k' });
    await eventually(async () => (await queuedFiles(queueDir)).length === 1);
    phase = 'strict';
    await stub.waitFor(() => stub.accepted.size === 5);
    await eventually(async () => (await queuedFiles(queueDir)).length === 0);
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'rejected' }), 1);
    for (const run of runs) if (run.name !== 'poison') assert.deepEqual(stub.accepted.get(run.id)!.run, run);
  });

  it('sets aside an unreadable queue file at start, counted, and sends the rest', async () => {
    stub.answer = () => ({ status: 503 });
    const first = await startExporter({ retry_on_failure: { max_retries: 0 } });
    await first.exporter.consume({ runs: makeRuns(2) }, { project: 'p', apiKey: 'k' });
    await first.exporter.consume({ runs: makeRuns(3) }, { project: 'p', apiKey: 'k' });
    await eventually(async () => (await queuedFiles(first.queueDir)).length === 2);
    await first.exporter.shutdown(Date.now() + 2000);
    const [oldest] = (await queuedFiles(first.queueDir)).sort();
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(first.queueDir, oldest!), 'TPQ1 garbage');
    stub.answer = () => ({ status: 202 });
    const second = await startExporter();
    await stub.waitFor(() => stub.accepted.size === 3);
    assert.ok((await readdir(second.queueDir)).includes(`${oldest}.corrupt`));
    assert.ok(second.logs.some((line) => line.level === 50 && String(line.msg).includes('set aside')));
  });

  it('drops the oldest queued batches at the disk cap, counted and logged', async () => {
    stub.answer = () => ({ status: 503 });
    const { exporter, metrics, logs } = await startExporter({
      retry_on_failure: { max_retries: 0 },
      persistent_queue: { max_bytes: 4096, replay_interval_ms: 60_000 },
      compression_level: 1,
    });
    // Random payloads do not compress: each batch is about 1.5 KiB on disk.
    const batch = () => makeRuns(1).map((run) => ({ ...run, inputs: { blob: randomText(1400) } }));
    for (let i = 0; i < 5; i++) await exporter.consume({ runs: batch() }, { project: 'p', apiKey: 'k' });
    await eventually(
      async () =>
        (await metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'disk_queue_full' })) >= 1,
    );
    await exporter.shutdown(Date.now() + 2000);
    const dropped = await metricValue(metrics, 'tracepipe_component_items_dropped_total', {
      reason: 'disk_queue_full',
    });
    const kept = await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' });
    assert.equal(dropped + kept, 5);
    assert.ok((await metricValue(metrics, 'tracepipe_exporter_disk_queue_bytes')) <= 4096);
    assert.ok(logs.some((line) => line.level === 50 && line.msg.includes('on-disk queue is full')));
  });

  it('refuses with ThrottleError when the sending queue is full', async () => {
    stub.answer = () => ({ status: 200, delayMs: 300 });
    const { exporter } = await startExporter({ max_concurrent_uploads: 1, sending_queue: { queue_size: 1 } });
    await exporter.consume({ runs: makeRuns(1) }, { project: 'p' });
    await exporter.consume({ runs: makeRuns(1) }, { project: 'p' });
    await assert.rejects(exporter.consume({ runs: makeRuns(1) }, { project: 'p' }), ThrottleError);
    await stub.waitFor(() => stub.accepted.size === 2);
  });

  it('at shutdown, sends what it can and persists the rest; a restart delivers it', async () => {
    stub.answer = () => ({ status: 503 });
    const first = await startExporter({
      retry_on_failure: { max_retries: 100, initial_backoff_ms: 50, max_backoff_ms: 50 },
    });
    const runs = Array.from({ length: 6 }, () => makeRuns(3));
    for (const batch of runs) await first.exporter.consume({ runs: batch }, { project: 'p', apiKey: 'k' });
    await first.exporter.shutdown(Date.now() + 500);
    await assert.rejects(first.exporter.consume({ runs: makeRuns(1) }, { project: 'p' }));
    assert.equal((await queuedFiles(first.queueDir)).length, 6);
    assert.equal(await metricValue(first.metrics, 'tracepipe_component_items_dropped_total'), 0);

    stub.answer = () => ({ status: 202 });
    const second = await startExporter();
    await stub.waitFor(() => stub.accepted.size === 18);
    await eventually(async () => (await queuedFiles(second.queueDir)).length === 0);
    assert.equal(stub.duplicates, 0);
  });

  it('without an on-disk queue, counts and logs what it cannot send', async () => {
    stub.answer = () => ({ status: 503 });
    const { exporter, metrics, logs } = await startExporter({
      retry_on_failure: { max_retries: 1 },
      persistent_queue: { enabled: false },
    });
    await exporter.consume({ runs: makeRuns(4) }, { project: 'p' });
    await eventually(
      async () =>
        (await metricValue(metrics, 'tracepipe_component_items_dropped_total', { reason: 'retries_exhausted' })) === 4,
    );
    assert.ok(logs.some((line) => line.level === 50 && line.runs === 4));
  });
});

function randomText(length: number): string {
  let text = '';
  while (text.length < length) text += Math.random().toString(36).slice(2);
  return text.slice(0, length);
}
