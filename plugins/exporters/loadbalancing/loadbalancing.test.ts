import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import {
  validateAgainst,
  Sink,
  nopHost,
  nopSettings,
  runComponentConformance,
  eventually,
  metricValue,
  makeBatch,
  makeSpan,
  makeSpanBatch,
  stringAttr,
  OtlpHttpServer,
} from 'tracepipe/testing';
import type { Span, SpanBatch } from 'tracepipe/plugin';
import type { LoadBalancingExporterConfig } from './config.ts';
import { LoadBalancingExporter } from './exporter.ts';
import type { LookupFunction } from './internal/resolver.ts';
import { loadBalancingExporterFactory } from './index.ts';

runComponentConformance(loadBalancingExporterFactory, {
  testdataDir: join(import.meta.dirname, 'testdata'),
  config: {
    resolver: { static: { hostnames: ['127.0.0.1:9'] } },
    protocol: { otlp: { retry_on_failure: { max_retries: 0 }, persistent_queue: { enabled: false } } },
  },
  sample: () => makeSpanBatch(2),
});

let workDir: string;
before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'tp-lb-'));
});
after(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** A second-tier stand-in: a plain OTLP/HTTP endpoint, recording what it is sent across restarts. */
class Endpoint {
  readonly sink = new Sink<'spans'>();
  server?: OtlpHttpServer;
  port = 0;
  constructor(readonly host = '127.0.0.1') {}

  async start(port = this.port): Promise<this> {
    this.server = await new OtlpHttpServer({ host: this.host, port, sink: this.sink }).listen();
    this.port = this.server.port;
    return this;
  }

  async stop(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
  }

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  spans(): { span: Span; apiKey?: string; project: string }[] {
    return this.sink.batches.flatMap(({ data, context }) =>
      data.resourceSpans.flatMap((r) =>
        r.scopeSpans.flatMap((s) =>
          s.spans.map((span) => ({
            span,
            project: context.project,
            ...(context.apiKey ? { apiKey: context.apiKey } : {}),
          })),
        ),
      ),
    );
  }
}

const endpoints: Endpoint[] = [];
const exporters: LoadBalancingExporter[] = [];
afterEach(async () => {
  for (const exporter of exporters.splice(0)) await exporter.shutdown(Date.now() + 2000);
  for (const endpoint of endpoints.splice(0)) await endpoint.stop();
});

async function startEndpoints(count: number, hosts?: string[], port = 0): Promise<Endpoint[]> {
  const list: Endpoint[] = [];
  for (let i = 0; i < count; i++) {
    const endpoint = await new Endpoint(hosts?.[i] ?? '127.0.0.1').start(port);
    list.push(endpoint);
    endpoints.push(endpoint);
  }
  return list;
}

function createExporter(
  config: Record<string, unknown>,
  lookup?: LookupFunction,
): { exporter: LoadBalancingExporter; metrics: Registry } {
  const full = structuredClone(config);
  assert.deepEqual(validateAgainst(loadBalancingExporterFactory.configSchema, full, 'loadbalancing'), []);
  const host = nopHost({ resolvePath: (path) => resolve(workDir, path) });
  const exporter = new LoadBalancingExporter(
    nopSettings('exporter', 'loadbalancing', host),
    full as unknown as LoadBalancingExporterConfig,
    lookup ? { lookup } : {},
  );
  exporters.push(exporter);
  return { exporter, metrics: host.metrics };
}

function fastOtlp(extra: Record<string, unknown> = {}) {
  return {
    retry_on_failure: { max_retries: 1, initial_backoff_ms: 5, max_backoff_ms: 20 },
    persistent_queue: { enabled: true, directory: `queue-${randomBytes(4).toString('hex')}`, replay_interval_ms: 50 },
    ...extra,
  };
}

/** `traces` traces of a root and `children` children each, as separate spans (children listed first). */
function makeTraces(traces: number, children: number): Span[][] {
  return Array.from({ length: traces }, () => {
    const root = makeSpan();
    const kids = Array.from({ length: children }, () => makeSpan({ traceId: root.traceId, parentSpanId: root.spanId }));
    return [...kids, root];
  });
}

const batchOf = (spans: Span[]): SpanBatch =>
  makeBatch(spans, { resource: [stringAttr('service.name', 'svc')], scope: { name: 't', version: '1' } });

/** Which endpoint received each span id; fails on a span received by two endpoints. */
function owners(list: Endpoint[]): Map<string, number> {
  const byTrace = new Map<string, number>();
  list.forEach((endpoint, index) => {
    for (const { span } of endpoint.spans()) {
      const seen = byTrace.get(span.traceId);
      assert.ok(seen === undefined || seen === index, `trace ${span.traceId} split between endpoints`);
      byTrace.set(span.traceId, index);
    }
  });
  return byTrace;
}

describe('loadbalancing exporter → OTLP/HTTP endpoints', () => {
  it('sends every span of a trace to one endpoint, whichever request it came in', async () => {
    const list = await startEndpoints(3);
    const { exporter } = createExporter({
      resolver: { static: { hostnames: list.map((e) => e.address) } },
      protocol: { otlp: fastOtlp() },
    });
    await exporter.start(new AbortController().signal);
    const traces = makeTraces(60, 3);
    // Each request carries one span of many traces: a trace's spans arrive in 4 requests, children first.
    for (let round = 0; round < 4; round++) {
      await exporter.consume(batchOf(traces.map((spans) => spans[round]!)), { project: 'p', apiKey: 'k' });
    }
    await eventually(() => list.reduce((n, e) => n + e.spans().length, 0) === 240);
    const byTrace = owners(list);
    assert.equal(byTrace.size, 60);
    for (const [index] of list.entries()) assert.ok([...byTrace.values()].includes(index), `endpoint ${index} unused`);
  });

  it('keeps tenants apart: each request reaches its endpoint with its own key and project', async () => {
    const list = await startEndpoints(2);
    const { exporter } = createExporter({
      resolver: { static: { hostnames: list.map((e) => e.address).join(',') } },
      protocol: { otlp: fastOtlp({ encoding: 'json' }) },
    });
    await exporter.start(new AbortController().signal);
    const tenants = [
      { apiKey: 'key-a', project: 'project-a' },
      { apiKey: 'key-b', project: 'project-b' },
      { project: 'project-c' },
    ];
    const sent = new Map<string, (typeof tenants)[number]>();
    for (let i = 0; i < 30; i++) {
      const tenant = tenants[i % 3]!;
      const batch = batchOf(makeTraces(4, 1).flat());
      for (const r of batch.resourceSpans)
        for (const s of r.scopeSpans) for (const span of s.spans) sent.set(span.spanId, tenant);
      await exporter.consume(batch, tenant);
    }
    await eventually(() => list.reduce((n, e) => n + e.spans().length, 0) === sent.size);
    for (const endpoint of list) {
      for (const { span, apiKey, project } of endpoint.spans()) {
        const tenant = sent.get(span.spanId)!;
        assert.equal(project, tenant.project);
        assert.equal(apiKey, tenant.apiKey);
      }
    }
  });

  it('keeps an endpoint’s spans on disk while it is down and delivers them when it is back; the others go on', async () => {
    const list = await startEndpoints(2);
    const { exporter, metrics } = createExporter({
      resolver: { static: { hostnames: list.map((e) => e.address) } },
      protocol: { otlp: fastOtlp() },
    });
    await exporter.start(new AbortController().signal);
    const downPort = list[1]!.port;
    await list[1]!.stop();
    const traces = makeTraces(40, 1);
    for (const spans of traces) await exporter.consume(batchOf(spans), { project: 'p' });
    // The live endpoint gets its share while the other is down.
    const ring = exporter.endpoints;
    assert.equal(ring.length, 2);
    await eventually(
      async () => (await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' })) > 0,
    );
    assert.ok(list[0]!.spans().length > 0);
    await list[1]!.start(downPort);
    await eventually(() => list[0]!.spans().length + list[1]!.spans().length === 80);
    owners(list);
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total'), 0);
  });

  it('with DNS, rebalances when the addresses change and routes a removed endpoint’s queued spans again', async () => {
    // Three loopback addresses on one port, as a headless service gives one port on many pod IPs.
    const [first] = await startEndpoints(1, ['127.0.0.1']);
    const port = first!.port;
    const rest = await startEndpoints(2, ['127.0.0.2', '127.0.0.3'], port);
    const list = [first!, ...rest];
    let answer = ['127.0.0.1', '127.0.0.2'];
    let lookups = 0;
    const lookup: LookupFunction = async (hostname) => {
      assert.equal(hostname, 'proxies.test');
      lookups++;
      return answer;
    };
    const { exporter, metrics } = createExporter(
      {
        resolver: { dns: { hostname: 'proxies.test', port, interval: '100ms' } },
        protocol: { otlp: fastOtlp() },
      },
      lookup,
    );
    await exporter.start(new AbortController().signal);
    assert.deepEqual(exporter.endpoints, [`127.0.0.1:${port}`, `127.0.0.2:${port}`]);

    answer = ['127.0.0.3', '127.0.0.2', '127.0.0.1'];
    await eventually(() => exporter.endpoints.length === 3);
    for (const spans of makeTraces(60, 1)) await exporter.consume(batchOf(spans), { project: 'p' });
    await eventually(() => list.reduce((n, e) => n + e.spans().length, 0) === 120);
    assert.ok(list[2]!.spans().length > 0, 'the added endpoint takes traces');

    // 127.0.0.2 goes down with spans queued for it, then leaves the answer: its spans move on.
    await list[1]!.stop();
    const before = list[1]!.spans().length;
    const late = makeTraces(60, 1);
    for (const spans of late) await exporter.consume(batchOf(spans), { project: 'p' });
    await eventually(
      async () => (await metricValue(metrics, 'tracepipe_exporter_queue_batches', { queue: 'disk' })) > 0,
    );
    answer = ['127.0.0.1', '127.0.0.3'];
    await eventually(() => exporter.endpoints.length === 2);
    await eventually(() => list[0]!.spans().length + list[2]!.spans().length + before === 240);
    assert.ok((await metricValue(metrics, 'tracepipe_loadbalancing_exporter_rerouted_spans_total')) > 0);
    assert.equal(await metricValue(metrics, 'tracepipe_component_items_dropped_total'), 0);
    // Every late trace is whole at one endpoint.
    const lateIds = new Set(late.map((spans) => spans[0]!.traceId));
    const seen = new Map<string, number>();
    for (const [index, endpoint] of [list[0]!, list[2]!].entries())
      for (const { span } of endpoint.spans())
        if (lateIds.has(span.traceId)) {
          assert.ok(seen.get(span.traceId) === undefined || seen.get(span.traceId) === index);
          seen.set(span.traceId, index);
        }
    assert.equal(seen.size, 60);

    // A failing lookup keeps the endpoints known so far.
    answer = [];
    const count = lookups;
    await eventually(() => lookups > count + 2);
    assert.equal(exporter.endpoints.length, 2);
    assert.ok(
      (await metricValue(metrics, 'tracepipe_loadbalancing_exporter_resolutions_total', { outcome: 'failure' })) > 0,
    );
    // The removed endpoint's queue directory is gone once empty.
    const queueDirs = await readdir(
      join(
        workDir,
        (await readdir(workDir)).find((n) => n.startsWith('queue-'))!,
      ),
    );
    assert.ok(!queueDirs.includes(`127.0.0.2_${port}`), `${queueDirs.join(', ')}`);
  });

  it('refuses spans (retryable) while no endpoint is known', async () => {
    const { exporter } = createExporter(
      { resolver: { dns: { hostname: 'nowhere.test', interval: '100ms' } }, protocol: { otlp: fastOtlp() } },
      async () => {
        throw Object.assign(new Error('queryA ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' });
      },
    );
    await exporter.start(new AbortController().signal);
    await assert.rejects(exporter.consume(makeSpanBatch(1), { project: 'p' }), /no endpoint/);
  });
});
