// End-to-end benchmark of the proxy pipeline (otlp receiver → genai → batch → backend exporter):
// runs the real CLI as a child process with configs/proxy.yaml's defaults (the write-ahead journal
// on), sends OTLP/protobuf requests (OTLP/JSON with `--encoding json`, as OpenTelemetry JS's HTTP
// exporter sends by default), and measures against a local backend stub. Two kinds of load:
//
//   closed (the default): `--clients` senders, each sending its next request when the last one is
//     answered (a 429/503 is retried after its Retry-After, at most 1 s), for `--duration` seconds
//     or `--spans` spans. Prints the rate answered 2xx during the load, the time after the load until
//     every accepted span had reached the backend (drain), the sustained rate (delivered ÷ (load +
//     drain)), the proxy's CPU per span, peak RSS and ingest latency percentiles.
//   open (`--rate N`): N spans/s offered at a steady pace for `--duration` seconds whatever the
//     answers (a refused request is counted, not retried), then `--idle` seconds without load.
//     Prints what was accepted and refused, and the proxy's RSS: idle before, peak, at the end of the
//     load and after the idle period, and once a second from the load's start until the idle period
//     ends (through the drain: a backlog draining after the load can make the peak).
//
//   node --import tsx bench/pipeline/proxy.ts [--payload realistic|<shape>[,<shape>…]|all] [--per-request 100]
//       [--clients 8] [--duration 10 | --spans N] [--warm-up 0] [--rate N] [--idle 60] [--level 3]
//       [--journal on|off] [--memory-limit bytes] [--node-flags "..."] [--profile <dir>] [--heap-profile <dir>]
//       [--allocator image|glibc-default] [--remembered-ttl-ms N] [--remembered-bytes N] [--root DIR]
//       [--block-on-overflow true|false] [--memory-limiter off|<limit_mib>[/<spike_limit_mib>]]
//       [--encoding protobuf|json] [--compression none|gzip|deflate]
//
// `--warm-up S` runs S seconds of closed load before the measured load (after 24 warm-up requests,
// which are all there is by default): V8 goes on optimising the proxy's code for several seconds of
// load, on threads of its own, and those seconds cost ~2 µs of CPU per span more than the steady
// state (bench/pipeline/README.md, 2026-11-28). `proxy_cpu_us_per_span_by_thread` splits the proxy's
// CPU into its main thread and the others (V8's collector and compiler, libuv's pool).
//
// `--allocator image` (the default) starts the proxy with the container image's allocator settings
// (the Dockerfile's MALLOC_* variables); `glibc-default` without them. `--root DIR` runs the proxy of
// another checkout (built, e.g. a `git worktree` of an earlier commit) with this benchmark's load,
// stub and settings, for a before/after on one machine. `--block-on-overflow` sets the backend
// exporter's `sending_queue.block_on_overflow` (configs/proxy.yaml: true; false before 2026-11-27).
// `--memory-limiter 256` puts a `memory_limiter` processor with `limit_mib: 256` (and
// `spike_limit_mib` after a slash) first in the pipeline; `off` (the default) leaves it out.
//
// `--compression gzip` (or `deflate`) compresses each request at zlib's default level, as the
// Collector's `otlphttp` exporter (gzip by default) and OpenTelemetry SDKs set to compress send
// them; the load generator pays for it, on the cores it shares with the proxy.
//
// `--payload all` (or a comma-separated list of workload.ts's shapes) runs the benchmark once per
// shape, each with a proxy of its own, and ends with a table of the shapes' CPU per span.
//
// The load generator and the stub (which decompresses and parses every upload) run in this process
// and share the machine's cores with the proxy, as a sidecar's neighbours would.

import { spawn } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { deflateSync, gzipSync } from 'node:zlib';
import { imageAllocatorEnv, tracepipeArgs } from '../tracepipe-command.ts';
import { encodeRequest, encodingOf, makeBatch, payloadsOf } from './workload.ts';
import type { Payload } from './workload.ts';
import { BackendStub } from '../../plugins/exporters/backend/testing/backend_stub.ts';

const { values } = parseArgs({
  options: {
    payload: { type: 'string', default: 'realistic' },
    'per-request': { type: 'string', default: '100' },
    clients: { type: 'string', default: '8' },
    duration: { type: 'string', default: '10' },
    /**
     * Seconds of closed load before the measured load, besides the 24 warm-up requests: until V8
     * has optimised the proxy's code, its compiler adds CPU on threads of its own.
     */
    'warm-up': { type: 'string', default: '0' },
    spans: { type: 'string' },
    rate: { type: 'string' },
    idle: { type: 'string', default: '60' },
    level: { type: 'string', default: '3' },
    journal: { type: 'string', default: 'on' },
    /** The receiver's memory_limit_bytes (default: the receiver's default). */
    'memory-limit': { type: 'string' },
    /** What configs/proxy.yaml's REMEMBERED_TTL_MS sets: genai's root_cache_ttl_ms and batch's dotted_order_ttl_ms. */
    'remembered-ttl-ms': { type: 'string' },
    /** batch's max_remembered_bytes (MAX_REMEMBERED_BYTES). */
    'remembered-bytes': { type: 'string' },
    /** Node.js/V8 flags for the proxy process after bin/tracepipe.js's own, space-separated (e.g. "--max-semi-space-size=16"). */
    'node-flags': { type: 'string', default: '' },
    allocator: { type: 'string', default: 'image' },
    /** Write a V8 CPU profile of the proxy into this directory. */
    profile: { type: 'string' },
    /** Write a V8 sampling heap profile of the proxy into this directory. */
    'heap-profile': { type: 'string' },
    /** Run the proxy of this checkout instead of this one's (built; its config must take the settings above). */
    root: { type: 'string' },
    'block-on-overflow': { type: 'string', default: 'true' },
    /** `off`, or the memory_limiter's limit_mib (and spike_limit_mib after a slash). */
    'memory-limiter': { type: 'string', default: 'off' },
    /** How requests are encoded: `protobuf`, or `json` (hex ids, 64-bit integers as strings). */
    encoding: { type: 'string', default: 'protobuf' },
    /** The requests' Content-Encoding: `none`, `gzip` or `deflate` (zlib's format, as HTTP's `deflate` is). */
    compression: { type: 'string', default: 'none' },
  },
});
const encoding = encodingOf(values.encoding);
const CONTENT_TYPES = { protobuf: 'application/x-protobuf', json: 'application/json' } as const;
const COMPRESSORS = { none: undefined, gzip: gzipSync, deflate: deflateSync } as const;
const compression = values.compression as keyof typeof COMPRESSORS;
if (!Object.hasOwn(COMPRESSORS, compression))
  throw new Error(`--compression is none, gzip or deflate, not ${values.compression}`);
const compress = COMPRESSORS[compression];
const REQUEST_HEADERS = {
  'Content-Type': CONTENT_TYPES[encoding],
  ...(compress === undefined ? {} : { 'Content-Encoding': compression }),
};
const payloads = payloadsOf(values.payload);
const perRequest = Number(values['per-request']);
const clients = Number(values.clients);
const durationMs = Number(values.duration) * 1000;
const warmUpMs = Number(values['warm-up']) * 1000;
const spanLimit = values.spans === undefined ? Infinity : Number(values.spans);
const offeredRate = values.rate === undefined ? undefined : Number(values.rate);
const idleMs = Number(values.idle) * 1000;
const level = Number(values.level);
const journal = values.journal !== 'off';
if (values.allocator !== 'image' && values.allocator !== 'glibc-default')
  throw new Error(`--allocator: image or glibc-default, not ${values.allocator}`);
const allocatorEnv = values.allocator === 'image' ? imageAllocatorEnv() : {};
const memoryLimit = values['memory-limit'] === undefined ? '' : `, memory_limit_bytes: ${values['memory-limit']}`;
const rememberedTtl = values['remembered-ttl-ms'];
const genaiConfig = rememberedTtl === undefined ? '{}' : `{ root_cache_ttl_ms: ${rememberedTtl} }`;
const blockOnOverflow = values['block-on-overflow'];
if (blockOnOverflow !== 'true' && blockOnOverflow !== 'false')
  throw new Error(`--block-on-overflow: true or false, not ${blockOnOverflow}`);
const memoryLimiter = memoryLimiterConfig(values['memory-limiter']);
const batchConfig = `{ ${[
  rememberedTtl === undefined ? '' : `dotted_order_ttl_ms: ${rememberedTtl}`,
  values['remembered-bytes'] === undefined ? '' : `max_remembered_bytes: ${values['remembered-bytes']}`,
]
  .filter((setting) => setting !== '')
  .join(', ')} }`;

/** The memory_limiter's config for `--memory-limiter`, or undefined for `off`. */
function memoryLimiterConfig(option: string): string | undefined {
  if (option === 'off') return undefined;
  const match = /^(\d+)(?:\/(\d+))?$/.exec(option);
  if (!match) throw new Error(`--memory-limiter: off or <limit_mib>[/<spike_limit_mib>], not ${option}`);
  return `{ limit_mib: ${match[1]}${match[2] === undefined ? '' : `, spike_limit_mib: ${match[2]}`} }`;
}

interface ProcStat {
  cpuSeconds: number;
  userSeconds: number;
  systemSeconds: number;
  rssMb: number;
  peakRssMb: number;
}

function procStat(pid: number): ProcStat {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const user = Number(fields[11]) / 100; // utime
  const system = Number(fields[12]) / 100; // stime: syscalls, including loopback TCP delivery
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return {
    cpuSeconds: user + system,
    userSeconds: user,
    systemSeconds: system,
    rssMb: kb('VmRSS'),
    peakRssMb: kb('VmHWM'),
  };
}

/**
 * The proxy's RSS once a second, from its construction until `stop()`: through the load, the drain
 * after it and the idle period, so that a peak made while a backlog drains is seen too. Its own
 * timer, not the load's loop, so that it goes on when sending has stopped.
 */
class RssSampler {
  private readonly samples: number[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.sample();
    this.timer = setInterval(() => this.sample(), 1000);
  }

  /** Stops sampling (after one last sample) and returns the samples, MB. */
  stop(): number[] {
    clearInterval(this.timer);
    this.sample();
    return this.samples;
  }

  private sample(): void {
    this.samples.push(procStat(this.pid).rssMb);
  }
}

/**
 * CPU seconds (user + system) of a process's main thread and of its other threads together, from
 * /proc/<pid>/task. Besides libuv's thread pool, the other threads of a Node process are V8's
 * workers: parallel scavenges, concurrent marking and sweeping, and optimising compilation, none of
 * which a CPU profile (main thread only) shows.
 */
function threadCpuSeconds(pid: number): { main: number; other: number } {
  let main = 0;
  let other = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / 100;
    if (Number(tid) === pid) main += seconds;
    else other += seconds;
  }
  return { main, other };
}

/**
 * Resets the process's RSS high-water mark (VmHWM) to its current RSS (Linux: `5` written to
 * `/proc/<pid>/clear_refs`), so that the peak read later is the load's, not the start-up's or the
 * warm-up's. Returns false where that is not allowed.
 */
function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Busy and total CPU seconds of the whole machine (all cores), from /proc/stat. */
function machineStat(): { busySeconds: number; totalSeconds: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = line.reduce((sum, ticks) => sum + ticks, 0);
  const idle = (line[3] ?? 0) + (line[4] ?? 0); // idle + iowait
  return { busySeconds: (total - idle) / 100, totalSeconds: total / 100 };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/**
 * Requests with fresh ids, made cheaply: a few encoded templates whose trace and span ids are
 * rewritten in place for every request (every occurrence of an id — as a span's own id and as its
 * children's parent — gets the same new bytes, or the same new hex digits in JSON), so that
 * generating the load costs little of the CPU the proxy shares.
 */
class RequestFactory {
  private readonly templates: { body: Buffer; ids: { length: number; offsets: number[] }[] }[] = [];
  private next = 0;

  constructor(
    count: number,
    private readonly payload: Payload,
  ) {
    for (let i = 0; i < count; i++) {
      const batch = makeBatch(perRequest, i, this.payload);
      const body = encodeRequest(batch, encoding);
      const hexIds = new Set<string>();
      for (const resource of batch.resourceSpans)
        for (const scope of resource.scopeSpans)
          for (const span of scope.spans) hexIds.add(span.traceId).add(span.spanId);
      const ids = [...hexIds].map((hex) => {
        const needle = Buffer.from(hex, encoding === 'json' ? 'latin1' : 'hex');
        const offsets: number[] = [];
        for (let at = body.indexOf(needle); at !== -1; at = body.indexOf(needle, at + 1)) offsets.push(at);
        return { length: needle.length, offsets };
      });
      this.templates.push({ body, ids });
    }
  }

  make(): Buffer {
    const template = this.templates[this.next++ % this.templates.length]!;
    const body = Buffer.from(template.body);
    const fresh = Buffer.alloc(16);
    for (const id of template.ids) {
      // An id's bytes, or in JSON its hex digits: as many random bytes as the digits encode.
      const bytes = encoding === 'json' ? id.length / 2 : id.length;
      randomFillSync(fresh, 0, bytes);
      const written = encoding === 'json' ? Buffer.from(fresh.toString('hex', 0, bytes), 'latin1') : fresh;
      for (const offset of id.offsets) written.copy(body, offset, 0, id.length);
    }
    return compress === undefined ? body : compress(body);
  }
}

async function startProxy(endpoint: string, dir: string) {
  const configPath = join(dir, 'proxy.yaml');
  await writeFile(
    configPath,
    [
      'receivers:',
      `  otlp: { host: 127.0.0.1, port: 0, api_key: bench-key, metrics: { enabled: false }, journal: { enabled: ${journal}, directory: ./journal }${memoryLimit} }`,
      'processors:',
      ...(memoryLimiter === undefined ? [] : [`  memory_limiter: ${memoryLimiter}`]),
      `  genai: ${genaiConfig}`,
      `  batch: ${batchConfig}`,
      'exporters:',
      '  backend:',
      `    endpoint: ${endpoint}`,
      `    compression_level: ${level}`,
      `    sending_queue: { block_on_overflow: ${blockOnOverflow} }`,
      '    persistent_queue: { directory: ./queue }',
      'service:',
      '  telemetry: { logs: { level: info, format: json }, metrics: { process_metrics: false } }',
      '  pipelines:',
      `    traces: { receivers: [otlp], processors: [${memoryLimiter === undefined ? '' : 'memory_limiter, '}genai, batch], exporters: [backend] }`,
      '',
    ].join('\n'),
  );
  const nodeFlags = values['node-flags'].split(' ').filter((flag) => flag !== '');
  const profile = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] : [];
  const heapProfile = values['heap-profile'] ? ['--heap-prof', `--heap-prof-dir=${values['heap-profile']}`] : [];
  // As the `tracepipe` command starts it (with its shebang's flags), --node-flags after them.
  const child = spawn(
    process.execPath,
    [...tracepipeArgs([...nodeFlags, ...profile, ...heapProfile], values.root), '--config', configPath],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...allocatorEnv } },
  );
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return void console.error(line); // V8's own output (--trace-gc)
      const entry = JSON.parse(line) as { level?: number; msg?: string; address?: string; component?: { id?: string } };
      if (entry.msg === 'Receiving OTLP traces.') resolve(Number(entry.address!.split(':').pop()));
      // The proxy's warnings and errors (held batches, refusals, losses) explain the figures, and
      // so do the memory limiter's lines (when it started and stopped refusing).
      if ((entry.level ?? 0) >= WARN_LEVEL || entry.component?.id === 'memory_limiter') console.error(line);
    });
    child.once('exit', () => reject(new Error('the proxy exited')));
  });
  return { child, url: `http://127.0.0.1:${port}/v1/traces` };
}

/** pino's numeric level of `warn`. */
const WARN_LEVEL = 40;

interface Answer {
  readonly ok: boolean;
  readonly status: number;
  readonly retryAfterMs: number;
  readonly latencyMs: number;
  /** When the request was sent (performance.now()). */
  readonly sentAt: number;
}

async function send(url: string, body: Buffer): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(url, { method: 'POST', headers: REQUEST_HEADERS, body });
  await response.arrayBuffer();
  const retryAfter = Number(response.headers.get('retry-after'));
  return {
    ok: response.ok,
    status: response.status,
    retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 50,
    latencyMs: performance.now() - started,
    sentAt: started,
  };
}

/** Closed loop: each client sends its next request once the last is accepted. */
async function closedLoad(url: string, factory: RequestFactory, forMs = durationMs, maxSpans = spanLimit) {
  const latencies: number[] = [];
  let accepted = 0;
  let refused = 0;
  let sentSpans = 0;
  const deadline = performance.now() + forMs;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline && sentSpans < maxSpans) {
        sentSpans += perRequest;
        const body = factory.make();
        for (;;) {
          const answer = await send(url, body);
          if (answer.ok) {
            latencies.push(answer.latencyMs);
            accepted += perRequest;
            break;
          }
          if (answer.status !== 429 && answer.status !== 503) throw new Error(`ingest answered ${answer.status}`);
          refused += perRequest;
          // An OTLP exporter honours Retry-After; capped so that the load stays a load.
          await sleep(Math.min(answer.retryAfterMs, 1000));
        }
      }
    }),
  );
  return { latencies, accepted, refused };
}

/** Open loop: `rate` spans/s offered on a steady clock; refusals are counted, not retried. */
async function openLoad(url: string, factory: RequestFactory, rate: number) {
  const latencies: number[] = [];
  const refusals: Record<string, number> = {};
  let accepted = 0;
  let offered = 0;
  /** [seconds into the load, latency ms] of every accepted request. */
  const timeline: [number, number][] = [];
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  const interval = (perRequest / rate) * 1000;
  for (let index = 0; ; index++) {
    const due = started + index * interval;
    if (due - started >= durationMs) break;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    offered += perRequest;
    const request = send(url, factory.make()).then(
      (answer) => {
        if (answer.ok) {
          accepted += perRequest;
          latencies.push(answer.latencyMs);
          timeline.push([(answer.sentAt - started) / 1000, answer.latencyMs]);
        } else refusals[answer.status] = (refusals[answer.status] ?? 0) + perRequest;
      },
      (error: unknown) => {
        refusals[String(error)] = (refusals[String(error)] ?? 0) + perRequest;
      },
    );
    inFlight.add(request);
    void request.finally(() => inFlight.delete(request));
  }
  await Promise.all(inFlight);
  const bySecond = bySendSecond(timeline);
  const slowest = timeline
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([at, ms]) => `${ms.toFixed(0)} ms at ${at.toFixed(1)} s`);
  return { latencies, accepted, refusals, offered, slowest, bySecond };
}

/**
 * The accepted requests grouped by the second of the load they were sent in: how many, and their
 * median and longest time to the answer. Under overload it shows whether the early requests were
 * answered in their turn or only after the later ones.
 */
function bySendSecond(timeline: readonly [number, number][]): string[] {
  const seconds = new Map<number, number[]>();
  for (const [at, ms] of timeline) {
    const second = Math.floor(at);
    const list = seconds.get(second) ?? [];
    list.push(ms);
    seconds.set(second, list);
  }
  return [...seconds.entries()]
    .sort(([a], [b]) => a - b)
    .map(([second, list]) => {
      list.sort((a, b) => a - b);
      const median = percentile(list, 50).toFixed(0);
      return `${second} s: ${list.length} accepted, median ${median} ms, max ${list[list.length - 1]!.toFixed(0)} ms`;
    });
}

async function measure(payload: Payload) {
  const stub = new BackendStub({ record: false });
  const endpoint = await stub.start();
  const dir = await mkdtemp(join(tmpdir(), 'tp-bench-'));
  const { child, url } = await startProxy(endpoint, dir);
  const factory = new RequestFactory(64, payload);

  // Warm-up (JIT, connections), not measured.
  for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: clients }, () => send(url, factory.make())));
  const warmedUp =
    3 * clients * perRequest + (warmUpMs > 0 ? (await closedLoad(url, factory, warmUpMs, Infinity)).accepted : 0);
  await stub.waitFor(() => stub.acceptedRuns >= warmedUp, 60_000);
  await sleep(1000);
  const warmRuns = stub.acceptedRuns;
  const warmRaw = stub.acceptedRawBytes;
  const warmCompressed = stub.acceptedCompressedBytes;
  const idleBefore = procStat(child.pid!).rssMb;

  const before = procStat(child.pid!);
  const threadsBefore = threadCpuSeconds(child.pid!);
  // This process is the load generator and the backend stub: its CPU shares the cores with the proxy.
  const benchBefore = process.cpuUsage();
  const machineBefore = machineStat();
  const loadAverageBefore = loadavg()[0]!;
  const peakReset = resetPeakRss(child.pid!);
  const rss = new RssSampler(child.pid!);
  const startedAt = performance.now();
  const load =
    offeredRate === undefined
      ? {
          ...(await closedLoad(url, factory)),
          refusals: {},
          offered: undefined,
          slowest: undefined,
          bySecond: undefined,
        }
      : { ...(await openLoad(url, factory, offeredRate)), refused: undefined };
  const loadEndedAt = performance.now();
  const atLoadEnd = procStat(child.pid!);
  const loadAverageAfter = loadavg()[0]!;
  // Everything acknowledged must reach the backend: that is the drain.
  const delivered = () => stub.acceptedRuns - warmRuns;
  await stub.waitFor(() => delivered() >= load.accepted, 600_000).catch(() => {});
  const deliveredAt = performance.now();
  const after = procStat(child.pid!);
  const threadsAfter = threadCpuSeconds(child.pid!);
  const benchCpu = process.cpuUsage(benchBefore);
  const machineAfter = machineStat();
  let idleAfter: number | undefined;
  if (offeredRate !== undefined && idleMs > 0) {
    await sleep(Math.max(0, idleMs - (performance.now() - loadEndedAt)));
    idleAfter = procStat(child.pid!).rssMb;
  }
  // The high-water mark once everything is over: it covers the drain and the idle period too.
  const peakRssMb = procStat(child.pid!).peakRssMb;
  const samples = rss.stop();

  child.kill('SIGTERM');
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  await stub.close();
  await rm(dir, { recursive: true, force: true });

  const loadSeconds = (loadEndedAt - startedAt) / 1000;
  const drainSeconds = (deliveredAt - loadEndedAt) / 1000;
  const latencies = load.latencies.sort((a, b) => a - b);
  const raw = stub.acceptedRawBytes - warmRaw;
  const compressed = stub.acceptedCompressedBytes - warmCompressed;
  const spans = delivered();
  const figures = {
    date: new Date().toISOString().slice(0, 10),
    machine: `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}`,
    // Other work on the machine inflates CPU time per span too (shared caches, preemption): every
    // figure goes with the 1-minute load average at the start and the end of the load.
    load_average: [round(loadAverageBefore), round(loadAverageAfter)],
    load: offeredRate === undefined ? `closed, ${clients} clients` : `open, ${offeredRate} spans/s offered`,
    warm_up_seconds: warmUpMs / 1000,
    payload,
    encoding,
    compression,
    // As sent: compressed with --compression.
    bytes_per_span: Math.round(factory.make().length / perRequest),
    spans_per_request: perRequest,
    compression_level: level,
    journal,
    allocator_env: allocatorEnv,
    proxy_root: values.root ?? 'this checkout',
    remembered: { ttl_ms: rememberedTtl ?? 'default', bytes: values['remembered-bytes'] ?? 'default' },
    block_on_overflow: blockOnOverflow === 'true',
    memory_limiter: memoryLimiter ?? 'off',
    load_seconds: round(loadSeconds),
    offered_spans: load.offered,
    accepted_spans: load.accepted,
    refused_spans: offeredRate === undefined ? load.refused : load.refusals,
    delivered_spans: spans,
    lost_spans: Math.max(0, load.accepted - spans),
    spans_per_second_accepted: Math.round(load.accepted / loadSeconds),
    drain_seconds: round(drainSeconds),
    spans_per_second_sustained: Math.round(spans / (loadSeconds + drainSeconds)),
    proxy_cpu_us_per_span: round(((after.cpuSeconds - before.cpuSeconds) / spans) * 1e6),
    // The main thread (JavaScript, and the syscalls it makes) against V8's and libuv's threads.
    proxy_cpu_us_per_span_by_thread: {
      main: round(((threadsAfter.main - threadsBefore.main) / spans) * 1e6),
      other: round(((threadsAfter.other - threadsBefore.other) / spans) * 1e6),
    },
    proxy_cpu_user_system_seconds: [
      round(after.userSeconds - before.userSeconds, 2),
      round(after.systemSeconds - before.systemSeconds, 2),
    ],
    // Load generator + backend stub (this process), and everything on the machine.
    bench_cpu_us_per_span: round((benchCpu.user + benchCpu.system) / spans),
    machine_cpu_us_per_span: round(((machineAfter.busySeconds - machineBefore.busySeconds) / spans) * 1e6),
    machine_cpu_busy_percent: round(
      (100 * (machineAfter.busySeconds - machineBefore.busySeconds)) /
        (machineAfter.totalSeconds - machineBefore.totalSeconds),
    ),
    proxy_rss_mb: {
      idle_before: Math.round(idleBefore),
      // VmHWM: since the load's start when it could be reset, else since the proxy started.
      peak: Math.round(peakRssMb),
      peak_since: peakReset ? 'load start' : 'proxy start',
      peak_sampled: Math.round(Math.max(...samples)),
      at_load_end: Math.round(atLoadEnd.rssMb),
      ...(idleAfter === undefined ? {} : { [`idle_${idleMs / 1000}s_after`]: Math.round(idleAfter) }),
      ...(offeredRate === undefined
        ? {}
        : {
            // One sample a second from the load's start; these say where the load and the drain ended.
            per_second: samples.map((mb) => Math.round(mb)),
            per_second_load_ended_at_s: round(loadSeconds, 0),
            per_second_drained_at_s: round(loadSeconds + drainSeconds, 0),
          }),
    },
    compression_ratio: round(raw / compressed),
    ingest_latency_ms: {
      p50: round(percentile(latencies, 50)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies[latencies.length - 1] ?? NaN),
      ...(load.slowest ? { slowest: load.slowest } : {}),
      ...(load.bySecond ? { accepted_by_send_second: load.bySecond } : {}),
    },
    proxy_exit_code: exitCode,
  };
  console.log(JSON.stringify(figures, null, 2));
  return figures;
}

const results = [];
for (const payload of payloads) results.push(await measure(payload));
if (results.length > 1) {
  console.log('\npayload        bytes/span  proxy CPU µs/span  sustained spans/s  peak RSS MB  lost  load average');
  for (const figures of results)
    console.log(
      `${figures.payload.padEnd(14)} ${String(figures.bytes_per_span).padStart(10)}  ${figures.proxy_cpu_us_per_span
        .toFixed(1)
        .padStart(17)}  ${String(figures.spans_per_second_sustained).padStart(17)}  ${String(
        figures.proxy_rss_mb.peak,
      ).padStart(11)}  ${String(figures.lost_spans).padStart(4)}  ${figures.load_average.join(' → ')}`,
    );
}
