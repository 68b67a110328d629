// The scaled-out proxy as real processes: a gateway (configs/gateway.yaml) routing by trace id to
// three second-tier proxies (configs/proxy.yaml, unchanged), each uploading to its own capture
// backend. Traces arrive in several requests, children before their parents, for two tenants; one
// proxy is killed (kill -9) for a few seconds and started again. Every trace the gateway
// acknowledged must reach one backend whole, with its parent links and its tenant.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { parseDocument } from 'yaml';
import type { Span } from '../src/model/spans.ts';
import { eventually } from '../src/testkit/eventually.ts';
import { encodeTraceRequestProtobuf } from '../src/otlp/encode.ts';
import { intAttr, makeBatch, plainSpan, stringAttr } from '../src/testkit/spans.ts';
import { CaptureBackend } from './support/capture_backend.ts';
import { runIdOfTrace } from './support/otlp_load.ts';
import { ProxyProcess, REPO_ROOT, killAllProxies } from './support/proxy_process.ts';

const TENANTS = [
  { apiKey: 'key-tenant-a', project: 'project-a' },
  { apiKey: 'key-tenant-b', project: 'project-b' },
] as const;

/** A root LLM span and two children, for one tenant. */
interface Trace {
  readonly tenant: (typeof TENANTS)[number];
  readonly traceId: string;
  /** Children first, the root last: the order the spans are sent in. */
  readonly spans: readonly Span[];
}

function makeTrace(tenant: Trace['tenant']): Trace {
  const traceId = randomBytes(16).toString('hex');
  const rootId = randomBytes(8).toString('hex');
  const start = BigInt(Date.now()) * 1_000_000n;
  const llm = (spanId: string, parentSpanId: string, offset: bigint): Span =>
    plainSpan({
      traceId,
      spanId,
      parentSpanId,
      flags: 1,
      name: 'chat gpt-4o-mini',
      kind: 3,
      startTimeUnixNano: start + offset,
      endTimeUnixNano: start + offset + 500_000_000n,
      attributes: [
        stringAttr('gen_ai.system', 'openai'),
        stringAttr('gen_ai.operation.name', 'chat'),
        stringAttr('gen_ai.request.model', 'gpt-4o-mini'),
        intAttr('gen_ai.usage.input_tokens', 12),
      ],
    });
  const root = llm(rootId, '', 0n);
  const children = [1n, 2n].map((i) => llm(randomBytes(8).toString('hex'), rootId, i * 1000n));
  return { tenant, traceId, spans: [...children, root] };
}

/** The run id of a span as the genai processor derives it (a root's is its trace id's). */
function runIdOf(span: Span): string {
  if (!span.parentSpanId) return runIdOfTrace(span.traceId);
  const hex = span.spanId.padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Sends one request: span `round` of each trace (all of one tenant). Resolves to whether it was acknowledged. */
async function send(url: string, traces: readonly Trace[], round: number): Promise<boolean> {
  const tenant = traces[0]!.tenant;
  const body = encodeTraceRequestProtobuf(
    makeBatch(
      traces.map((trace) => trace.spans[round]!),
      { resource: [stringAttr('service.name', 'gateway-e2e')], scope: { name: 'e2e', version: '1' } },
    ),
  );
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-protobuf',
        'x-api-key': tenant.apiKey,
        'service-project': tenant.project,
      },
      body,
      signal: AbortSignal.timeout(15_000),
    });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/** Sends every round of `traces` in groups of `perRequest` traces of one tenant, retrying refused requests. */
async function sendTraces(
  url: string,
  traces: readonly Trace[],
  perRequest: number,
  acked: Set<Trace>,
  pauseMs = 0,
): Promise<void> {
  for (const tenant of TENANTS) {
    const own = traces.filter((trace) => trace.tenant === tenant);
    for (let i = 0; i < own.length; i += perRequest) {
      const group = own.slice(i, i + perRequest);
      let allRounds = true;
      for (let round = 0; round < 3; round++) {
        let ok = false;
        // A client retries what was refused (429/503), a bounded number of times.
        for (let attempt = 0; attempt < 20 && !ok; attempt++) {
          ok = await send(url, group, round);
          if (!ok) await sleep(200);
        }
        if (pauseMs > 0) await sleep(pauseMs);
        allRounds &&= ok;
      }
      if (allRounds) for (const trace of group) acked.add(trace);
    }
  }
}

describe('gateway → three proxies (real processes)', { timeout: 240_000 }, () => {
  let workDir: string;
  const backends: CaptureBackend[] = [];
  const proxies: ProxyProcess[] = [];
  let gateway: ProxyProcess;

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'tp-gateway-'));
    for (let i = 0; i < 3; i++) {
      const backend = new CaptureBackend();
      backend.keepRunDetails = true;
      await backend.start();
      backends.push(backend);
      proxies.push(
        await ProxyProcess.start({
          endpoint: backend.url,
          dataDir: join(workDir, `proxy-${i}`),
          env: { FLUSH_INTERVAL_MS: '200' },
        }),
      );
    }
    // configs/gateway.yaml as shipped, with a short replay interval so the test does not wait 5 s.
    const doc = parseDocument(await readFile(join(REPO_ROOT, 'configs', 'gateway.yaml'), 'utf8'));
    doc.setIn(['exporters', 'loadbalancing', 'protocol', 'otlp', 'persistent_queue', 'replay_interval_ms'], 300);
    const config = join(workDir, 'gateway.yaml');
    await writeFile(config, doc.toString());
    gateway = await ProxyProcess.start({
      endpoint: 'http://127.0.0.1:9',
      config,
      dataDir: join(workDir, 'gateway'),
      env: { PROXY_ENDPOINTS: proxies.map((proxy) => `127.0.0.1:${proxy.port}`).join(',') },
    });
  });

  after(async () => {
    await killAllProxies();
    for (const backend of backends) await backend.close();
    await rm(workDir, { recursive: true, force: true });
  });

  function assertWhole(traces: Iterable<Trace>): void {
    for (const trace of traces) {
      const ids = trace.spans.map(runIdOf);
      const holders = backends.filter((backend) => ids.some((id) => backend.has(id)));
      assert.equal(holders.length, 1, `trace ${trace.traceId} is at ${holders.length} backends`);
      const backend = holders[0]!;
      assert.deepEqual(backend.missing(ids), [], `trace ${trace.traceId} is incomplete`);
      const rootId = runIdOfTrace(trace.traceId);
      const root = backend.details.get(rootId)!;
      assert.equal(root.parentRunId, undefined);
      for (const child of trace.spans.slice(0, 2)) {
        const detail = backend.details.get(runIdOf(child))!;
        assert.equal(detail.parentRunId, rootId, 'the child points at its parent');
        assert.equal(detail.traceId, rootId);
        assert.ok(
          detail.dottedOrder?.startsWith(`${root.dottedOrder}.`),
          `${detail.dottedOrder} under ${root.dottedOrder}`,
        );
      }
      for (const id of ids) {
        assert.equal(backend.details.get(id)!.apiKey, trace.tenant.apiKey, 'uploaded with its own tenant’s key');
        assert.equal(backend.details.get(id)!.project, trace.tenant.project);
      }
    }
  }

  it('routes every span of a trace to one proxy: whole traces, right parents, right tenants', async () => {
    const traces = Array.from({ length: 300 }, (_, i) => makeTrace(TENANTS[i % 2]!));
    const acked = new Set<Trace>();
    await sendTraces(gateway.tracesUrl, traces, 25, acked);
    assert.equal(acked.size, traces.length);
    await waitForAllAcked(acked, 60_000);
    assertWhole(acked);
    for (const backend of backends) assert.ok(backend.distinct > 0, `a backend got nothing: ${backend.summary()}`);
  });

  it('loses nothing acknowledged while one proxy is killed (kill -9) for a few seconds and restarted', async () => {
    const victim = proxies[1]!;
    const port = victim.port;
    const traces = Array.from({ length: 400 }, (_, i) => makeTrace(TENANTS[i % 2]!));
    const acked = new Set<Trace>();
    // About 120 requests, paced so that sending spans the outage.
    const sending = sendTraces(gateway.tracesUrl, traces, 10, acked, 40);
    await sleep(300);
    await victim.kill9();
    await sleep(3000);
    proxies[1] = await victim.restart({ env: { HTTP_PORT: String(port) } });
    await sending;
    assert.ok(acked.size > 0);
    const failures = await gateway.metric('tracepipe_exporter_send_failures_total');
    assert.ok(failures > 0, 'the outage was not seen by the gateway');
    await waitForAllAcked(acked, 90_000);
    assertWhole(acked);
    const dropped = await gateway.metric('tracepipe_component_items_dropped_total');
    assert.equal(dropped, 0, 'the gateway dropped spans');
  });

  async function waitForAllAcked(acked: Set<Trace>, timeoutMs: number): Promise<void> {
    const ids = [...acked].flatMap((trace) => trace.spans.map(runIdOf));
    await eventually(
      () => {
        const missing = ids.filter((id) => !backends.some((backend) => backend.has(id)));
        assert.equal(
          missing.length,
          0,
          `${missing.length} of ${ids.length} acknowledged runs never arrived; ${backends.map((b) => b.summary()).join(' | ')}`,
        );
      },
      { timeoutMs, intervalMs: 100 },
    );
  }
});
