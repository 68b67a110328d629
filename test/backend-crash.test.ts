// The on-disk queue survives `kill -9`: the real CLI runs the proxy pipeline (otlp → genai → batch
// → backend) against a backend that is down, is killed while batches sit on disk, and a restart
// against the recovered backend delivers every run exactly once.

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { BackendStub } from '../plugins/exporters/backend/testing/backend_stub.ts';
import { eventually } from '../src/testkit/eventually.ts';
import { spawnGroup } from '../src/testkit/processes.ts';

const root = join(import.meta.dirname, '..');

interface Proxy {
  child: ChildProcess;
  port: number;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];

async function startProxy(configPath: string): Promise<Proxy> {
  const { child } = spawnGroup(process.execPath, [join(root, 'bin/tracepipe.js'), '--config', configPath], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error('the proxy did not start')), 30_000);
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; address?: string };
        if (entry.msg === 'Receiving OTLP traces.' && entry.address) {
          clearTimeout(timer);
          resolve(Number(entry.address.slice(entry.address.lastIndexOf(':') + 1)));
        }
      } catch {
        // Not a JSON log line.
      }
    });
    child.once('exit', () => reject(new Error('the proxy exited during start-up')));
  });
  return { child, port, exited };
}

/** One OTLP/JSON request of root GenAI spans, each its own trace. Returns the trace ids. */
function otlpRequest(count: number): { body: string; traceIds: string[] } {
  const traceIds: string[] = [];
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = Array.from({ length: count }, (_, i) => {
    const traceId = randomBytes(16).toString('hex');
    traceIds.push(traceId);
    return {
      traceId,
      spanId: randomBytes(8).toString('hex'),
      name: `chat ${i}`,
      kind: 3,
      startTimeUnixNano: String(now),
      endTimeUnixNano: String(now + 1_000_000n),
      attributes: [
        { key: 'gen_ai.system', value: { stringValue: 'openai' } },
        { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o-mini' } },
        { key: 'gen_ai.prompt', value: { stringValue: JSON.stringify([{ role: 'user', content: `question ${i}` }]) } },
      ],
      status: {},
    };
  });
  const body = JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'crash-test' } }] },
        scopeSpans: [{ scope: { name: 'test' }, spans }],
      },
    ],
  });
  return { body, traceIds };
}

/** The run id the translator gives a root span: the UUID text of its trace id. */
function uuidOf(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

describe('backend exporter: kill -9 with batches queued on disk', () => {
  let stub: BackendStub;
  let dir: string;
  let configPath: string;
  let proxy: Proxy;

  before(async () => {
    stub = new BackendStub();
    const endpoint = await stub.start();
    dir = await mkdtemp(join(tmpdir(), 'tp-crash-'));
    configPath = join(dir, 'proxy.yaml');
    await writeFile(
      configPath,
      [
        'receivers:',
        '  otlp: { host: 127.0.0.1, port: 0, api_key: tenant-key-0001 }',
        'processors:',
        '  genai: {}',
        '  batch: { batch_size: 10, flush_interval_ms: 50 }',
        'exporters:',
        '  backend:',
        `    endpoint: ${endpoint}`,
        '    retry_on_failure: { max_retries: 0 }',
        '    persistent_queue: { directory: ./queue, replay_interval_ms: 100 }',
        'service:',
        '  telemetry: { logs: { level: info, format: json } }',
        '  pipelines:',
        '    traces: { receivers: [otlp], processors: [genai, batch], exporters: [backend] }',
        '',
      ].join('\n'),
    );
  });

  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await stub.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('delivers every queued run after a restart, exactly once', async () => {
    const queueDir = join(dir, 'queue');
    const queued = async () =>
      (await readdir(queueDir).catch(() => [] as string[])).filter((n) => n.endsWith('.batch')).length;
    stub.answer = () => ({ status: 503 });
    proxy = await startProxy(configPath);
    const expected: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { body, traceIds } = otlpRequest(12);
      const response = await fetch(`http://127.0.0.1:${proxy.port}/v1/traces`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      assert.ok(response.ok, `ingest answered ${response.status}`);
      expected.push(...traceIds.map(uuidOf));
    }
    // Every run was offered to the backend once (and refused), and each refused batch is on disk.
    await eventually(
      () => new Set(stub.requests.flatMap((r) => r.runs.map((run) => run.id))).size === expected.length,
      {
        timeoutMs: 30_000,
      },
    );
    // Replays re-send the same bodies, so count distinct batches, not requests.
    const batches = () => new Set(stub.requests.map((r) => r.runs.map((run) => run.id).join())).size;
    await eventually(async () => (await queued()) === batches(), { timeoutMs: 30_000 });
    proxy.child.kill('SIGKILL');
    assert.equal(await proxy.exited, null);
    assert.equal(stub.accepted.size, 0);

    stub.answer = () => ({ status: 202 });
    proxy = await startProxy(configPath);
    await stub.waitFor(() => stub.accepted.size === expected.length, 30_000);
    for (const id of expected) assert.ok(stub.accepted.has(id), `run ${id} arrived`);
    assert.equal(stub.duplicates, 0);
    for (const { apiKey } of stub.accepted.values()) assert.equal(apiKey, 'tenant-key-0001');
    await eventually(async () => (await queued()) === 0, { timeoutMs: 30_000 });
    proxy.child.kill('SIGTERM');
    assert.equal(await proxy.exited, 0);
  });

  it('on SIGTERM, flushes what the batcher holds to the backend, and what it cannot send to disk', async () => {
    const queueDir = join(dir, 'queue');
    const queued = async () =>
      (await readdir(queueDir).catch(() => [] as string[])).filter((n) => n.endsWith('.batch')).length;
    // A flush interval far longer than the test: only the shutdown flush can send these runs.
    const slowConfig = join(dir, 'slow.yaml');
    const { readFile } = await import('node:fs/promises');
    await writeFile(
      slowConfig,
      (await readFile(configPath, 'utf8'))
        .replace('flush_interval_ms: 50', 'flush_interval_ms: 600000')
        .replace('batch_size: 10', 'batch_size: 1000'),
    );
    stub.accepted.clear();
    stub.answer = () => ({ status: 202 });
    proxy = await startProxy(slowConfig);
    const { body, traceIds } = otlpRequest(20);
    const response = await fetch(`http://127.0.0.1:${proxy.port}/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    assert.ok(response.ok);
    assert.equal(stub.accepted.size, 0);
    proxy.child.kill('SIGTERM');
    assert.equal(await proxy.exited, 0);
    for (const id of traceIds.map(uuidOf)) assert.ok(stub.accepted.has(id));

    // The same with the backend down: the runs end up on disk instead of being lost.
    stub.answer = () => ({ status: 503 });
    proxy = await startProxy(slowConfig);
    const second = otlpRequest(20);
    const again = await fetch(`http://127.0.0.1:${proxy.port}/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: second.body,
    });
    assert.ok(again.ok);
    proxy.child.kill('SIGTERM');
    assert.equal(await proxy.exited, 0);
    assert.equal(await queued(), 1);
  });
});
