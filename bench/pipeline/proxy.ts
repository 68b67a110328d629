// End-to-end benchmark of the proxy pipeline (otlp receiver → genai → batch → backend exporter):
// runs the real CLI as a child process with configs/proxy.yaml's defaults, sends OTLP/protobuf requests from
// concurrent clients, and measures against a local backend stub:
//   - spans/s end to end (first request sent → last run accepted by the stub),
//   - the proxy's CPU seconds per 100k spans and peak RSS (from /proc, Linux),
//   - the upload compression ratio (raw multipart bytes / zstd bytes),
//   - ingest latency percentiles (request sent → 2xx answer).
//
//   node --import tsx bench/pipeline/proxy.ts [--spans 200000] [--per-request 100] [--clients 8] [--level 3]
//                                             [--journal on|off] [--profile <dir>]
//
// The receiver's write-ahead journal is on by default, as in configs/proxy.yaml; `--journal off`
// measures its cost.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { makeRequest } from './workload.ts';
import { BackendStub } from '../../plugins/exporters/backend/testing/backend_stub.ts';

const { values } = parseArgs({
  options: {
    spans: { type: 'string', default: '200000' },
    'per-request': { type: 'string', default: '100' },
    clients: { type: 'string', default: '8' },
    level: { type: 'string', default: '3' },
    journal: { type: 'string', default: 'on' },
    /** Write a V8 CPU profile of the proxy into this directory. */
    profile: { type: 'string' },
  },
});
const totalSpans = Number(values.spans);
const perRequest = Number(values['per-request']);
const clients = Number(values.clients);
const level = Number(values.level);
const journal = values.journal !== 'off';
const root = join(import.meta.dirname, '..', '..');

function procStat(pid: number): { cpuSeconds: number; userSeconds: number; systemSeconds: number; peakRssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const user = Number(fields[11]) / 100; // utime
  const system = Number(fields[12]) / 100; // stime: syscalls, including loopback TCP delivery
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return {
    cpuSeconds: user + system,
    userSeconds: user,
    systemSeconds: system,
    peakRssMb: hwm ? Number(hwm[1]) / 1024 : NaN,
  };
}

/** Busy and total CPU seconds of the whole machine (all cores), from /proc/stat. */
function machineStat(): { busySeconds: number; totalSeconds: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = line.reduce((sum, ticks) => sum + ticks, 0);
  const idle = (line[3] ?? 0) + (line[4] ?? 0); // idle + iowait
  return { busySeconds: (total - idle) / 100, totalSeconds: total / 100 };
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
      `  otlp: { host: 127.0.0.1, port: 0, api_key: bench-key, metrics: { enabled: false }, journal: { enabled: ${journal}, directory: ./journal } }`,
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
  const child = spawn(process.execPath, [...profile, join(root, 'bin/tracepipe.js'), '--config', configPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-protobuf' },
        body,
      });
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
  // This process is the load generator and the backend stub: its CPU shares the cores with the proxy.
  const benchBefore = process.cpuUsage();
  const machineBefore = machineStat();
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
  const benchCpu = process.cpuUsage(benchBefore);
  const machineAfter = machineStat();

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
    journal,
    spans_per_second_end_to_end: Math.round(spans / ((deliveredAt - startedAt) / 1000)),
    spans_per_second_ingest: Math.round(spans / ((ingestedAt - startedAt) / 1000)),
    proxy_cpu_seconds_per_100k_spans: Number((((after.cpuSeconds - before.cpuSeconds) / spans) * 100_000).toFixed(2)),
    proxy_cpu_user_system_seconds: [
      Number((after.userSeconds - before.userSeconds).toFixed(2)),
      Number((after.systemSeconds - before.systemSeconds).toFixed(2)),
    ],
    // Load generator + backend stub (this process), and everything else on the machine.
    bench_cpu_seconds_per_100k_spans: Number((((benchCpu.user + benchCpu.system) / 1e6 / spans) * 100_000).toFixed(2)),
    machine_cpu_seconds_per_100k_spans: Number(
      (((machineAfter.busySeconds - machineBefore.busySeconds) / spans) * 100_000).toFixed(2),
    ),
    machine_cpu_busy_percent: Number(
      (
        (100 * (machineAfter.busySeconds - machineBefore.busySeconds)) /
        (machineAfter.totalSeconds - machineBefore.totalSeconds)
      ).toFixed(1),
    ),
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
