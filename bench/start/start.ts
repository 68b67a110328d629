// Start-time benchmark of the `tracepipe` command: how long until `--version` has printed, until a
// config is validated, and until the proxy and the local agent server are ready (the "Everything is
// ready" log line, i.e. every listener is up), each as a whole child process from spawn to that
// point. The two ways bin/tracepipe.js can run are compared run by run, alternating:
//
//   dist    the compiled JavaScript in dist/ (what `npm install`/`npm pack` build; the default),
//           forced with TRACEPIPE_FROM_SOURCE=0 so that a source edited meanwhile does not
//           switch it to the sources; run `npm run build` first
//   source  the TypeScript sources compiled on the fly by tsx (TRACEPIPE_FROM_SOURCE=1)
//   root    the bin/tracepipe.js of another checkout, given with `--root` (with node_modules of its
//           own, or a link to these), e.g. an export of the commit before dist/ existed:
//             git archive <commit> | tar -x -C /tmp/before && ln -s $PWD/node_modules /tmp/before/
//
//   node --import tsx bench/start/start.ts [--runs 10] [--modes dist,source[,root --root <dir>]]
//        [--scenarios version,validate,proxy,local]

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    modes: { type: 'string', default: 'dist,source' },
    scenarios: { type: 'string', default: 'version,validate,proxy,local' },
    root: { type: 'string' },
  },
});
const runs = Number(values.runs);
const repo = resolve(import.meta.dirname, '..', '..');
const modes = values.modes.split(',');
if (modes.includes('root') && !values.root) throw new Error('mode root needs --root <checkout>');
const scenarios = values.scenarios.split(',');

interface Scenario {
  readonly args: (root: string) => string[];
  /** Resolve once the process reached the measured point; undefined: when it exits. */
  readonly readyLine?: RegExp;
  readonly env?: (dataDir: string) => Record<string, string>;
}

const SCENARIOS: Record<string, Scenario> = {
  version: { args: () => ['--version'] },
  validate: { args: (root) => ['validate', '--config', join(root, 'configs/proxy.yaml')] },
  proxy: {
    args: (root) => ['--config', join(root, 'configs/proxy.yaml')],
    readyLine: /Everything is ready/,
    env: (dataDir) => ({
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      LANGSMITH_PORT: '0',
      DATA_DIR: dataDir,
      SERVICE_API_KEY: 'bench',
    }),
  },
  local: {
    args: (root) => ['--config', join(root, 'configs/local.yaml')],
    readyLine: /Everything is ready/,
    env: (dataDir) => ({
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      LANGSMITH_PORT: '0',
      AGENT_API_PORT: '0',
      TRACE_EXPLORER_PORT: '0',
      DATA_DIR: dataDir,
    }),
  },
};

/** Milliseconds from spawn to the scenario's point (exit, or the ready line then SIGTERM). */
async function once(mode: string, scenario: Scenario): Promise<number> {
  const root = mode === 'root' ? resolve(values.root!) : repo;
  const dataDir = mkdtempSync(join(tmpdir(), 'tracepipe-start-'));
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', ...scenario.env?.(dataDir) };
  delete env.TRACEPIPE_FROM_SOURCE;
  if (mode === 'source') env.TRACEPIPE_FROM_SOURCE = '1';
  if (mode === 'dist') env.TRACEPIPE_FROM_SOURCE = '0';
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, 'bin/tracepipe.js'), ...scenario.args(root)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let elapsed: number;
  try {
    if (scenario.readyLine) {
      const lines = createInterface({ input: child.stdout });
      const ready = new Promise<number>((resolve) => {
        lines.on('line', (line) => {
          if (scenario.readyLine!.test(line)) resolve(performance.now() - started);
        });
      });
      elapsed = await Promise.race([
        ready,
        exited.then((code) => Promise.reject(new Error(`exited ${code}: ${stderr}`))),
      ]);
      child.kill('SIGTERM');
      await exited;
    } else {
      child.stdout.resume();
      const code = await exited;
      if (code !== 0) throw new Error(`exited ${code}: ${stderr}`);
      elapsed = performance.now() - started;
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return elapsed;
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const median =
    sorted.length % 2
      ? sorted[(sorted.length - 1) / 2]!
      : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  return `median ${median.toFixed(0)} ms (min ${sorted[0]!.toFixed(0)}, max ${sorted.at(-1)!.toFixed(0)})`;
}

for (const name of scenarios) {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(`unknown scenario ${name} (${Object.keys(SCENARIOS).join(', ')})`);
  const samples = new Map(modes.map((mode) => [mode, [] as number[]]));
  for (const mode of modes) await once(mode, scenario); // warm-up: file cache, tsx's compile cache
  for (let run = 0; run < runs; run++) {
    for (const mode of modes) samples.get(mode)!.push(await once(mode, scenario));
  }
  for (const mode of modes) console.log(`${name.padEnd(9)} ${mode.padEnd(7)} ${summary(samples.get(mode)!)}`);
}
