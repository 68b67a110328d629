// The agent server's memory over many runs: starts the real server process (as run.ts does, with
// tracing through genai → batch → debug), runs `--warmup` runs, then `--runs` more, and samples the
// server's resident set size (VmRSS in /proc/<pid>/status) every `--every` runs, and after a forced
// collection its RSS again (split into anonymous memory and mapped files) and its heap (used and
// committed). The RSS before the collection depends on when V8 last collected; the figures after
// it are what the server holds. Each run is `runs.wait` of the offline chat graph on a fresh thread
// (created just before, untimed), `--clients` in flight. What grows after the warm-up is what the
// server keeps per run.
//
//   node --import tsx bench/agent/memory.ts [--warmup 1000] [--runs 10000] [--every 1000]
//                                           [--clients 8] [--settle-seconds 5] [--no-tracing]
//                                           [--snapshots DIR] [--json]
//
// The RSS is read `--settle-seconds` after each batch's last run, as `ps` shows it a few seconds
// after a load.
//
// The heap figures come from heap-probe.mjs, preloaded into the server (`--expose-gc`): on SIGUSR2
// it collects garbage and writes `process.memoryUsage()`. With `--snapshots DIR` it also writes a
// heap snapshot at each sample (slow; for finding what grows, e.g. in Chrome DevTools' comparison
// view).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Client } from '@langchain/langgraph-sdk';
import { repoRoot, startTracepipe } from './servers.ts';
import { drive } from './stats.ts';

const { values: args } = parseArgs({
  options: {
    warmup: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '10000' },
    every: { type: 'string', default: '1000' },
    clients: { type: 'string', default: '8' },
    'settle-seconds': { type: 'string', default: '5' },
    'no-tracing': { type: 'boolean', default: false },
    snapshots: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const warmup = Number(args.warmup);
const runs = Number(args.runs);
const every = Number(args.every);
const clients = Number(args.clients);
const settleMs = Number(args['settle-seconds']) * 1000;
const GRAPH = 'chat';
const input = { messages: [{ role: 'user', content: 'hello from the memory benchmark' }] };

interface Sample {
  runs: number;
  rssMb: number;
  /** RSS after the forced collection, once V8 has given the freed pages back (what the server holds). */
  rssAfterGcMb: number;
  heapUsedMb: number;
  /** V8's heap as committed after the collection: what of the RSS the JavaScript heap accounts for. */
  heapTotalMb: number;
  externalMb: number;
  /** V8's spaces before and after the collection: MB resident (committed pages touched) and MB live. */
  spacesBeforeGc: Record<string, { residentMb: number; usedMb: number }>;
  spaces: Record<string, { residentMb: number; usedMb: number }>;
  /** RSS after the collection split as /proc reports it: anonymous memory (heaps: V8's, malloc's) and mapped files. */
  rssAnonMb: number;
  rssFileMb: number;
  seconds: number;
}

const MB = 1024 * 1024;

/** The resident set of /proc/<pid>/status in MB: in all, and split into anonymous memory and mapped files. */
function residentMb(pid: number): { rss: number; anon: number; file: number } {
  // One read, so that the three figures describe the same moment (with shared memory, they add up to the RSS).
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) =>
    (Number(new RegExp(`${name}:\\s+(\\d+)\\s+kB`).exec(status)?.[1] ?? Number.NaN) * 1024) / MB;
  return { rss: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile') };
}

type SpaceStats = Record<string, { size: number; used: number; physical: number }>;

interface HeapReport {
  probe: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  spacesBeforeGc: SpaceStats;
  spaces: SpaceStats;
}

function spacesMb(spaces: SpaceStats): Sample['spaces'] {
  return Object.fromEntries(
    Object.entries(spaces).map(([name, space]) => [name, { residentMb: space.physical / MB, usedMb: space.used / MB }]),
  );
}

async function heapOf(pid: number, file: string, probe: number): Promise<HeapReport> {
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    await sleep(50);
    try {
      const report = JSON.parse(readFileSync(file, 'utf8')) as HeapReport;
      if (report.probe >= probe) return report;
    } catch {
      // not written yet, or being written
    }
  }
  throw new Error('the server did not answer the heap probe');
}

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-memory-'));
const heapFile = join(dir, 'heap.json');
const server = await startTracepipe([GRAPH], {
  tracing: !args['no-tracing'],
  nodeArgs: ['--expose-gc', '--import', join(repoRoot, 'bench/agent/heap-probe.mjs')],
  env: {
    TRACEPIPE_BENCH_HEAP: heapFile,
    ...(args.snapshots ? { TRACEPIPE_BENCH_SNAPSHOTS: resolve(args.snapshots) } : {}),
  },
});
const samples: Sample[] = [];
let failures = 0;
try {
  const pid = server.pid!;
  const client = new Client({ apiUrl: server.url, defaultHeaders: {}, callerOptions: { maxRetries: 0 } });
  const started = performance.now();
  let probes = 0;
  const sample = async (done: number) => {
    // Let the last runs' deferred work (trace batches, finished-run timers) settle first: the RSS
    // as a look with `ps` a few seconds after the load would show it.
    await sleep(settleMs);
    const rssMb = residentMb(pid).rss;
    const heap = await heapOf(pid, heapFile, ++probes);
    // V8 hands the pages a collection freed back from a background thread: read the RSS once that
    // has happened, not the figure the probe takes at the end of gc() (up to ~35 MB higher here).
    await sleep(500);
    const afterGc = residentMb(pid);
    const row = {
      runs: done,
      rssMb,
      rssAfterGcMb: afterGc.rss,
      heapUsedMb: heap.heapUsed / MB,
      heapTotalMb: heap.heapTotal / MB,
      externalMb: heap.external / MB,
      spacesBeforeGc: spacesMb(heap.spacesBeforeGc),
      spaces: spacesMb(heap.spaces),
      rssAnonMb: afterGc.anon,
      rssFileMb: afterGc.file,
      seconds: (performance.now() - started) / 1000,
    };
    samples.push(row);
    process.stderr.write(
      `${done} runs: rss ${row.rssMb.toFixed(1)} MB (${row.rssAfterGcMb.toFixed(1)} after gc), heap after gc ${row.heapUsedMb.toFixed(1)} MB (${row.seconds.toFixed(0)} s)\n`,
    );
  };
  const batch = async (count: number) => {
    const result = await drive(count, clients, async () => {
      const thread = await client.threads.create();
      const values = (await client.runs.wait(thread.thread_id, GRAPH, { input })) as { messages?: unknown[] };
      if (!values?.messages || values.messages.length < 2)
        throw new Error(`unexpected wait result ${JSON.stringify(values)}`);
    });
    failures += result.failures;
    if (result.failures > 0) process.stderr.write(`${result.failures} failures, first: ${String(result.firstError)}\n`);
  };
  await sample(0);
  await batch(warmup);
  await sample(warmup);
  for (let done = 0; done < runs; done += every) {
    await batch(Math.min(every, runs - done));
    await sample(warmup + Math.min(done + every, runs));
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

const signed = (mb: number) => `${mb >= 0 ? '+' : ''}${mb.toFixed(1)}`;
const base = samples.find((row) => row.runs === warmup)!;
const last = samples[samples.length - 1]!;
const summary = {
  machine: `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}, load average ${loadavg()[0]!.toFixed(1)}`,
  tracing: !args['no-tracing'],
  warmup,
  runs,
  clients,
  failures,
  rssGrowthMb: last.rssMb - base.rssMb,
  rssAfterGcGrowthMb: last.rssAfterGcMb - base.rssAfterGcMb,
  anonymousGrowthMb: last.rssAnonMb - base.rssAnonMb,
  heapGrowthMb: last.heapUsedMb - base.heapUsedMb,
  rssGrowthPer1000Mb: ((last.rssMb - base.rssMb) / runs) * 1000,
  heapGrowthPer1000Mb: ((last.heapUsedMb - base.heapUsedMb) / runs) * 1000,
  samples,
};
if (args.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
else {
  process.stdout.write(
    `${summary.machine}\ntracing ${summary.tracing ? 'on' : 'off'}, ${clients} clients, ${warmup} warm-up runs, then ${runs}; ${failures} failures\n\n`,
  );
  process.stdout.write(
    '| runs | RSS MB | RSS after GC MB | anonymous / files MB | heap after GC: used / committed MB | external MB |\n|--:|--:|--:|--:|--:|--:|\n',
  );
  for (const row of samples)
    process.stdout.write(
      `| ${row.runs} | ${row.rssMb.toFixed(1)} | ${row.rssAfterGcMb.toFixed(1)} | ${row.rssAnonMb.toFixed(1)} / ${row.rssFileMb.toFixed(1)} | ${row.heapUsedMb.toFixed(1)} / ${row.heapTotalMb.toFixed(1)} | ${row.externalMb.toFixed(1)} |\n`,
    );
  const spaceNames = Object.keys(samples[0]!.spaces);
  process.stdout.write(
    `\nV8's spaces, MB resident before the collection / after it (live after it):\n\n| runs | ${spaceNames.join(' | ')} |\n|--:|${spaceNames.map(() => '--:').join('|')}|\n`,
  );
  for (const row of samples)
    process.stdout.write(
      `| ${row.runs} | ${spaceNames
        .map((name) => {
          const before = row.spacesBeforeGc[name]!;
          const after = row.spaces[name]!;
          return `${before.residentMb.toFixed(1)} / ${after.residentMb.toFixed(1)} (${after.usedMb.toFixed(1)})`;
        })
        .join(' | ')} |\n`,
    );
  process.stdout.write(
    `\nafter the warm-up: RSS ${signed(summary.rssGrowthMb)} MB (${summary.rssGrowthPer1000Mb.toFixed(2)} MB per 1000 runs), ` +
      `after a collection ${signed(summary.rssAfterGcGrowthMb)} MB (anonymous ${signed(summary.anonymousGrowthMb)} MB), ` +
      `heap ${signed(summary.heapGrowthMb)} MB (${summary.heapGrowthPer1000Mb.toFixed(2)} MB per 1000 runs)\n`,
  );
}
