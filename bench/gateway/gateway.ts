// Benchmark of the first tier alone: the real CLI running configs/gateway.yaml (journal on, as
// shipped) in front of N second-tier stand-ins — bare node:http servers that read each request
// and answer 200 — measuring, per run:
//   - spans/s forwarded (first request sent → the gateway's `otlp` senders report every span sent),
//   - the gateway's CPU seconds per 100k spans (utime + stime from /proc, Linux), i.e. µs per span,
//   - its peak RSS.
// Several runs, each with a fresh gateway; the median of each figure is printed last.
//
//   node --import tsx bench/gateway/gateway.ts [--spans 100000] [--per-request 100] [--clients 8]
//                                              [--endpoints 3] [--runs 5] [--compression gzip|none]
//
// The load generator and the stand-ins run in this process and share the machine's cores with the
// gateway: the figures are a floor for a gateway with cores of its own.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { tracepipeArgs } from '../tracepipe-command.ts';
import { makeRequest } from '../pipeline/workload.ts';

const { values } = parseArgs({
  options: {
    spans: { type: 'string', default: '100000' },
    'per-request': { type: 'string', default: '100' },
    clients: { type: 'string', default: '8' },
    endpoints: { type: 'string', default: '3' },
    runs: { type: 'string', default: '5' },
    compression: { type: 'string', default: 'gzip' },
  },
});
const totalSpans = Number(values.spans);
const perRequest = Number(values['per-request']);
const clients = Number(values.clients);
const endpointCount = Number(values.endpoints);
const runs = Number(values.runs);
const root = join(import.meta.dirname, '..', '..');

function procStat(pid: number): { cpuSeconds: number; peakRssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100, peakRssMb: hwm ? Number(hwm[1]) / 1024 : NaN };
}

/** A second-tier stand-in: reads the body, answers 200, counts requests and bytes. */
async function startStandIn(): Promise<{ server: Server; address: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((request, response) => {
    request.on('data', () => undefined);
    request.on('end', () => {
      requests++;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, address: `127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

async function spansSent(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('tracepipe_otlp_exporter_spans_sent_total{')) sum += Number(line.split(' ').pop());
  return sum;
}

interface RunFigures {
  spans_per_second: number;
  cpu_us_per_span: number;
  peak_rss_mb: number;
  requests_forwarded: number;
}

async function oneRun(): Promise<RunFigures> {
  const standIns = await Promise.all(Array.from({ length: endpointCount }, startStandIn));
  const dir = await mkdtemp(join(tmpdir(), 'tp-bench-gateway-'));
  const args = [...tracepipeArgs(), '--config', join(root, 'configs/gateway.yaml')];
  args.push('--set', `exporters.loadbalancing.protocol.otlp.compression=${values.compression}`);
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      LANGSMITH_PORT: '0',
      DATA_DIR: dir,
      SERVICE_API_KEY: 'bench-key',
      PROXY_ENDPOINTS: standIns.map((s) => s.address).join(','),
      LOG_LEVEL: 'info',
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; address?: string };
      if (entry.msg === 'Receiving OTLP traces.') resolve(Number(entry.address!.split(':').pop()));
    });
    child.once('exit', () => reject(new Error('the gateway exited')));
  });
  const requests = Math.ceil(totalSpans / perRequest);
  // The `small` payload, as the figures quoted in the loadbalancing README were measured.
  const bodies = Array.from({ length: requests }, (_, i) => makeRequest(perRequest, i, 'small'));
  const url = `http://127.0.0.1:${port}/v1/traces`;
  const post = async (body: Uint8Array): Promise<void> => {
    for (;;) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-protobuf' },
        body,
      });
      await response.arrayBuffer();
      if (response.ok) return;
      if (response.status !== 429 && response.status !== 503)
        throw new Error(`the gateway answered ${response.status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  // Warm-up (JIT, connections), not measured.
  await Promise.all(Array.from({ length: clients }, (_, i) => post(makeRequest(perRequest, 1_000_000 + i, 'small'))));
  const warm = clients * perRequest;
  while ((await spansSent(port)) < warm) await new Promise((resolve) => setTimeout(resolve, 20));

  const before = procStat(child.pid!);
  let next = 0;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < requests) await post(bodies[next++]!);
    }),
  );
  const deadline = Date.now() + 300_000;
  while ((await spansSent(port)) < warm + requests * perRequest) {
    if (Date.now() > deadline) throw new Error('the gateway did not forward every span in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const seconds = (performance.now() - startedAt) / 1000;
  const after = procStat(child.pid!);
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  const forwarded = standIns.reduce((sum, s) => sum + s.requests(), 0);
  for (const s of standIns) s.server.close();
  await rm(dir, { recursive: true, force: true });
  const spans = requests * perRequest;
  return {
    spans_per_second: Math.round(spans / seconds),
    cpu_us_per_span: Number((((after.cpuSeconds - before.cpuSeconds) / spans) * 1e6).toFixed(1)),
    peak_rss_mb: Math.round(after.peakRssMb),
    requests_forwarded: forwarded,
  };
}

function median(list: number[]): number {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const all: RunFigures[] = [];
  for (let run = 0; run < runs; run++) {
    const figures = await oneRun();
    all.push(figures);
    console.log(JSON.stringify({ run: run + 1, ...figures }));
  }
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString().slice(0, 10),
        machine: `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}`,
        spans: totalSpans,
        spans_per_request: perRequest,
        clients,
        endpoints: endpointCount,
        compression: values.compression,
        runs,
        median: {
          spans_per_second: median(all.map((f) => f.spans_per_second)),
          cpu_us_per_span: median(all.map((f) => f.cpu_us_per_span)),
          peak_rss_mb: median(all.map((f) => f.peak_rss_mb)),
        },
        range_spans_per_second: [
          Math.min(...all.map((f) => f.spans_per_second)),
          Math.max(...all.map((f) => f.spans_per_second)),
        ],
        range_cpu_us_per_span: [
          Math.min(...all.map((f) => f.cpu_us_per_span)),
          Math.max(...all.map((f) => f.cpu_us_per_span)),
        ],
      },
      null,
      2,
    ),
  );
}

await main();
