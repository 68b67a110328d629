// Starting and stopping the two agent servers the benchmark compares, as child processes on free
// loopback ports: tracepipe (`bin/tracepipe.js` with a generated config) and the open-source
// LangGraph.js dev server (`langgraphjs dev` from @langchain/langgraph-cli), both serving the
// same example graphs.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { tracepipeArgs } from '../tracepipe-command.ts';

export const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

export interface RunningServer {
  readonly name: string;
  readonly url: string;
  readonly logFile: string;
  /** The server's process id (tracepipe runs in the process it starts). */
  readonly pid?: number;
  /** From the spawn to the first answer of `GET /ok`, ms (polled every 20 ms). */
  readonly readyMs: number;
  /** Stops the server (and the processes it started) and removes its temporary directory. */
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * A langgraph.json in `dir` naming the example graphs of the checkout at `root` by paths relative
 * to `dir` (the dev server joins rather than resolves graph paths, so absolute ones do not work
 * there). A server run from another checkout gets that checkout's graphs: they import LangChain
 * from its node_modules, so the process holds one copy of LangChain, the one the server's own
 * replacements (`agent_api/internal/runtime/`) are installed on. Until 2026-11-28 it got this
 * checkout's graphs, loaded a second copy (about 0.5 s more to ready) and ran LangChain's own
 * functions where the server replaces them, so `--root` comparisons favoured this checkout.
 */
function writeGraphsJson(dir: string, graphIds: readonly string[], root = repoRoot): string {
  const files: Record<string, string> = { chat: 'chat.ts', tools: 'tools.ts', sleep: 'sleep.ts' };
  const examplesDir = join(root, 'examples/graphs');
  const graphs = Object.fromEntries(
    graphIds.map((id) => [id, `./${relative(dir, join(examplesDir, files[id]!))}:graph`]),
  );
  const path = join(dir, 'langgraph.json');
  writeFileSync(path, JSON.stringify({ node_version: '20', graphs }, null, 2));
  return path;
}

/** The last lines of a server's log, for error messages (the log goes away with its directory). */
function logTail(logFile: string, lines = 20): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Waits until the server answers, and returns a handle that stops it and removes its directory. */
async function started(
  name: string,
  url: string,
  child: ChildProcess,
  dir: string,
  logFile: string,
  spawnedAt: number,
): Promise<RunningServer> {
  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(url, child, logFile);
  } catch (error) {
    const tail = logTail(logFile);
    await stop();
    throw new Error(`${(error as Error).message}\n${tail}`);
  }
  return { name, url, logFile, pid: child.pid, readyMs: performance.now() - spawnedAt, stop };
}

async function waitReady(url: string, child: ChildProcess, logFile: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode}; its log ${logFile} ends:`);
    try {
      const response = await fetch(`${url}/ok`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    // Often enough that the time to ready is measured to a few tens of ms.
    await sleep(20);
  }
  throw new Error(`server at ${url} not ready after ${timeoutMs} ms; its log ${logFile} ends:`);
}

function startChild(
  name: string,
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
): ChildProcess {
  const log = createWriteStream(logFile);
  // Its own process group, so that stopping it also stops the workers it spawns.
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  child.on('error', (error) => log.write(`${name} failed to start: ${error.message}\n`));
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  process.kill(-child.pid, 'SIGTERM');
  const timedOut = await Promise.race([exited.then(() => false), sleep(15_000).then(() => true)]);
  if (timedOut) process.kill(-child.pid, 'SIGKILL');
}

/**
 * tracepipe's agent server, with run tracing flowing through genai → batch → debug (quiet), or
 * with tracing off to show what it costs.
 */
export async function startTracepipe(
  graphIds: readonly string[],
  options: {
    tracing?: boolean;
    /** Node options before the entry point (`--expose-gc`, `--import <preload>`, `--cpu-prof`). */
    nodeArgs?: readonly string[];
    env?: NodeJS.ProcessEnv;
    /** `workers` (runs executing at once); the server's default when not given. */
    workers?: number;
    /** Another checkout (built, with its own node_modules) to run instead of this one, for A/B. */
    root?: string;
  } = {},
): Promise<RunningServer> {
  const tracing = options.tracing ?? true;
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
  const port = await freePort();
  const graphsJson = writeGraphsJson(dir, graphIds, options.root);
  const config = join(dir, 'bench.yaml');
  writeFileSync(
    config,
    [
      'receivers:',
      '  agent_api:',
      `    port: ${port}`,
      `    langgraph_config: ${graphsJson}`,
      `    data_dir: ${join(dir, 'data')}`,
      ...(options.workers !== undefined ? [`    workers: ${options.workers}`] : []),
      '    tracing:',
      `      enabled: ${tracing}`,
      'processors:',
      '  genai: {}',
      '  batch: {}',
      'exporters:',
      '  debug: {}',
      'service:',
      '  telemetry:',
      '    logs:',
      '      level: warn',
      '  pipelines:',
      '    traces:',
      '      receivers: [agent_api]',
      '      processors: [genai, batch]',
      '      exporters: [debug]',
      '',
    ].join('\n'),
  );
  const logFile = join(dir, 'server.log');
  const spawnedAt = performance.now();
  const child = startChild(
    'tracepipe',
    process.execPath,
    [...tracepipeArgs(options.nodeArgs, options.root), '--config', config],
    dir,
    options.env ?? {},
    logFile,
  );
  const name = `${tracing ? 'tracepipe' : 'tracepipe (no tracing)'}${options.root ? ` @${options.root}` : ''}`;
  return started(name, `http://127.0.0.1:${port}`, child, dir, logFile, spawnedAt);
}

/** The LangGraph.js in-memory dev server (`langgraphjs dev`), run from a temporary directory. */
export async function startLanggraphDev(graphIds: readonly string[]): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'langgraph-dev-bench-'));
  const port = await freePort();
  const graphsJson = writeGraphsJson(dir, graphIds);
  const cli = join(repoRoot, 'node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs');
  if (!existsSync(cli)) {
    // Not a devDependency: its optional platform packages leave package-lock.json in a state that
    // `npm ci` rejects, and only this benchmark needs it.
    throw new Error(
      'the LangGraph.js CLI is not installed; run `npm install --no-save @langchain/langgraph-cli@2` first',
    );
  }
  const logFile = join(dir, 'server.log');
  const spawnedAt = performance.now();
  const child = startChild(
    'langgraphjs dev',
    process.execPath,
    [cli, 'dev', '--port', String(port), '--host', '127.0.0.1', '--no-browser', '--config', graphsJson],
    dir,
    { NODE_ENV: 'development', LANGSMITH_TRACING: 'false', LANGCHAIN_TRACING_V2: 'false' },
    logFile,
  );
  return started('langgraphjs dev', `http://127.0.0.1:${port}`, child, dir, logFile, spawnedAt);
}
