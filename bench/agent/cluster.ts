// The agent server's scale-out benchmark: the same client, run and counts against real `tracepipe`
// processes — one on embedded SQLite (configs/local.yaml), and 1, 2 and 3 on one PostgreSQL
// database with a Redis broker (configs/cluster.yaml) — printing runs/s and run-wait p50/p99 per
// setup (the median over the repetitions), and with --count the SQL statements, transactions and
// Redis commands each run costs, on each backend (SQLite's through better-sqlite3, PostgreSQL's
// through pg; see count-queries.mjs). It prints the load average before and after: the machine may
// be shared, and only ratios measured in one run compare. --cpu-prof DIR has every instance write a
// CPU profile into DIR when it stops (bench/profile-summary.ts reads them).
//
//   node --import tsx bench/agent/cluster.ts [--runs 200] [--warmup 20] [--clients 8]
//                                            [--repetitions 3] [--setups sqlite,pg1,pg2,pg3] [--count]
//                                            [--cpu-prof DIR]
//                                            [--database-uri postgres://postgres@127.0.0.1:5432/postgres]
//                                            [--redis-uri redis://127.0.0.1:6379]
//
// Every cell gets a fresh database (created, then dropped) and a random Redis key prefix; every
// instance listens on ports the system picks (AGENT_API_PORT=0 HTTP_PORT=0 TRACE_EXPLORER_PORT=0)
// and has its own DATA_DIR; its agent server port is read from its "listening" log line.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Client } from '@langchain/langgraph-sdk';
import pg from 'pg';
import { tracepipeArgs } from '../tracepipe-command.ts';
import { repoRoot } from './servers.ts';
import { drive, median, quantile } from './stats.ts';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    clients: { type: 'string', default: '8' },
    repetitions: { type: 'string', default: '3' },
    setups: { type: 'string', default: 'sqlite,pg1,pg2,pg3' },
    count: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    'database-uri': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    'redis-uri': { type: 'string', default: 'redis://127.0.0.1:6379' },
    json: { type: 'boolean', default: false },
  },
});
const runs = Number(args.runs);
const warmup = Number(args.warmup);
const clients = Number(args.clients);
const repetitions = Number(args.repetitions);
const adminUri = args['database-uri']!;
const redisUri = args['redis-uri']!;
const GRAPH = 'chat';
const input = { messages: [{ role: 'user', content: 'hello from the benchmark' }] };
const countPreload = join(repoRoot, 'bench/agent/count-queries.mjs');

interface Setup {
  name: string;
  instances: number;
  postgres: boolean;
}

const setups: Record<string, Setup> = {
  sqlite: { name: 'SQLite, 1 instance', instances: 1, postgres: false },
  pg1: { name: 'PostgreSQL + Redis, 1 instance', instances: 1, postgres: true },
  pg2: { name: 'PostgreSQL + Redis, 2 instances', instances: 2, postgres: true },
  pg3: { name: 'PostgreSQL + Redis, 3 instances', instances: 3, postgres: true },
};

interface Instance {
  url: string;
  child: ChildProcess;
  dir: string;
  countsFile: string;
  output: () => string;
}

/** Starts `tracepipe --config <config>` and resolves once its agent server reports the port it listens on. */
async function startInstance(
  config: string,
  env: NodeJS.ProcessEnv,
  overrides: readonly string[],
  count: boolean,
): Promise<Instance> {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-cluster-bench-'));
  const countsFile = join(dir, 'counts.json');
  const child = spawn(
    process.execPath,
    [
      ...tracepipeArgs([
        ...(count ? ['--import', countPreload] : []),
        ...(args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : []),
      ]),
      '--config',
      config,
      ...overrides.flatMap((override) => ['--set', override]),
    ],
    {
      cwd: repoRoot,
      env: {
        ...process.env,
        ...env,
        AGENT_API_PORT: '0',
        HTTP_PORT: '0',
        GRPC_PORT: '0',
        LANGSMITH_PORT: '0',
        TRACE_EXPLORER_PORT: '0',
        DATA_DIR: join(dir, 'data'),
        LOG_LEVEL: 'info',
        TRACEPIPE_BENCH_COUNTS: countsFile,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  const listening = new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`tracepipe did not listen within 120 s:\n${output}`)), 120_000);
    child.once('exit', (code) => reject(new Error(`tracepipe exited with ${code} before listening:\n${output}`)));
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      output = (output + text).slice(-20_000);
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.includes('Agent API server listening')) {
          clearTimeout(timer);
          resolvePort((JSON.parse(line) as { port: number }).port);
        }
      }
    });
  });
  let port: number;
  try {
    port = await listening;
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { url: `http://127.0.0.1:${port}`, child, dir, countsFile, output: () => output };
}

async function stopInstance(instance: Instance): Promise<void> {
  const { child } = instance;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
    child.kill('SIGTERM');
    const timedOut = await Promise.race([exited.then(() => false), sleep(20_000).then(() => true)]);
    if (timedOut) child.kill('SIGKILL');
  }
  rmSync(instance.dir, { recursive: true, force: true });
}

type Counts = { sql: Record<string, number>; redis: Record<string, number> };

/** Every instance's statement and command totals so far (count-queries.mjs writes them on SIGUSR2). */
async function snapshot(instances: readonly Instance[]): Promise<Counts> {
  for (const instance of instances) rmSync(instance.countsFile, { force: true });
  for (const instance of instances) instance.child.kill('SIGUSR2');
  const total: Counts = { sql: {}, redis: {} };
  for (const instance of instances) {
    const deadline = Date.now() + 5000;
    while (!existsSync(instance.countsFile) && Date.now() < deadline) await sleep(20);
    const counts = JSON.parse(readFileSync(instance.countsFile, 'utf8')) as Counts;
    for (const table of ['sql', 'redis'] as const)
      for (const [key, value] of Object.entries(counts[table])) total[table][key] = (total[table][key] ?? 0) + value;
  }
  return total;
}

function perRun(before: Record<string, number>, after: Record<string, number>, count: number): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = value - (before[key] ?? 0);
    if (delta > 0) result[key] = Math.round((delta / count) * 100) / 100;
  }
  return Object.fromEntries(Object.entries(result).sort((a, b) => b[1] - a[1]));
}

interface DatabaseStats {
  xact_commit: number;
  tup_inserted: number;
  tup_updated: number;
  tup_deleted: number;
}

async function databaseStats(admin: pg.Client, database: string): Promise<DatabaseStats> {
  // Backends report their counters when idle for a moment (PostgreSQL 15: within a second).
  await sleep(1500);
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await admin.query<Record<keyof DatabaseStats, string>>(
    'SELECT xact_commit, tup_inserted, tup_updated, tup_deleted FROM pg_stat_database WHERE datname = $1',
    [database],
  );
  const row = rows[0]!;
  return {
    xact_commit: Number(row.xact_commit),
    tup_inserted: Number(row.tup_inserted),
    tup_updated: Number(row.tup_updated),
    tup_deleted: Number(row.tup_deleted),
  };
}

interface Cell {
  setup: string;
  repetition: number;
  runs: number;
  failures: number;
  runsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  sqlPerRun?: Record<string, number>;
  redisPerRun?: Record<string, number>;
  databasePerRun?: Record<string, number>;
}

async function measure(setup: Setup, repetition: number, admin: pg.Client): Promise<Cell> {
  const database = `tracepipe_bench_${randomBytes(6).toString('hex')}`;
  const prefix = `tracepipe-bench:${randomBytes(6).toString('hex')}:`;
  const instances: Instance[] = [];
  if (setup.postgres) await admin.query(`CREATE DATABASE ${database}`);
  try {
    const databaseUri = new URL(adminUri);
    databaseUri.pathname = `/${database}`;
    const config = join(repoRoot, setup.postgres ? 'configs/cluster.yaml' : 'configs/local.yaml');
    const env: NodeJS.ProcessEnv = setup.postgres
      ? { DATABASE_URI: databaseUri.toString(), REDIS_URI: redisUri }
      : { REDIS_URI: '' };
    const overrides = setup.postgres ? [`receivers.agent_api.broker.key_prefix=${JSON.stringify(prefix)}`] : [];
    const start = () => startInstance(config, env, overrides, args.count);
    // The first instance creates the tables; the others start once it has.
    instances.push(await start());
    instances.push(...(await Promise.all(Array.from({ length: setup.instances - 1 }, start))));
    const sdks = instances.map(
      (instance) => new Client({ apiUrl: instance.url, apiKey: null, callerOptions: { maxRetries: 0 } }),
    );
    // Round robin over the instances, by run index (threads made beforehand, untimed, the same way).
    const sdkOf = (index: number) => sdks[index % sdks.length]!;
    const threads = await Promise.all(
      Array.from({ length: warmup + runs }, (_, index) => sdkOf(index).threads.create()),
    );
    const runOne = async (index: number) => {
      const values = (await sdkOf(index).runs.wait(threads[index]!.thread_id, GRAPH, { input })) as {
        messages?: unknown[];
      };
      if (!values?.messages || values.messages.length < 2)
        throw new Error(`unexpected wait result ${JSON.stringify(values)}`);
    };
    await drive(warmup, Math.min(clients, warmup), (_worker, index) => runOne(index));
    const counting = args.count;
    const beforeCounts = counting ? await snapshot(instances) : undefined;
    const beforeStats = counting && setup.postgres ? await databaseStats(admin, database) : undefined;
    const result = await drive(runs, clients, (_worker, index) => runOne(warmup + index));
    if (result.failures > 0)
      process.stderr.write(`${setup.name}: ${result.failures} failures, first: ${String(result.firstError)}\n`);
    const cell: Cell = {
      setup: setup.name,
      repetition,
      runs: result.latenciesMs.length,
      failures: result.failures,
      runsPerSecond: (result.latenciesMs.length / result.wallMs) * 1000,
      p50Ms: quantile(result.latenciesMs, 0.5),
      p99Ms: quantile(result.latenciesMs, 0.99),
    };
    if (counting) {
      const afterCounts = await snapshot(instances);
      cell.sqlPerRun = perRun(beforeCounts!.sql, afterCounts.sql, runs);
      cell.redisPerRun = perRun(beforeCounts!.redis, afterCounts.redis, runs);
      if (beforeStats) {
        const afterStats = await databaseStats(admin, database);
        cell.databasePerRun = perRun(
          beforeStats as unknown as Record<string, number>,
          afterStats as unknown as Record<string, number>,
          runs,
        );
      }
    }
    return cell;
  } catch (error) {
    for (const instance of instances)
      process.stderr.write(`--- ${instance.url} log tail:\n${instance.output().slice(-3000)}\n`);
    throw error;
  } finally {
    await Promise.all(instances.map(stopInstance));
    if (setup.postgres) await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}

const admin = new pg.Client({ connectionString: adminUri });
const selected = args.setups!.split(',').map((name) => {
  const setup = setups[name];
  if (!setup) throw new Error(`unknown setup ${name} (known: ${Object.keys(setups).join(', ')})`);
  return setup;
});
if (selected.some((setup) => setup.postgres)) await admin.connect();
const cells: Cell[] = [];
const loadAverage = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const loadBefore = loadAverage();
process.stderr.write(`load average ${loadBefore}\n`);
try {
  // Repetitions interleave the setups, so that a slow minute of the shared machine does not land
  // on one setup only.
  for (let repetition = 1; repetition <= repetitions; repetition++) {
    for (const setup of selected) {
      const cell = await measure(setup, repetition, admin);
      cells.push(cell);
      process.stderr.write(
        `${setup.name} #${repetition}: ${cell.runsPerSecond.toFixed(1)} runs/s, p50 ${cell.p50Ms.toFixed(1)} ms, p99 ${cell.p99Ms.toFixed(1)} ms${cell.failures ? `, ${cell.failures} failures` : ''}\n`,
      );
      if (cell.sqlPerRun) {
        const statements = Object.values(cell.sqlPerRun).reduce((sum, value) => sum + value, 0);
        process.stderr.write(
          [
            `  per run: ${statements.toFixed(1)} SQL statements, ${(cell.sqlPerRun.BEGIN ?? 0).toFixed(1)} transactions: ${JSON.stringify(cell.sqlPerRun)}`,
            ...(cell.databasePerRun ? [`  database ${JSON.stringify(cell.databasePerRun)}`] : []),
            ...(Object.keys(cell.redisPerRun ?? {}).length > 0 ? [`  Redis ${JSON.stringify(cell.redisPerRun)}`] : []),
            '',
          ].join('\n'),
        );
      }
    }
  }
} finally {
  await admin.end().catch(() => undefined);
}

const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}, load average ${loadBefore} before, ${loadAverage()} after`;
const summary = selected.map((setup) => {
  const own = cells.filter((cell) => cell.setup === setup.name);
  return {
    setup: setup.name,
    repetitions: own.length,
    eachRunsPerSecond: own.map((cell) => cell.runsPerSecond),
    runsPerSecond: median(own.map((cell) => cell.runsPerSecond)),
    p50Ms: median(own.map((cell) => cell.p50Ms)),
    p99Ms: median(own.map((cell) => cell.p99Ms)),
    failures: own.reduce((sum, cell) => sum + cell.failures, 0),
    statementsPerRun: own[0]?.sqlPerRun
      ? median(own.map((cell) => Object.values(cell.sqlPerRun ?? {}).reduce((sum, value) => sum + value, 0)))
      : undefined,
    transactionsPerRun: own[0]?.sqlPerRun ? median(own.map((cell) => cell.sqlPerRun?.BEGIN ?? 0)) : undefined,
  };
});
/** Runs/s of `name` relative to `base` (both measured in this run), or '' when either is absent. */
const ratio = (name: string, base: string) => {
  const of = (setupName: string) => summary.find((row) => row.setup === setups[setupName]?.name)?.runsPerSecond;
  const [value, reference] = [of(name), of(base)];
  return value !== undefined && reference ? `${(value / reference).toFixed(2)}×` : '';
};
const ratios = [
  ['pg1', 'sqlite', 'PostgreSQL + Redis, 1 instance / SQLite'],
  ['pg2', 'pg1', 'PostgreSQL + Redis, 2 instances / 1 instance'],
  ['pg3', 'pg1', 'PostgreSQL + Redis, 3 instances / 1 instance'],
]
  .map(([name, base, label]) => [label, ratio(name!, base!)] as const)
  .filter(([, value]) => value !== '');
if (args.json) process.stdout.write(`${JSON.stringify({ machine, runs, warmup, clients, cells, summary }, null, 2)}\n`);
else
  process.stdout.write(
    [
      machine,
      `graph: ${GRAPH} (offline local model), runs.wait on a fresh thread, ${clients} clients round-robin over the instances,`,
      `${runs} runs per cell after ${warmup} warm-up; median of ${repetitions} repetitions (of an even count, the mean of the middle two)`,
      '',
      '| setup | instances | runs/s | runs/s of each repetition | run wait p50 ms | run wait p99 ms | failures | SQL statements / run | transactions / run |',
      '|:--|--:|--:|:--|--:|--:|--:|--:|--:|',
      ...summary.map(
        (row) =>
          `| ${row.setup} | ${selected.find((setup) => setup.name === row.setup)!.instances} | ${row.runsPerSecond.toFixed(1)} | ${row.eachRunsPerSecond.map((value) => value.toFixed(1)).join(', ')} | ${row.p50Ms.toFixed(1)} | ${row.p99Ms.toFixed(1)} | ${row.failures} | ${row.statementsPerRun?.toFixed(1) ?? ''} | ${row.transactionsPerRun?.toFixed(1) ?? ''} |`,
      ),
      '',
      ...ratios.map(([label, value]) => `${label}: ${value}`),
      '',
    ].join('\n'),
  );
