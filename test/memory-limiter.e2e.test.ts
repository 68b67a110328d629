// The memory limiter in a real proxy: `tracepipe --config configs/proxy.yaml`, its limit set as a
// user sets it (MEMORY_LIMITER_LIMIT_MIB, and `--set` for what has no variable), uploading to the
// backend stub. Memory the pipeline holds for real — spans whose parent has not arrived, each
// carrying 1 MiB of input, waiting in the batcher for `orphan_timeout_ms` — takes the RSS over the
// soft limit. Every way in then answers with its retryable refusal: OTLP/HTTP 429 with
// Retry-After, OTLP/gRPC RESOURCE_EXHAUSTED, the LangSmith ingest 429 (its pipeline shares the
// check). Once the batcher gives up waiting for the parents and uploads the orphans, a forced
// collection brings the RSS back under the limit, data is accepted again, and the backend has
// received every span the proxy acknowledged, and nothing else. Nothing is timed: the test waits
// for each state.

import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { BackendStub } from '../plugins/exporters/backend/testing/backend_stub.ts';
import { rawExport } from '../plugins/receivers/otlp/testing/grpc-client.ts';
import { encodeTraceRequestProtobuf } from '../src/otlp/encode.ts';
import { eventually } from '../src/testkit/eventually.ts';
import { spawnGroup } from '../src/testkit/processes.ts';
import type { GroupProcess } from '../src/testkit/processes.ts';
import { makeBatch, plainSpan } from '../src/testkit/spans.ts';
import { tempDir } from './helpers.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const MiB = 1024 * 1024;
/** The hard limit; the soft one is SPIKE_MIB below it. Far above an idle proxy (about 100 MiB). */
const LIMIT_MIB = 400;
const SPIKE_MIB = 100;
const SPANS_PER_REQUEST = 10;
/** Enough orphans to pass the soft limit several times over, should RSS grow slowly. */
const MAX_REQUESTS = 100;

interface LogLine {
  level: number;
  msg: string;
  address?: string;
}

interface Proxy {
  readonly process: GroupProcess;
  readonly httpPort: number;
  readonly grpcPort: number;
  readonly langsmithPort: number;
  readonly logs: LogLine[];
}

async function startProxy(env: Record<string, string>, sets: string[]): Promise<Proxy> {
  const proxy = spawnGroup(
    process.execPath,
    [
      join(root, 'bin/tracepipe.js'),
      '--config',
      join(root, 'configs/proxy.yaml'),
      ...sets.flatMap((set) => ['--set', set]),
    ],
    {
      env: { ...process.env, HTTP_HOST: '127.0.0.1', GRPC_HOST: '127.0.0.1', LANGSMITH_HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  proxy.child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  const logs: LogLine[] = [];
  const ports = await new Promise<{ http: number; grpc: number; langsmith: number }>((resolve, reject) => {
    const found: Record<string, number> = {};
    const portOf = (line: LogLine) => Number(line.address!.slice(line.address!.lastIndexOf(':') + 1));
    // Reads every line to the end: a child writing to a full pipe would block.
    createInterface({ input: proxy.child.stdout }).on('line', (text) => {
      if (!text.startsWith('{')) return;
      const line = JSON.parse(text) as LogLine;
      logs.push(line);
      if (line.msg === 'Receiving OTLP traces.') found.http = portOf(line);
      if (line.msg === 'Receiving OTLP traces over gRPC.') found.grpc = portOf(line);
      if (line.msg === 'Receiving LangSmith SDK runs.') found.langsmith = portOf(line);
      if (found.http && found.grpc && found.langsmith)
        resolve({ http: found.http, grpc: found.grpc, langsmith: found.langsmith });
    });
    void proxy.exited.then((code) => reject(new Error(`the proxy exited with ${code}: ${stderr}`)));
  });
  return { process: proxy, httpPort: ports.http, grpcPort: ports.grpc, langsmithPort: ports.langsmith, logs };
}

/** The proxy's resident memory, in MiB, for the messages of failed assertions. */
function rssMib(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(match?.[1]) / 1024);
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * Spans whose parent never arrives, one trace each, named so that the backend's runs can be told
 * apart; each carries 1 MiB of input of its own (random, so that compression keeps it large).
 */
function orphanRequest(names: string[]): Buffer {
  const spans = names.map((name) =>
    plainSpan({
      traceId: hex(16),
      spanId: hex(8),
      parentSpanId: hex(8),
      name,
      attributes: [
        { key: 'input.value', value: { type: 'string', value: randomBytes(0.75 * MiB).toString('base64') } },
      ],
    }),
  );
  return Buffer.from(encodeTraceRequestProtobuf(makeBatch(spans)));
}

/** One root span of a trace of its own: a small request. */
function smallRequest(name: string): Buffer {
  return Buffer.from(encodeTraceRequestProtobuf(makeBatch([plainSpan({ traceId: hex(16), spanId: hex(8), name })])));
}

async function postOtlp(port: number, body: Buffer) {
  const response = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body,
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
}

/** One OTLP/gRPC Export call; resolves with its status code (0 is OK). */
async function exportGrpc(port: number, body: Buffer): Promise<number> {
  const answer = await rawExport(port, body);
  return answer.ok ? grpc.status.OK : answer.error.code;
}

describe('memory_limiter in the proxy (configs/proxy.yaml): refusing above the soft limit, accepting below it', () => {
  const stub = new BackendStub();
  let proxy: Proxy;

  before(async () => {
    const endpoint = await stub.start();
    proxy = await startProxy(
      {
        SERVICE_ENDPOINT: endpoint,
        SERVICE_API_KEY: 'tenant-key',
        DATA_DIR: tempDir(),
        HTTP_PORT: '0',
        GRPC_PORT: '0',
        LANGSMITH_PORT: '0',
        FLUSH_INTERVAL_MS: '100',
        MEMORY_LIMITER_LIMIT_MIB: String(LIMIT_MIB),
        MEMORY_LIMITER_CHECK_INTERVAL_MS: '100',
        // The receivers' own bound on requests held until delivered must not refuse first.
        MEMORY_LIMIT_BYTES: String(4096 * MiB),
      },
      [
        `processors.memory_limiter.spike_limit_mib=${SPIKE_MIB}`,
        'processors.memory_limiter.min_gc_interval_when_soft_limited_ms=1000',
        'processors.memory_limiter.min_gc_interval_when_hard_limited_ms=1000',
        // Orphans wait this long for their parents: the time the memory stays held.
        'processors.batch.orphan_timeout_ms=20000',
        `processors.batch.max_held_bytes=${2048 * MiB}`,
      ],
    );
  });

  after(async () => {
    await proxy?.process.stop('SIGKILL');
    await stub.close();
  });

  it('answers 429 + Retry-After, RESOURCE_EXHAUSTED and delivers every acknowledged span once below', async () => {
    const acknowledged = new Set<string>();
    let refused = 0;
    let refusal: Awaited<ReturnType<typeof postOtlp>> | undefined;
    for (let request = 0; request < MAX_REQUESTS && !refusal; request++) {
      const names = Array.from({ length: SPANS_PER_REQUEST }, (_, i) => `orphan-${request}-${i}`);
      const answer = await postOtlp(proxy.httpPort, orphanRequest(names));
      if (answer.status === 200) for (const name of names) acknowledged.add(name);
      else {
        refusal = answer;
        refused++;
      }
    }
    assert.ok(refusal, `never refused; RSS ${rssMib(proxy.process.child.pid!)} MiB`);

    // OTLP/HTTP: 429, with when to retry, and a body that names the limiter.
    assert.equal(refusal.status, 429, refusal.body);
    assert.ok(Number(refusal.retryAfter) >= 1, `Retry-After: ${refusal.retryAfter}`);
    assert.match(refusal.body, /memory limiter: the process's memory \(\d+ MiB\) is above its soft limit \(300 MiB\)/);
    // Small requests too: the decision is the memory's, not the request's.
    const small = await postOtlp(proxy.httpPort, smallRequest('refused-small'));
    assert.equal(small.status, 429, small.body);
    refused++;
    // OTLP/gRPC: the retryable RESOURCE_EXHAUSTED.
    assert.equal(await exportGrpc(proxy.grpcPort, smallRequest('refused-grpc')), grpc.status.RESOURCE_EXHAUSTED);
    // The LangSmith ingest's pipeline has an instance of its own, deciding on the same check.
    const id = randomUUID();
    const langsmith = await fetch(`http://127.0.0.1:${proxy.langsmithPort}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id,
        trace_id: id,
        name: 'refused-langsmith',
        run_type: 'chain',
        start_time: new Date().toISOString(),
      }),
    });
    assert.equal(langsmith.status, 429, await langsmith.text());
    assert.ok(langsmith.headers.get('retry-after'));
    // Refused before they were journaled and decoded: the limiter, first in the pipeline, was asked.
    const metrics = await (await fetch(`http://127.0.0.1:${proxy.httpPort}/metrics`)).text();
    const early = /tracepipe_receiver_refused_requests_total\{[^}]*reason="pipeline_refusing"[^}]*\} (\d+)/.exec(
      metrics,
    );
    assert.ok(
      early && Number(early[1]) >= 1,
      metrics
        .split('\n')
        .filter((line) => line.includes('refused'))
        .join('\n'),
    );

    // Once the orphans have been uploaded and collected, requests are taken again.
    let accepted = 0;
    await eventually(
      async () => {
        const name = `accepted-${accepted}`;
        const answer = await postOtlp(proxy.httpPort, smallRequest(name));
        if (answer.status === 429) refused++;
        assert.equal(answer.status, 200, `${answer.status}, RSS ${rssMib(proxy.process.child.pid!)} MiB`);
        acknowledged.add(name);
        accepted++;
      },
      { timeoutMs: 180_000, intervalMs: 250 },
    );
    // gRPC too: retried like a client would, since the RSS may still cross the soft limit at a
    // check after the accepted HTTP request (each attempt has a name of its own, so a refused one
    // shows up if it was delivered).
    let grpcAttempts = 0;
    await eventually(
      async () => {
        const name = `accepted-grpc-${grpcAttempts++}`;
        const code = await exportGrpc(proxy.grpcPort, smallRequest(name));
        if (code === grpc.status.RESOURCE_EXHAUSTED) refused++;
        assert.equal(code, grpc.status.OK);
        acknowledged.add(name);
      },
      { timeoutMs: 180_000, intervalMs: 250 },
    );

    // Every acknowledged span reached the backend, once; nothing that was refused did.
    const delivered = () => new Set([...stub.accepted.values()].map(({ run }) => run.name));
    await stub.waitFor(() => [...acknowledged].every((name) => delivered().has(name)), 120_000);
    assert.deepEqual([...delivered()].sort(), [...acknowledged].sort());
    assert.equal(stub.duplicates, 0);

    // One line when refusing started and one when it stopped, not one per request.
    const started = proxy.logs.filter((line) => line.msg.startsWith('Memory is above the soft limit'));
    const stopped = proxy.logs.filter((line) => line.msg.startsWith('Memory is below the soft limit again'));
    assert.ok(started.length >= 1 && stopped.length >= 1, JSON.stringify({ started, stopped }));
    assert.ok(started.length < refused, `${started.length} log lines for ${refused} refused requests`);
  });
});
