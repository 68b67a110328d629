// The agent server benchmark: thread creation and run wait / join / stream latency (p50, p99) and
// throughput at several concurrencies, measured with @langchain/langgraph-sdk against tracepipe's
// agent server and the open-source LangGraph.js dev server, both running the offline chat graph.
//
//   node --import tsx bench/agent/run.ts [--iterations 100] [--concurrency 1,4,16]
//                                        [--servers tracepipe,tracepipe-notrace,langgraph] [--json]

import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { Client } from '@langchain/langgraph-sdk';
import { startLanggraphDev, startTracepipe } from './servers.ts';
import type { RunningServer } from './servers.ts';
import { drive, quantile } from './stats.ts';

const { values: args } = parseArgs({
  options: {
    iterations: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '1,4,16' },
    servers: { type: 'string', default: 'tracepipe,langgraph' },
    warmup: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
  },
});
const iterations = Number(args.iterations);
const warmup = Number(args.warmup);
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
}

type Operation = (client: Client, threadId: string) => Promise<void>;

const operations: Record<string, { needsThread: boolean; run: Operation }> = {
  thread_create: { needsThread: false, run: async (client) => void (await client.threads.create()) },
  run_wait: {
    needsThread: true,
    run: async (client, threadId) => {
      const values = (await client.runs.wait(threadId, GRAPH, { input })) as { messages?: unknown[] };
      if (!values?.messages || values.messages.length < 2)
        throw new Error(`unexpected wait result ${JSON.stringify(values)}`);
    },
  },
  run_join: {
    needsThread: true,
    run: async (client, threadId) => {
      const run = await client.runs.create(threadId, GRAPH, { input });
      await client.runs.join(threadId, run.run_id);
    },
  },
  run_stream: {
    needsThread: true,
    run: async (client, threadId) => {
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
};

async function measure(server: RunningServer): Promise<Row[]> {
  const client = new Client({ apiUrl: server.url, defaultHeaders: {}, callerOptions: { maxRetries: 0 } });
  const rows: Row[] = [];
  for (const [name, operation] of Object.entries(operations)) {
    for (const concurrency of concurrencies) {
      const total = Math.max(iterations, concurrency * 4);
      // Each run gets a fresh thread made beforehand (untimed), so that no run waits on another
      // run of its thread and thread histories do not grow over the measurement.
      const threads = operation.needsThread
        ? await Promise.all(Array.from({ length: total + warmup }, () => client.threads.create()))
        : [];
      const threadOf = (index: number) => threads[index]?.thread_id ?? '';
      await drive(warmup, Math.min(concurrency, warmup), (_worker, index) =>
        operation.run(client, threadOf(total + index)),
      );
      const result = await drive(total, concurrency, (_worker, index) => operation.run(client, threadOf(index)));
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
      });
    }
  }
  return rows;
}

function table(rows: Row[]): string {
  const header = ['server', 'operation', 'conc', 'n', 'fail', 'p50 ms', 'p99 ms', 'ops/s'];
  const lines = rows.map((row) => [
    row.server,
    row.operation,
    String(row.concurrency),
    String(row.count),
    String(row.failures),
    row.p50Ms.toFixed(1),
    row.p99Ms.toFixed(1),
    row.perSecond.toFixed(1),
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

const starters: Record<string, () => Promise<RunningServer>> = {
  tracepipe: () => startTracepipe([GRAPH]),
  'tracepipe-notrace': () => startTracepipe([GRAPH], { tracing: false }),
  langgraph: () => startLanggraphDev([GRAPH]),
};

const rows: Row[] = [];
for (const name of args.servers!.split(',')) {
  const start = starters[name];
  if (!start) throw new Error(`unknown server ${name} (known: ${Object.keys(starters).join(', ')})`);
  let server: RunningServer | undefined;
  try {
    server = await start();
    process.stderr.write(`${server.name} ready at ${server.url}\n`);
    rows.push(...(await measure(server)));
  } catch (error) {
    process.stderr.write(`${name}: ${(error as Error).message}\n`);
  } finally {
    await server?.stop();
  }
}

const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}`;
if (args.json) process.stdout.write(`${JSON.stringify({ machine, iterations, rows }, null, 2)}\n`);
else
  process.stdout.write(
    `${machine}\ngraph: ${GRAPH} (offline local model), ${iterations} operations per cell after ${warmup} warm-up\n\n${table(rows)}\n`,
  );
