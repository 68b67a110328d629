// End-to-end benchmark of the proxy pipeline (otlp receiver → genai → batch → backend exporter):
// runs the real CLI as a child process with the spec's defaults, sends OTLP/protobuf requests from
// concurrent clients, and measures against a local backend stub:
//   - spans/s end to end (first request sent → last run accepted by the stub),
//   - the proxy's CPU seconds per 100k spans and peak RSS (from /proc, Linux),
//   - the upload compression ratio (raw multipart bytes / zstd bytes),
//   - ingest latency percentiles (request sent → 2xx answer).
//
//   node --import tsx bench/pipeline/proxy.ts [--spans 200000] [--per-request 100] [--clients 8] [--level 3]
//                                             [--profile <dir>]

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { Attribute, Span, SpanBatch } from '../../src/model/spans.ts';
import { encodeTraceRequestProtobuf } from '../../src/otlp/encode.ts';
import { BackendStub } from '../../test/support/backend_stub.ts';

const { values } = parseArgs({
  options: {
    spans: { type: 'string', default: '200000' },
    'per-request': { type: 'string', default: '100' },
    clients: { type: 'string', default: '8' },
    level: { type: 'string', default: '3' },
    /** Write a V8 CPU profile of the proxy into this directory. */
    profile: { type: 'string' },
  },
});
const totalSpans = Number(values.spans);
const perRequest = Number(values['per-request']);
const clients = Number(values.clients);
const level = Number(values.level);
const root = join(import.meta.dirname, '..', '..');

const str = (key: string, value: string): Attribute => ({ key, value: { type: 'string', value } });
const int = (key: string, value: bigint): Attribute => ({ key, value: { type: 'int', value } });

/** One request: traces of an agent root with an LLM call, a tool call and a second LLM call. */
function makeRequest(spans: number, sequence: number): Uint8Array {
  const list: Span[] = [];
  const base = BigInt(Date.now()) * 1_000_000n;
  while (list.length < spans) {
    const traceId = randomBytes(16).toString('hex');
    const rootId = randomBytes(8).toString('hex');
    const span = (name: string, parent: string, attributes: Attribute[], offset: bigint): Span => ({
      traceId,
      spanId: parent === '' ? rootId : randomBytes(8).toString('hex'),
      parentSpanId: parent,
      traceState: '',
      flags: 1,
      name,
      kind: 1,
      startTimeUnixNano: base + offset,
      endTimeUnixNano: base + offset + 900_000_000n,
      attributes,
      droppedAttributesCount: 0,
      events: [],
      droppedEventsCount: 0,
      links: [],
      droppedLinksCount: 0,
      status: { code: 0, message: '' },
    });
    const question = `Request ${sequence}-${list.length}: summarise the quarterly report for the sales team in three bullet points.`;
    const llm = (offset: bigint) =>
      span('chat gpt-4o-mini', rootId, [
        str('gen_ai.system', 'openai'),
        str('gen_ai.operation.name', 'chat'),
        str('gen_ai.request.model', 'gpt-4o-mini'),
        str('gen_ai.prompt', JSON.stringify([{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: question }])),
        str('gen_ai.completion', JSON.stringify([{ role: 'assistant', content: `- Revenue grew 12%.\n- Churn fell to 3%.\n- Pipeline is ${sequence % 97} deals.` }])),
        int('gen_ai.usage.input_tokens', 42n),
        int('gen_ai.usage.output_tokens', 31n),
      ], offset);
    list.push(
      span('agent', '', [str('openinference.span.kind', 'AGENT'), str('input.value', question)], 0n),
      llm(1_000_000n),
      span('search_reports', rootId, [str('openinference.span.kind', 'TOOL'), str('tool.name', 'search_reports'), str('input.value', '{"quarter":"Q3"}'), str('output.value', '{"hits":3}')], 2_000_000n),
      llm(3_000_000n),
    );
  }
  const batch: SpanBatch = {
    resourceSpans: [
      {
        resource: { attributes: [str('service.name', 'bench-app')], droppedAttributesCount: 0 },
        schemaUrl: '',
        scopeSpans: [{ scope: { name: 'bench', version: '1.0.0', attributes: [], droppedAttributesCount: 0 }, schemaUrl: '', spans: list.slice(0, spans) }],
      },
    ],
  };
  return encodeTraceRequestProtobuf(batch);
}

function procStat(pid: number): { cpuSeconds: number; peakRssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuSeconds: ticks / 100, peakRssMb: hwm ? Number(hwm[1]) / 1024 : NaN };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const stub = new BackendStub({ record: false });
  const endpoint = await stub.start();
  const dir = await mkdtemp(join(tmpdir(), 'tp-bench-'));
  const configPath = join(dir, 'proxy.yaml');
  await writeFile(
    configPath,
    [
      'receivers:',
      '  otlp: { host: 127.0.0.1, port: 0, api_key: bench-key, metrics_path: false }',
      'processors:',
      '  genai: {}',
      '  batch: {}',
      'exporters:',
      '  backend:',
      `    endpoint: ${endpoint}`,
      `    compression_level: ${level}`,
      '    persistent_queue: { directory: ./queue }',
      'service:',
      '  telemetry: { logs: { level: info, format: json }, metrics: { process_metrics: false } }',
      '  pipelines:',
      '    traces: { receivers: [otlp], processors: [genai, batch], exporters: [backend] }',
      '',
    ].join('\n'),
  );
  const profile = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] : [];
  const child = spawn(process.execPath, [...profile, join(root, 'bin/tracepipe.js'), '--config', configPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; address?: string };
      if (entry.msg === 'Receiving OTLP traces.') resolve(Number(entry.address!.split(':').pop()));
    });
    child.once('exit', () => reject(new Error('the proxy exited')));
  });

  const requests = Math.ceil(totalSpans / perRequest);
  // Every request carries fresh ids, generated before the clock starts (the load generator shares
  // the machine's two cores with the proxy).
  const bodies = Array.from({ length: requests }, (_, i) => makeRequest(perRequest, i));
  const url = `http://127.0.0.1:${port}/v1/traces`;
  const post = async (body: Uint8Array) => {
    const started = performance.now();
    for (;;) {
      const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-protobuf' }, body });
      await response.arrayBuffer();
      if (response.ok) return performance.now() - started;
      if (response.status !== 429 && response.status !== 503) throw new Error(`ingest answered ${response.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  // Warm-up (JIT, connections), not measured.
  await Promise.all(Array.from({ length: clients }, (_, i) => post(makeRequest(perRequest, 1_000_000 + i))));
  await stub.waitFor(() => stub.acceptedRuns >= clients * perRequest, 60_000);
  const warmRuns = stub.acceptedRuns;
  const warmRaw = stub.acceptedRawBytes;
  const warmCompressed = stub.acceptedCompressedBytes;

  const before = procStat(child.pid!);
  const latencies: number[] = [];
  let next = 0;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < requests) {
        const index = next++;
        latencies.push(await post(bodies[index]!));
      }
    }),
  );
  const ingestedAt = performance.now();
  await stub.waitFor(() => stub.acceptedRuns - warmRuns >= requests * perRequest, 300_000);
  const deliveredAt = performance.now();
  const after = procStat(child.pid!);

  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  await stub.close();
  await rm(dir, { recursive: true, force: true });

  const spans = requests * perRequest;
  latencies.sort((a, b) => a - b);
  const raw = stub.acceptedRawBytes - warmRaw;
  const compressed = stub.acceptedCompressedBytes - warmCompressed;
  const figures = {
    date: new Date().toISOString().slice(0, 10),
    machine: `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}`,
    spans,
    spans_per_request: perRequest,
    clients,
    compression_level: level,
    spans_per_second_end_to_end: Math.round(spans / ((deliveredAt - startedAt) / 1000)),
    spans_per_second_ingest: Math.round(spans / ((ingestedAt - startedAt) / 1000)),
    proxy_cpu_seconds_per_100k_spans: Number((((after.cpuSeconds - before.cpuSeconds) / spans) * 100_000).toFixed(2)),
    proxy_peak_rss_mb: Math.round(after.peakRssMb),
    compression_ratio: Number((raw / compressed).toFixed(1)),
    upload_mb_raw: Number((raw / 1e6).toFixed(1)),
    upload_mb_compressed: Number((compressed / 1e6).toFixed(1)),
    ingest_latency_ms: {
      p50: Number(percentile(latencies, 50).toFixed(1)),
      p99: Number(percentile(latencies, 99).toFixed(1)),
      max: Number(latencies[latencies.length - 1]!.toFixed(1)),
    },
  };
  console.log(JSON.stringify(figures, null, 2));
}

await main();
