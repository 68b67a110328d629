// What bounds one agent server, and what more threads of execution would give: `--instances`
// independent tracepipe servers (each its own process and data directory, nothing shared), the same
// `--clients` round-robin over them, each operation `threads.create` then `runs.wait` of the
// offline chat graph. After `--warmup-seconds` of runs, `--runs` measured ones; it prints runs/s,
// the servers' CPU per run, how busy each server's main thread (the event loop) was, and the
// benchmark client's own CPU per run.
//
// One server whose main thread is busy ~100 % of the time while the machine still has a core to
// spare is bound by that thread; the rate of two instances is then the most a second thread
// executing runs (a worker thread, or a second process on one database) could add on this
// machine, before the cost of sharing the database and the event stream.
//
//   node --import tsx bench/agent/instances.ts [--instances 1,2] [--runs 4000] [--clients 16]
//                                              [--warmup-seconds 15] [--repetitions 2]

import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client } from '@langchain/langgraph-sdk';
import { cpuMsOf, mainThreadCpuMsOf } from './proc.ts';
import { startTracepipe } from './servers.ts';
import type { RunningServer } from './servers.ts';
import { drive, driveFor } from './stats.ts';

const { values: args } = parseArgs({
  options: {
    instances: { type: 'string', default: '1,2' },
    runs: { type: 'string', default: '4000' },
    clients: { type: 'string', default: '16' },
    'warmup-seconds': { type: 'string', default: '15' },
    repetitions: { type: 'string', default: '2' },
  },
});
const instanceCounts = args.instances.split(',').map(Number);
const runs = Number(args.runs);
const clients = Number(args.clients);
const warmupSeconds = Number(args['warmup-seconds']);
const repetitions = Number(args.repetitions);
const GRAPH = 'chat';
const input = { messages: [{ role: 'user', content: 'hello from the instances benchmark' }] };

interface Row {
  instances: number;
  repetition: number;
  runsPerSecond: number;
  serverCpuMsPerRun: number;
  mainThreadBusy: number[];
  clientCpuMsPerRun: number;
  failures: number;
  loadAverage: number;
}

async function measure(instances: number, repetition: number): Promise<Row> {
  const servers: RunningServer[] = [];
  try {
    for (let i = 0; i < instances; i++) servers.push(await startTracepipe([GRAPH]));
    const sdks = servers.map((server) => new Client({ apiUrl: server.url }));
    const operation = async (index: number): Promise<void> => {
      const client = sdks[index % sdks.length]!;
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, GRAPH, { input });
    };
    const warm = await driveFor(warmupSeconds, clients, operation);
    if (warm.failures > 0) throw new Error(`warm-up failed: ${String(warm.firstError)}`);
    const cpuBefore = servers.map((server) => cpuMsOf(server.pid));
    const mainBefore = servers.map((server) => mainThreadCpuMsOf(server.pid));
    const clientBefore = process.cpuUsage();
    const result = await drive(runs, clients, (_worker, index) => operation(index));
    const client = process.cpuUsage(clientBefore);
    const serverCpuMs = servers.reduce((sum, server, i) => sum + cpuMsOf(server.pid) - cpuBefore[i]!, 0);
    return {
      instances,
      repetition,
      runsPerSecond: runs / (result.wallMs / 1000),
      serverCpuMsPerRun: serverCpuMs / runs,
      mainThreadBusy: servers.map((server, i) => (mainThreadCpuMsOf(server.pid) - mainBefore[i]!) / result.wallMs),
      clientCpuMsPerRun: (client.user + client.system) / 1000 / runs,
      failures: result.failures,
      loadAverage: loadavg()[0]!,
    };
  } finally {
    for (const server of servers) await server.stop();
  }
}

const rows: Row[] = [];
for (let repetition = 1; repetition <= repetitions; repetition++)
  for (const instances of instanceCounts) {
    const row = await measure(instances, repetition);
    rows.push(row);
    console.error(`${instances} instance(s), repetition ${repetition}: ${row.runsPerSecond.toFixed(1)} runs/s`);
  }

console.log(
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}`,
);
console.log(
  `threads.create + runs.wait (${GRAPH}), ${clients} clients round-robin over the instances, ${runs} runs per cell after ${warmupSeconds} s of runs`,
);
console.log('');
console.log(
  '| instances | rep | load | runs/s | server CPU ms/run | main thread busy | client CPU ms/run | failures |',
);
console.log('|--:|--:|--:|--:|--:|:--|--:|--:|');
for (const row of rows)
  console.log(
    `| ${row.instances} | ${row.repetition} | ${row.loadAverage.toFixed(1)} | ${row.runsPerSecond.toFixed(1)} | ` +
      `${row.serverCpuMsPerRun.toFixed(2)} | ${row.mainThreadBusy.map((busy) => `${(busy * 100).toFixed(0)} %`).join(', ')} | ` +
      `${row.clientCpuMsPerRun.toFixed(2)} | ${row.failures} |`,
  );
