// The real proxy as a child process, for fault tests and benchmarks: `node bin/tracepipe.js
// --config configs/proxy.yaml` configured through its environment variables (HTTP_PORT=0
// on 127.0.0.1), its OTLP port read from the "Receiving OTLP traces." log line, every stdout line
// kept (parsed when JSON), stopped with SIGTERM (exit code, whether it said "Stopped cleanly.") or
// killed with SIGKILL, and restarted on the same DATA_DIR.
//
// `startTracepipe()` runs the CLI on any config the same way (the agent server, trace explorer and
// HTTP ports free, `--set` overrides), resolving once the agent server reports its port.
//
// Every child started here is remembered; `killAllProxies()` (for `after` hooks) SIGKILLs those
// still running, and an exit hook does the same if a test process ends without it.

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@langchain/langgraph-sdk';
import { parseDocument } from 'yaml';
import { eventually } from '../../src/testkit/eventually.ts';
import { spawnGroup } from '../../src/testkit/processes.ts';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
/**
 * The tracepipe whose CLI and configs/proxy.yaml are run: this repository, or the checkout named
 * by FAULTS_TRACEPIPE_ROOT (e.g. an older commit unpacked with `git archive`, to measure it with
 * the same tests; it needs its own node_modules or a link to these).
 */
export const TRACEPIPE_ROOT = process.env.FAULTS_TRACEPIPE_ROOT ?? REPO_ROOT;
export const PROXY_CONFIG = join(TRACEPIPE_ROOT, 'configs', 'proxy.yaml');

/** A stdout line: the parsed pino entry when it is JSON, else just the text. */
export interface ProxyLogLine {
  readonly text: string;
  readonly level?: number;
  readonly msg?: string;
  readonly entry?: Record<string, unknown>;
}

export interface ExitReport {
  /** The exit code, or null when a signal ended the process. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** "Stopped cleanly." was logged. */
  readonly stoppedCleanly: boolean;
  /** The lost_items of "Stopped, but accepted data was lost during shutdown.", if logged. */
  readonly lostItemsReported?: number;
  /** Messages of ERROR (and FATAL) lines, in order. */
  readonly errors: readonly string[];
  readonly lines: readonly ProxyLogLine[];
  readonly stderr: string;
}

export interface ProxyOptions {
  /** The backend's base URL (SERVICE_ENDPOINT). */
  readonly endpoint: string;
  /** DATA_DIR: journal and disk queue live under it. */
  readonly dataDir: string;
  /** Config file; configs/proxy.yaml by default (see proxyConfigVariant). */
  readonly config?: string;
  readonly shutdownTimeoutMs?: number;
  readonly logLevel?: string;
  /** More environment variables (JOURNAL_MAX_BYTES, FLUSH_INTERVAL_MS, ...). */
  readonly env?: Record<string, string>;
  /** How long start() waits for the port (a journal replay happens before listening). */
  readonly startTimeoutMs?: number;
  /** Wait for the OTLP/gRPC listener too (configs/proxy.yaml has one), and read its port into `grpcPort`. */
  readonly grpc?: boolean;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** SIGKILLs every process started by this module (proxies and `startTracepipe`) that is still running, and waits for them. */
export async function killAllProxies(): Promise<void> {
  const waits: Promise<unknown>[] = [];
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) {
      waits.push(new Promise((resolve) => child.once('exit', resolve)));
      child.kill('SIGKILL');
    }
  }
  await Promise.all(waits);
}

/**
 * Whether configs/proxy.yaml's `journal` block is left out of every config (and so the journal
 * off): set FAULTS_JOURNAL=absent to run the fault tests against a build that does not know the
 * key yet (its loader rejects unknown keys).
 */
export const JOURNAL_ABSENT = process.env.FAULTS_JOURNAL === 'absent';

/**
 * Writes a copy of configs/proxy.yaml into `dir` (keeping every `${env:...}` reference and its
 * plain style), without the receiver's journal when `journal` is false and with the exporter's
 * disk queue disabled when `persistentQueue` is false. Returns its path. With both true and no
 * FAULTS_JOURNAL=absent, returns configs/proxy.yaml itself.
 */
export function proxyConfigVariant(
  dir: string,
  variant: { journal?: boolean; persistentQueue?: boolean } = {},
): string {
  const journal = (variant.journal ?? true) && !JOURNAL_ABSENT;
  const persistentQueue = variant.persistentQueue ?? true;
  if (journal && persistentQueue) return PROXY_CONFIG;
  const doc = parseDocument(readFileSync(PROXY_CONFIG, 'utf8'));
  if (!journal) {
    // Every receiver's: the OTLP receiver's and the LangSmith ingest receiver's.
    for (const receiver of ['otlp', 'langsmith']) {
      doc.deleteIn(['receivers', receiver, 'journal']);
      // A build without the journal knows no memory bound of acknowledged requests either.
      if (JOURNAL_ABSENT) doc.deleteIn(['receivers', receiver, 'memory_limit_bytes']);
    }
  }
  if (!persistentQueue) doc.setIn(['exporters', 'backend', 'persistent_queue'], doc.createNode({ enabled: false }));
  const name = `proxy${journal ? '' : '-nojournal'}${persistentQueue ? '' : '-nodiskqueue'}.yaml`;
  const path = join(dir, name);
  writeFileSync(path, doc.toString());
  return path;
}

export class ProxyProcess {
  readonly lines: ProxyLogLine[] = [];
  stderr = '';
  port = 0;
  /** The OTLP/gRPC port, when started with `grpc: true`. */
  grpcPort = 0;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private constructor(
    readonly options: ProxyOptions,
    readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let entry: Record<string, unknown> | undefined;
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed && typeof parsed === 'object') entry = parsed as Record<string, unknown>;
      } catch {
        // Not a JSON line.
      }
      this.lines.push(
        entry
          ? {
              text,
              entry,
              ...(typeof entry.level === 'number' ? { level: entry.level } : {}),
              ...(typeof entry.msg === 'string' ? { msg: entry.msg } : {}),
            }
          : { text },
      );
    });
    child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
  }

  /** Starts the proxy and resolves once it listens (its OTLP port known). */
  static async start(options: ProxyOptions): Promise<ProxyProcess> {
    installExitHook();
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      SERVICE_ENDPOINT: options.endpoint,
      SERVICE_API_KEY: 'test',
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      LANGSMITH_PORT: '0',
      DATA_DIR: options.dataDir,
      LOG_LEVEL: options.logLevel ?? 'info',
      ...(options.shutdownTimeoutMs !== undefined ? { SHUTDOWN_TIMEOUT_MS: String(options.shutdownTimeoutMs) } : {}),
      ...options.env,
    };
    const { child } = spawnGroup(
      process.execPath,
      [join(TRACEPIPE_ROOT, 'bin', 'tracepipe.js'), '--config', options.config ?? PROXY_CONFIG],
      {
        cwd: TRACEPIPE_ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    running.add(child);
    child.once('exit', () => running.delete(child));
    const proxy = new ProxyProcess(options, child);
    // A proxy that exits during start-up stops the wait at once, with what it said.
    const exited = new AbortController();
    void proxy.exited.then((exit) =>
      exited.abort(
        new Error(
          `the proxy exited during start-up (${exit.code ?? exit.signal}): ${proxy.stderr.trim()} ${proxy.tail()}`,
        ),
      ),
    );
    try {
      await eventually(
        () => {
          const line = proxy.lines.find(
            (l) => l.msg === 'Receiving OTLP traces.' && typeof l.entry?.address === 'string',
          );
          if (!line) return false;
          const address = line.entry!.address as string;
          proxy.port = Number(address.slice(address.lastIndexOf(':') + 1));
          if (!options.grpc) return true;
          const grpcLine = proxy.lines.find((l) => l.msg === 'Receiving OTLP traces over gRPC.');
          if (!grpcLine) return false;
          const grpcAddress = grpcLine.entry!.address as string;
          proxy.grpcPort = Number(grpcAddress.slice(grpcAddress.lastIndexOf(':') + 1));
          return true;
        },
        {
          timeoutMs: options.startTimeoutMs ?? 60_000,
          message: () => `the proxy to listen (stderr: ${proxy.stderr.trim()})`,
          signal: exited.signal,
        },
      );
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    return proxy;
  }

  /** The OTLP traces URL. */
  get tracesUrl(): string {
    return `http://127.0.0.1:${this.port}/v1/traces`;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Lines whose message is `msg`. */
  find(msg: string): ProxyLogLine[] {
    return this.lines.filter((line) => line.msg === msg);
  }

  /** The last `n` stdout lines, for failure messages. */
  tail(n = 5): string {
    return this.lines
      .slice(-n)
      .map((line) => line.text)
      .join('\n');
  }

  /** Sends SIGTERM and waits for the exit (SIGKILL after `timeoutMs`, which then shows as signal SIGKILL). */
  async sigterm(timeoutMs = 120_000): Promise<ExitReport> {
    if (this.running) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return this.report(await this.exited);
    } finally {
      clearTimeout(timer);
    }
  }

  /** kill -9, and waits for the exit. */
  async kill9(): Promise<ExitReport> {
    if (this.running) this.child.kill('SIGKILL');
    return this.report(await this.exited);
  }

  /** A new proxy with the same options (same DATA_DIR), after this one exited; `changes` override options. */
  async restart(changes: Partial<ProxyOptions> = {}): Promise<ProxyProcess> {
    if (this.running) throw new Error('restart() while the proxy still runs: stop it first');
    return ProxyProcess.start({ ...this.options, ...changes, env: { ...this.options.env, ...changes.env } });
  }

  /** The sum of a Prometheus metric's samples whose labels contain `labels` (from GET /metrics). */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${this.port}/metrics`)).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(name)) continue;
      const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
      if (!match || match[1] !== name) continue;
      const labelText = match[2] ?? '';
      if (Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`)))
        sum += Number(match[3]);
    }
    return sum;
  }

  private report(exit: { code: number | null; signal: NodeJS.Signals | null }): ExitReport {
    const lost = this.lines.find((line) => line.msg === 'Stopped, but accepted data was lost during shutdown.');
    const lostItems = lost?.entry?.lost_items;
    return {
      code: exit.code,
      signal: exit.signal,
      stoppedCleanly: this.lines.some((line) => line.msg === 'Stopped cleanly.'),
      ...(typeof lostItems === 'number' ? { lostItemsReported: lostItems } : {}),
      errors: this.lines.filter((line) => (line.level ?? 0) >= 50).map((line) => line.msg ?? line.text),
      lines: this.lines,
      stderr: this.stderr,
    };
  }
}

export interface TracepipeOptions {
  /** The config file, absolute or relative to the repository (e.g. `configs/cluster.yaml`). */
  readonly config: string;
  /** Environment variables over the defaults (free ports on 127.0.0.1, LOG_LEVEL=info, a DATA_DIR of its own). */
  readonly env?: Record<string, string>;
  /** `--set` overrides: each value is written as JSON, which the CLI reads as YAML. */
  readonly set?: Record<string, string | number | boolean>;
  /** Start from an empty environment but PATH instead of this process's. */
  readonly cleanEnv?: boolean;
  /** Names the process in errors. */
  readonly name?: string;
}

/** A `tracepipe` CLI process whose agent server listens. */
export interface TracepipeProcess {
  readonly child: ChildProcess;
  /** The agent server's port and base URL. */
  readonly port: number;
  readonly url: string;
  /** An SDK client of the agent server, without retries. */
  readonly client: Client;
  /** Everything the process wrote, stdout and stderr. */
  output(): string;
  /**
   * Sends `signal` (SIGTERM by default; SIGKILL follows after `killAfterMs`) and resolves with the
   * exit code (null when a signal ended it), once it exited; a DATA_DIR made here is removed.
   */
  stop(signal?: NodeJS.Signals, killAfterMs?: number): Promise<number | null>;
}

/** Starts `tracepipe --config <config>` and resolves once its agent server listens. */
export async function startTracepipe(options: TracepipeOptions): Promise<TracepipeProcess> {
  installExitHook();
  const name = options.name ?? 'tracepipe';
  const ownDataDir = options.env?.DATA_DIR === undefined ? mkdtempSync(join(tmpdir(), 'tracepipe-')) : undefined;
  const removeDataDir = () => {
    if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
  };
  const args = [join(REPO_ROOT, 'bin/tracepipe.js'), '--config', resolve(REPO_ROOT, options.config)];
  for (const [key, value] of Object.entries(options.set ?? {})) args.push('--set', `${key}=${JSON.stringify(value)}`);
  const { child } = spawnGroup(process.execPath, args, {
    cwd: REPO_ROOT,
    env: {
      ...(options.cleanEnv ? { PATH: process.env.PATH ?? '' } : process.env),
      AGENT_API_HOST: '127.0.0.1',
      AGENT_API_PORT: '0',
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      LANGSMITH_PORT: '0',
      TRACE_EXPLORER_PORT: '0',
      LOG_LEVEL: 'info',
      ...(ownDataDir ? { DATA_DIR: ownDataDir } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening:\n${output}`)));
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        for (const line of output.split('\n')) {
          if (line.includes('Agent API server listening')) resolve((JSON.parse(line) as { port: number }).port);
        }
      });
    });
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    removeDataDir();
    throw error;
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    child,
    port,
    url,
    client: new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } }),
    output: () => output,
    async stop(signal = 'SIGTERM', killAfterMs = 15_000) {
      let timer: NodeJS.Timeout | undefined;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        if (signal !== 'SIGKILL') timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      }
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
        removeDataDir();
      }
    },
  };
}
