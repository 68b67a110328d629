// The proxy's three ways in, on the same machine and the same proxy process (configs/proxy.yaml,
// the journal on), one after the other: OTLP/HTTP protobuf and OTLP/gRPC with the same requests
// (`--requests` of `--per-request` spans of the `realistic` shape), then the LangSmith SDK's ingest
// API (`POST /runs/multipart`, `--per-request` runs each, as the SDK batches them). `--clients`
// senders each send their next request once the last one is answered. Each phase ends when the
// capture backend holds everything it was sent, so the proxy's CPU of a phase (utime + stime from
// /proc) covers the item's whole way: receiver, journal, pipeline, upload. Prints items/s and CPU
// per item, with the load average (the machine may be shared).
//
// `--compression gzip` sends every request gzipped at zlib's default level — `Content-Encoding:
// gzip` over HTTP, `grpc-encoding: gzip` over gRPC — as the Collector's exporters do by default;
// the load generator compresses the bodies before the phase starts. `--payload` picks the OTLP
// phases' span shape (workload.ts).
//
//   node --import tsx bench/pipeline/ingest-paths.ts [--requests 200] [--per-request 100] [--clients 4]
//       [--compression none|gzip] [--payload realistic|<shape>] [--node-flags="--cpu-prof --cpu-prof-dir=DIR"]

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { encodeTraceRequestProtobuf } from '../../src/otlp/encode.ts';
import { tempDir } from '../../src/testkit/files.ts';
import { eventually } from '../../src/testkit/eventually.ts';
import { BackendStub } from '../../plugins/exporters/backend/testing/backend_stub.ts';
import { spawnGroup } from '../../src/testkit/processes.ts';
import { tracepipeArgs } from '../tracepipe-command.ts';
import { makeBatch, payloadsOf } from './workload.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '200' },
    'per-request': { type: 'string', default: '100' },
    clients: { type: 'string', default: '4' },
    compression: { type: 'string', default: 'none' },
    payload: { type: 'string', default: 'realistic' },
    /** Node.js/V8 flags for the proxy process after bin/tracepipe.js's own, space-separated. */
    'node-flags': { type: 'string', default: '' },
  },
});
const REQUESTS = Number(values.requests);
const PER_REQUEST = Number(values['per-request']);
const CLIENTS = Number(values.clients);
if (values.compression !== 'none' && values.compression !== 'gzip')
  throw new Error(`--compression is none or gzip, not ${values.compression}`);
const GZIP = values.compression === 'gzip';
const [PAYLOAD, ...others] = payloadsOf(values.payload);
if (PAYLOAD === undefined || others.length > 0) throw new Error(`--payload names one shape, not ${values.payload}`);
/** Headers of an HTTP request whose body is compressed as `--compression` says. */
const encodingHeader: Record<string, string> = GZIP ? { 'content-encoding': 'gzip' } : {};

/** The process's CPU time so far, in ms (utime + stime of /proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Sends `bodies` with `CLIENTS` senders in a closed loop. */
async function closedLoop<T>(bodies: readonly T[], send: (body: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < bodies.length) await send(bodies[next++]!);
    }),
  );
}

/** Runs a phase: its load, then the wait until the backend holds `items` more runs; prints its figures. */
async function phase(name: string, pid: number, items: number, load: () => Promise<void>): Promise<void> {
  const before = backend.acceptedRuns;
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  await load();
  await eventually(() => backend.acceptedRuns - before >= items, {
    timeoutMs: 300_000,
    intervalMs: 20,
    message: () => `${name}: ${backend.acceptedRuns - before} of ${items} at the backend`,
  });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuMs(pid) - cpu0;
  const load1 = loadavg()[0]!.toFixed(2);
  console.log(
    `${name.padEnd(22)} ${String(items).padStart(7)} items  ${(items / seconds).toFixed(0).padStart(6)} items/s  ` +
      `CPU ${((cpu * 1000) / items).toFixed(1).padStart(6)} µs/item  (load average ${load1})`,
  );
}

/** A `/runs/multipart` body of `count` runs (a root and its children), as the SDK writes it. */
function multipartRuns(count: number): { body: Buffer; boundary: string } {
  const boundary = `bench${randomUUID()}`;
  const traceId = randomUUID();
  const start = new Date();
  const stamp = start.toISOString().replace(/[-:.]/g, '').replace('Z', '000Z');
  const chunks: string[] = [];
  const part = (name: string, value: unknown) => {
    const json = JSON.stringify(value);
    chunks.push(
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}\r\n`,
    );
  };
  for (let i = 0; i < count; i++) {
    const id = i === 0 ? traceId : randomUUID();
    part(`post.${id}`, {
      id,
      trace_id: traceId,
      ...(i === 0 ? {} : { parent_run_id: traceId }),
      dotted_order: i === 0 ? `${stamp}${traceId}` : `${stamp}${traceId}.${stamp}${id}`,
      name: i === 0 ? 'agent' : 'ChatOpenAI',
      run_type: i === 0 ? 'chain' : 'llm',
      start_time: start.getTime(),
      end_time: start.getTime() + 900,
      extra: { metadata: { ls_provider: 'openai', ls_model_name: 'gpt-4o-mini' } },
    });
    part(`post.${id}.inputs`, { messages: [{ role: 'user', content: `question ${i} ${'x'.repeat(200)}` }] });
    part(`post.${id}.outputs`, {
      generations: [{ text: `answer ${i} ${'y'.repeat(300)}` }],
      usage_metadata: { input_tokens: 60, output_tokens: 80, total_tokens: 140 },
    });
  }
  chunks.push(`--${boundary}--\r\n`);
  return { body: Buffer.from(chunks.join('')), boundary };
}

const backend = new BackendStub({ record: false });
const endpoint = await backend.start();
// configs/proxy.yaml as it ships (the journal on), every listener on a free loopback port.
const { child } = spawnGroup(
  process.execPath,
  [
    ...tracepipeArgs(values['node-flags'].split(' ').filter(Boolean)),
    '--config',
    fileURLToPath(new URL('../../configs/proxy.yaml', import.meta.url)),
  ],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      SERVICE_ENDPOINT: endpoint,
      SERVICE_API_KEY: 'bench',
      DATA_DIR: tempDir('tracepipe-bench-ingest-'),
      HTTP_HOST: '127.0.0.1',
      GRPC_HOST: '127.0.0.1',
      LANGSMITH_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      LANGSMITH_PORT: '0',
    },
  },
);
const ports = new Map<string, number>();
createInterface({ input: child.stdout! }).on('line', (line) => {
  if (!line.startsWith('{')) return;
  const entry = JSON.parse(line) as { msg?: string; address?: string };
  if (entry.address) ports.set(entry.msg!, Number(entry.address.split(':').pop()));
});
try {
  await eventually(() => ports.size >= 3, { timeoutMs: 60_000, message: 'the three listeners' });
  const tracesUrl = `http://127.0.0.1:${ports.get('Receiving OTLP traces.')}/v1/traces`;
  const grpcPort = ports.get('Receiving OTLP traces over gRPC.');
  const langsmithPort = ports.get('Receiving LangSmith SDK runs.');
  console.log(
    `${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; ` +
      `${REQUESTS} requests of ${PER_REQUEST} items per path (${PAYLOAD} spans), ${CLIENTS} clients, ` +
      `compression ${values.compression}; load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')} before`,
  );
  // Over gRPC the channel compresses (grpc-js, at zlib's default level); over HTTP the body is.
  const requests = (compress = GZIP) =>
    Array.from({ length: REQUESTS }, (_, i) => {
      const body = Buffer.from(encodeTraceRequestProtobuf(makeBatch(PER_REQUEST, i, PAYLOAD)));
      return compress ? gzipSync(body) : body;
    });
  // Warm-up: the JIT and the connections, on each path, not measured (each span is one run).
  const warm = requests().slice(0, 5);

  const http = async (body: Buffer) => {
    const response = await fetch(tracesUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'x-api-key': 'bench', ...encodingHeader },
      body,
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`OTLP/HTTP answered ${response.status}`);
  };
  const client = new grpc.Client(
    `127.0.0.1:${grpcPort}`,
    grpc.credentials.createInsecure(),
    GZIP ? { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip } : {},
  );
  const exportPath = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
  const metadata = new grpc.Metadata();
  metadata.set('x-api-key', 'bench');
  const viaGrpc = (body: Buffer) =>
    new Promise<void>((resolve, reject) =>
      client.makeUnaryRequest(
        exportPath,
        (value: Buffer) => value,
        (value: Buffer) => value,
        body,
        metadata,
        (error) => (error ? reject(error) : resolve()),
      ),
    );
  const langsmith = async ({ body, boundary }: { body: Buffer; boundary: string }) => {
    const response = await fetch(`http://127.0.0.1:${langsmithPort}/runs/multipart`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'x-api-key': 'bench', ...encodingHeader },
      body,
    });
    await response.arrayBuffer();
    if (response.status !== 202) throw new Error(`the LangSmith ingest answered ${response.status}`);
  };

  for (const body of warm) await http(body);
  const warmGrpc = requests(false).slice(0, 5);
  for (const body of warmGrpc) await viaGrpc(body);
  const warmRuns = multipartRuns(PER_REQUEST);
  await langsmith(GZIP ? { ...warmRuns, body: gzipSync(warmRuns.body) } : warmRuns);
  await eventually(() => backend.acceptedRuns >= (2 * warm.length + 1) * PER_REQUEST, { timeoutMs: 120_000 });
  const httpBodies = requests();
  await phase('OTLP/HTTP protobuf', child.pid!, REQUESTS * PER_REQUEST, () => closedLoop(httpBodies, http));
  const grpcBodies = requests(false);
  await phase('OTLP/gRPC', child.pid!, REQUESTS * PER_REQUEST, () => closedLoop(grpcBodies, viaGrpc));
  const multipart = Array.from({ length: REQUESTS }, () => {
    const request = multipartRuns(PER_REQUEST);
    return GZIP ? { ...request, body: gzipSync(request.body) } : request;
  });
  await phase('LangSmith /runs/multipart', child.pid!, REQUESTS * PER_REQUEST, () => closedLoop(multipart, langsmith));
  client.close();
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  await backend.close();
}
