// The agent server from a cold start: how long each server takes to answer (spawn → `GET /ok`),
// the CPU it spent getting there, and the runs it completes in its first seconds with `--clients`
// in flight — no warm-up, so this is what a freshly started (or restarted, or scaled-out) server
// gives its first users. Each operation is `threads.create` then `runs.wait` of the offline chat
// graph. The runs are counted per second after ready, so the climb as V8 optimises shows.
//
//   node --import tsx bench/agent/cold.ts [--servers tracepipe,langgraph] [--seconds 10]
//                                         [--clients 16] [--repetitions 3] [--cpu-prof DIR] [--json]
//                                         [--root DIR (servers base, base-notrace)]
//                                         [--node-flags='--flag ...' (for the server tracepipe-flags)]

import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@langchain/langgraph-sdk';
import { cpuMsOf } from './proc.ts';
import { startLanggraphDev, startTracepipe } from './servers.ts';
import type { RunningServer } from './servers.ts';

const { values: args } = parseArgs({
  options: {
    servers: { type: 'string', default: 'tracepipe,langgraph' },
    seconds: { type: 'string', default: '10' },
    clients: { type: 'string', default: '16' },
    repetitions: { type: 'string', default: '3' },
    'cpu-prof': { type: 'string' },
    root: { type: 'string' },
    'node-flags': { type: 'string', default: '' },
    json: { type: 'boolean', default: false },
  },
});
const seconds = Number(args.seconds);
const clients = Number(args.clients);
const repetitions = Number(args.repetitions);
const GRAPH = 'chat';
const input = { messages: [{ role: 'user', content: 'hello from the cold-start benchmark' }] };

interface Row {
  server: string;
  repetition: number;
  readyMs: number;
  /** The server's CPU time from its spawn to ready, ms. */
  cpuToReadyMs: number;
  runs: number;
  failures: number;
  runsPerSecond: number;
  /** Runs completed in each second after ready. */
  perSecond: number[];
  cpuMsPerRun: number;
  loadAverage: number;
}

async function coldRuns(server: RunningServer): Promise<Omit<Row, 'server' | 'repetition' | 'loadAverage'>> {
  const cpuToReadyMs = cpuMsOf(server.pid);
  const client = new Client({ apiUrl: server.url, defaultHeaders: {}, callerOptions: { maxRetries: 0 } });
  const perSecond = Array.from({ length: seconds }, () => 0);
  const begin = performance.now();
  const deadline = begin + seconds * 1000;
  let failures = 0;
  let firstError: unknown;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        try {
          const thread = await client.threads.create();
          await client.runs.wait(thread.thread_id, GRAPH, { input });
          const second = Math.floor((performance.now() - begin) / 1000);
          if (second < seconds) perSecond[second]!++;
        } catch (error) {
          failures++;
          firstError ??= error;
        }
      }
    }),
  );
  const cpuMs = cpuMsOf(server.pid) - cpuToReadyMs;
  if (failures > 0) process.stderr.write(`${server.name}: ${failures} failures, first: ${String(firstError)}\n`);
  const runs = perSecond.reduce((sum, count) => sum + count, 0);
  return {
    readyMs: server.readyMs,
    cpuToReadyMs,
    runs,
    failures,
    runsPerSecond: runs / seconds,
    perSecond,
    cpuMsPerRun: cpuMs / Math.max(1, runs),
  };
}

// `--cpu-prof DIR`: tracepipe writes a CPU profile of its start and first seconds into DIR.
const nodeArgs = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', resolve(args['cpu-prof'])] : [];
const starters: Record<string, () => Promise<RunningServer>> = {
  tracepipe: () => startTracepipe([GRAPH], { nodeArgs }),
  'tracepipe-notrace': () => startTracepipe([GRAPH], { tracing: false, nodeArgs }),
  // tracepipe with `--node-flags` (space-separated) added to Node's: to set V8 settings against the default.
  'tracepipe-flags': () =>
    startTracepipe([GRAPH], { nodeArgs: [...nodeArgs, ...args['node-flags']!.split(' ').filter(Boolean)] }),
  langgraph: () => startLanggraphDev([GRAPH]),
};
// `--root DIR`: `base` and `base-notrace` are tracepipe from another checkout (built), for A/B.
if (args.root !== undefined) {
  const root = resolve(args.root);
  starters.base = () => startTracepipe([GRAPH], { nodeArgs, root });
  starters['base-notrace'] = () => startTracepipe([GRAPH], { tracing: false, nodeArgs, root });
}
const names = args.servers!.split(',');
for (const name of names) if (!starters[name]) throw new Error(`unknown server ${name}`);

// Repetitions interleave the servers, so that a change in the machine's load falls on both.
const rows: Row[] = [];
for (let repetition = 1; repetition <= repetitions; repetition++) {
  for (const name of names) {
    let server: RunningServer | undefined;
    try {
      server = await starters[name]!();
      const loadAverage = loadavg()[0]!;
      const label = name === 'tracepipe-flags' ? `${server.name} ${args['node-flags']}` : server.name;
      rows.push({ server: label, repetition, loadAverage, ...(await coldRuns(server)) });
    } catch (error) {
      process.stderr.write(`${name}: ${(error as Error).message}\n`);
    } finally {
      await server?.stop();
    }
  }
}

const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}`;
if (args.json) {
  process.stdout.write(`${JSON.stringify({ machine, seconds, clients, rows }, null, 2)}\n`);
} else {
  const lines = [
    machine,
    `from spawn: time to ready, then ${seconds} s of threads.create + runs.wait (${GRAPH}) with ${clients} clients`,
    '',
    '| server | rep | load | ready ms | cpu to ready ms | runs | runs/s | cpu ms/run | runs per second after ready |',
    '|:--|--:|--:|--:|--:|--:|--:|--:|:--|',
    ...rows
      .map((row) =>
        [
          row.server,
          row.repetition,
          row.loadAverage.toFixed(1),
          row.readyMs.toFixed(0),
          row.cpuToReadyMs.toFixed(0),
          row.runs,
          row.runsPerSecond.toFixed(1),
          row.cpuMsPerRun.toFixed(2),
          row.perSecond.join(' '),
        ].join(' | '),
      )
      .map((line) => `| ${line} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
