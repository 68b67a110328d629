// Ingest benchmark: spans/s and request latency (p50/p99) into the `otlp` receiver with a no-op
// pipeline, for JSON and protobuf requests of 100 spans at several concurrency levels, beside a bare
// Node HTTP server that only reads the body. Each server runs in its own process.
//
//   node --import tsx bench/ingest/http.ts [seconds-per-run]

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { sampleBodies } from './sample.ts';

const SPANS = 100;
const SECONDS = Number(process.argv[2] ?? 3);
const CONCURRENCY = [1, 4, 16, 64];
const bodies = sampleBodies(SPANS);
const CONTENT_TYPES = { protobuf: 'application/x-protobuf', json: 'application/json' } as const;

async function startServer(mode: 'receiver' | 'bare'): Promise<{ port: number; child: ChildProcess }> {
  const script = fileURLToPath(new URL('./server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (data: Buffer) => resolve(Number(data.toString().trim())));
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  return { port, child };
}

function post(agent: Agent, port: number, body: Buffer, contentType: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/traces',
        method: 'POST',
        agent,
        headers: { 'content-type': contentType, 'content-length': body.length, 'x-api-key': 'bench' },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve(res.statusCode) : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Result {
  spansPerSecond: number;
  p50: number;
  p99: number;
}

async function run(port: number, encoding: keyof typeof bodies, concurrency: number, seconds: number): Promise<Result> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const body = bodies[encoding];
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await post(agent, port, body, CONTENT_TYPES[encoding]);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { spansPerSecond: (latencies.length * SPANS) / elapsed, p50: at(0.5), p99: at(0.99) };
}

console.log(
  `node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model}), ${SPANS} spans/request, ${SECONDS}s per run`,
);
console.log(`bodies: protobuf ${bodies.protobuf.length} bytes, JSON ${bodies.json.length} bytes`);
console.log(
  '| encoding | concurrency | bare spans/s | bare p50/p99 ms | receiver spans/s | receiver p50/p99 ms | receiver / bare |',
);
console.log('|---|---|---|---|---|---|---|');
const servers = { bare: await startServer('bare'), receiver: await startServer('receiver') };
try {
  for (const encoding of ['protobuf', 'json'] as const) {
    for (const concurrency of CONCURRENCY) {
      const results: Record<string, Result> = {};
      for (const mode of ['bare', 'receiver'] as const) {
        await run(servers[mode].port, encoding, concurrency, 0.5); // warm-up
        results[mode] = await run(servers[mode].port, encoding, concurrency, SECONDS);
      }
      const bare = results.bare!;
      const receiver = results.receiver!;
      console.log(
        `| ${encoding} | ${concurrency} | ${bare.spansPerSecond.toFixed(0)} | ${bare.p50.toFixed(2)} / ${bare.p99.toFixed(2)} | ${receiver.spansPerSecond.toFixed(0)} | ${receiver.p50.toFixed(2)} / ${receiver.p99.toFixed(2)} | ${(receiver.spansPerSecond / bare.spansPerSecond).toFixed(2)} |`,
      );
    }
  }
} finally {
  servers.bare.child.kill();
  servers.receiver.child.kill();
}
