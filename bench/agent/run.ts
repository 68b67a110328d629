// The agent server benchmark: thread creation and run wait / join / stream latency (p50, p99) and
// throughput at several concurrencies, measured with @langchain/langgraph-sdk against tracepipe's
// agent server and the open-source LangGraph.js dev server, both running the offline chat graph.
//
//   node --import tsx bench/agent/run.ts [--iterations 100] [--concurrency 1,4,16]
//                                        [--servers tracepipe,tracepipe-notrace,langgraph] [--json]
//                                        [--operations run_wait,run_stream_first_event,state_get,...]
//                                        [--cpu-prof DIR] [--workers N] [--root DIR] [--repetitions N]
//                                        [--node-flags='--flag ...' (for the server tracepipe-flags)]
//
// `--root DIR` adds the servers `base` and `base-notrace`: tracepipe (with and without tracing) run
// from another checkout (built, with its own node_modules), to set a change against it;
// `--repetitions N` runs the list of servers N times, interleaved (base, change, base, change, ...).

import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@langchain/langgraph-sdk';
import { startLanggraphDev, startTracepipe } from './servers.ts';
import type { RunningServer } from './servers.ts';
import { cpuMsOf } from './proc.ts';
import { drive, driveFor, quantile } from './stats.ts';

const { values: args } = parseArgs({
  options: {
    iterations: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '1,4,16' },
    servers: { type: 'string', default: 'tracepipe,langgraph' },
    warmup: { type: 'string', default: '10' },
    'warmup-seconds': { type: 'string', default: '20' },
    operations: { type: 'string' },
    'cpu-prof': { type: 'string' },
    workers: { type: 'string' },
    root: { type: 'string' },
    repetitions: { type: 'string', default: '1' },
    'node-flags': { type: 'string', default: '' },
    json: { type: 'boolean', default: false },
  },
});
const iterations = Number(args.iterations);
const warmup = Number(args.warmup);
const warmupSeconds = Number(args['warmup-seconds']);
const concurrencies = args.concurrency!.split(',').map(Number);
const GRAPH = 'chat';
const input = { messages: [{ role: 'user', content: 'hello from the benchmark' }] };

interface Row {
  server: string;
  operation: string;
  concurrency: number;
  count: number;
  failures: number;
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
  /** The server process's CPU time (user + system) per operation, ms; NaN when not known. */
  cpuMsPerOp: number;
  /** The machine's 1-minute load average at the end of the cell. */
  loadAverage: number;
}

/** What an operation reaches the server with: the SDK client, or plain HTTP to `url`. */
interface Target {
  readonly client: Client;
  readonly url: URL;
  /** Keep-alive connections for plain HTTP, as many as operations in flight. */
  readonly agent: Agent;
}

/** Resolves when done; a number is the latency to record instead of the whole operation's. */
type Operation = (target: Target, threadId: string) => Promise<void | number>;

/**
 * `GET path` over a keep-alive connection with `node:http` alone: a client much lighter than the
 * SDK (which parses, wraps and retries), so that with both on one machine the server's capacity is
 * what is measured, not the client's. Resolves with the body; rejects on a status other than 200.
 */
function httpGet(target: Target, path: string): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const req = request(
      { host: target.url.hostname, port: target.url.port, path, agent: target.agent, method: 'GET' },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          res.statusCode === 200 ? resolveBody(body) : reject(new Error(`GET ${path}: ${res.statusCode} ${body}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

interface OperationSpec {
  /** `fresh`: a new thread per operation; `state`: one of `concurrency` threads, each run once. */
  readonly threads?: 'fresh' | 'state';
  /** Operations per cell, as a multiple of `--iterations` (cheap ones need more to be measured). */
  readonly scale?: number;
  readonly run: Operation;
}

/** A state body with at least one message, compact or indented. */
const MESSAGES_PRESENT = /"messages":\s*\[\s*\{/;

const operations: Record<string, OperationSpec> = {
  thread_create: { run: async ({ client }) => void (await client.threads.create()) },
  run_wait: {
    threads: 'fresh',
    run: async ({ client }, threadId) => {
      const values = (await client.runs.wait(threadId, GRAPH, { input })) as { messages?: unknown[] };
      if (!values?.messages || values.messages.length < 2)
        throw new Error(`unexpected wait result ${JSON.stringify(values)}`);
    },
  },
  run_join: {
    threads: 'fresh',
    run: async ({ client }, threadId) => {
      const run = await client.runs.create(threadId, GRAPH, { input });
      await client.runs.join(threadId, run.run_id);
    },
  },
  run_stream: {
    threads: 'fresh',
    run: async ({ client }, threadId) => {
      let events = 0;
      for await (const chunk of client.runs.stream(threadId, GRAPH, {
        input,
        streamMode: ['values', 'messages-tuple'],
      })) {
        if (chunk.event === 'error') throw new Error(`stream error ${JSON.stringify(chunk.data)}`);
        events++;
      }
      if (events < 3) throw new Error(`only ${events} stream events`);
    },
  },
  // The time from the request to the stream's first event (`metadata`); the rest is read, untimed.
  run_stream_first_event: {
    threads: 'fresh',
    run: async ({ client }, threadId) => {
      const begin = performance.now();
      let first: number | undefined;
      for await (const chunk of client.runs.stream(threadId, GRAPH, {
        input,
        streamMode: ['values', 'messages-tuple'],
      })) {
        if (first === undefined) {
          first = performance.now() - begin;
          if (chunk.event !== 'metadata') throw new Error(`first event is ${chunk.event}, not metadata`);
        }
        if (chunk.event === 'error') throw new Error(`stream error ${JSON.stringify(chunk.data)}`);
      }
      if (first === undefined) throw new Error('no stream events');
      return first;
    },
  },
  // The latest state of a thread that has run once (`GET /threads/{id}/state`).
  state_get: {
    threads: 'state',
    scale: 20,
    run: async ({ client }, threadId) => {
      const state = await client.threads.getState(threadId);
      if (!(state.values as { messages?: unknown[] })?.messages?.length)
        throw new Error(`unexpected state ${JSON.stringify(state)}`);
    },
  },
  // The same read with a plain keep-alive HTTP client (`httpGet`): the server's capacity.
  state_get_http: {
    threads: 'state',
    scale: 100,
    run: async (target, threadId) => {
      const body = await httpGet(target, `/threads/${threadId}/state`);
      // A pattern, not a parse, to keep the client light; it allows the dev server's indented JSON.
      if (!MESSAGES_PRESENT.test(body)) throw new Error(`unexpected state ${body}`);
    },
  },
};

/** Which operations to measure (`--operations`, comma-separated; default all). */
const selected = args.operations ? args.operations.split(',') : Object.keys(operations);
for (const name of selected) if (!operations[name]) throw new Error(`unknown operation ${name}`);

/**
 * Brings a freshly started server to its steady state before anything is measured: `seconds` of
 * waited and streamed runs (alternately, on fresh threads) with 16 in flight. From a cold start
 * tracepipe did ~170 runs/s at 16 clients over its first 500 runs and ~300 from its 2,500th on, at
 * half the CPU per run — V8 optimising the hot paths: the SDK client's CPU per run fell the same
 * way. Warming by time gives each server the same chance whatever its speed (the dev server is
 * bounded by its polling). The cells' own `--warmup` operations then warm each operation's path.
 */
async function warmUp(server: RunningServer, target: Target, seconds: number): Promise<void> {
  if (!(seconds > 0)) return;
  const { count, failures, firstError } = await driveFor(seconds, 16, async (index) => {
    const thread = await target.client.threads.create();
    await (index % 2 === 0 ? operations.run_wait! : operations.run_stream!).run(target, thread.thread_id);
  });
  process.stderr.write(`${server.name}: warmed up with ${count} runs in ${seconds} s\n`);
  if (failures > 0) throw new Error(`${failures} of ${count} warm-up runs failed, first: ${String(firstError)}`);
}

async function measure(server: RunningServer): Promise<Row[]> {
  const client = new Client({ apiUrl: server.url, defaultHeaders: {}, callerOptions: { maxRetries: 0 } });
  const url = new URL(server.url);
  const rows: Row[] = [];
  const warmUpAgent = new Agent({ keepAlive: true });
  await warmUp(server, { client, url, agent: warmUpAgent }, warmupSeconds).finally(() => warmUpAgent.destroy());
  for (const name of selected) {
    const operation = operations[name]!;
    for (const concurrency of concurrencies) {
      const total = Math.max(iterations * (operation.scale ?? 1), concurrency * 4);
      // Each run gets a fresh thread made beforehand (untimed), so that no run waits on another
      // run of its thread and thread histories do not grow over the measurement. State reads go
      // to `concurrency` threads that have run once.
      let threadOf = (_index: number) => '';
      if (operation.threads === 'fresh') {
        const threads = await Promise.all(Array.from({ length: total + warmup }, () => client.threads.create()));
        threadOf = (index) => threads[index]!.thread_id;
      } else if (operation.threads === 'state') {
        const threads = await Promise.all(Array.from({ length: concurrency }, () => client.threads.create()));
        for (const thread of threads) await client.runs.wait(thread.thread_id, GRAPH, { input });
        threadOf = (index) => threads[index % threads.length]!.thread_id;
      }
      const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
      const target: Target = { client, url, agent };
      await drive(warmup, Math.min(concurrency, warmup), (_worker, index) =>
        operation.run(target, threadOf(total + index)),
      );
      const cpuBefore = cpuMsOf(server.pid);
      const result = await drive(total, concurrency, (_worker, index) => operation.run(target, threadOf(index)));
      const cpuMs = cpuMsOf(server.pid) - cpuBefore;
      agent.destroy();
      if (result.failures > 0)
        process.stderr.write(
          `${server.name} ${name} c=${concurrency}: ${result.failures} failures, first: ${String(result.firstError)}\n`,
        );
      rows.push({
        server: server.name,
        operation: name,
        concurrency,
        count: result.latenciesMs.length,
        failures: result.failures,
        p50Ms: quantile(result.latenciesMs, 0.5),
        p99Ms: quantile(result.latenciesMs, 0.99),
        perSecond: (result.latenciesMs.length / result.wallMs) * 1000,
        cpuMsPerOp: cpuMs / Math.max(1, result.latenciesMs.length),
        loadAverage: loadavg()[0]!,
      });
    }
  }
  return rows;
}

function table(rows: Row[]): string {
  const header = ['server', 'operation', 'conc', 'n', 'fail', 'p50 ms', 'p99 ms', 'ops/s', 'cpu ms/op', 'load'];
  const lines = rows.map((row) => [
    row.server,
    row.operation,
    String(row.concurrency),
    String(row.count),
    String(row.failures),
    row.p50Ms.toFixed(1),
    row.p99Ms.toFixed(1),
    row.perSecond.toFixed(1),
    Number.isNaN(row.cpuMsPerOp) ? '-' : row.cpuMsPerOp.toFixed(2),
    row.loadAverage.toFixed(1),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (cells: string[]) =>
    `| ${cells.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ')} |`;
  return [
    format(header),
    `|${widths.map((width, column) => (column < 2 ? `:${'-'.repeat(width + 1)}` : `${'-'.repeat(width + 1)}:`)).join('|')}|`,
    ...lines.map(format),
  ].join('\n');
}

// `--cpu-prof DIR`: tracepipe writes a CPU profile of the whole benchmark into DIR when it stops.
const nodeArgs = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', resolve(args['cpu-prof'])] : [];
// `--workers N`: tracepipe's `workers` (runs executing at once) instead of its default.
const workers = args.workers !== undefined ? Number(args.workers) : undefined;
const starters: Record<string, () => Promise<RunningServer>> = {
  tracepipe: () => startTracepipe([GRAPH], { nodeArgs, workers }),
  'tracepipe-notrace': () => startTracepipe([GRAPH], { tracing: false, nodeArgs, workers }),
  // tracepipe with `--node-flags` (space-separated) added to Node's: to set V8 settings against the default.
  'tracepipe-flags': () =>
    startTracepipe([GRAPH], { nodeArgs: [...nodeArgs, ...args['node-flags']!.split(' ').filter(Boolean)], workers }),
  langgraph: () => startLanggraphDev([GRAPH]),
};
// `--root DIR`: the same tracepipe servers from another checkout.
const root = args.root === undefined ? undefined : resolve(args.root);
if (root !== undefined) {
  starters.base = () => startTracepipe([GRAPH], { nodeArgs, workers, root });
  starters['base-notrace'] = () => startTracepipe([GRAPH], { tracing: false, nodeArgs, workers, root });
}
const names = args.servers!.split(',');
for (const name of names)
  if (!starters[name]) throw new Error(`unknown server ${name} (known: ${Object.keys(starters).join(', ')})`);

const rows: Row[] = [];
for (let repetition = 1; repetition <= Number(args.repetitions); repetition++) {
  for (const name of names) {
    let server: RunningServer | undefined;
    try {
      server = await starters[name]!();
      if (name === 'tracepipe-flags') server = { ...server, name: `${server.name} ${args['node-flags']}` };
      process.stderr.write(`${server.name} ready at ${server.url}\n`);
      rows.push(...(await measure(server)));
    } catch (error) {
      process.stderr.write(`${name}: ${(error as Error).message}\n`);
    } finally {
      await server?.stop();
    }
  }
}

const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}, load average ${loadavg()[0]!.toFixed(1)}`;
if (args.json)
  process.stdout.write(`${JSON.stringify({ machine, iterations, warmupSeconds, warmup, rows }, null, 2)}\n`);
else
  process.stdout.write(
    `${machine}\ngraph: ${GRAPH} (offline local model), ${iterations} operations per cell after ${warmupSeconds} s of runs and ${warmup} warm-up operations\n\n${table(rows)}\n`,
  );
