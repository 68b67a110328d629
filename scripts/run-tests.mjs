#!/usr/bin/env node
// Runs every test file (`*.test.ts` under test/, plugins/, examples/ and src/) with node's test
// runner, compiling TypeScript with tsx. Extra arguments are passed to `node --test` (for example
// `--test-name-pattern=batch`); file arguments narrow the run to those files.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { reapMarked } from './leftover-processes.mjs';

const roots = ['src', 'plugins', 'examples', 'test'];
function find(dir) {
  let found = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found = found.concat(find(path));
    else if (entry.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const args = process.argv.slice(2);
const files = args.filter((arg) => arg.endsWith('.ts'));
const flags = args.filter((arg) => !arg.endsWith('.ts'));
const targets = files.length > 0 ? files : roots.flatMap((root) => find(root)).sort();
// The example graphs call a hosted model when OPENAI_API_KEY is set; tests always run offline.
const env = { ...process.env };
delete env.OPENAI_API_KEY;
delete env.OPENAI_BASE_URL;
// Every process the tests start inherits this mark, whatever process group it moves to: what is
// still running after the run (a test that timed out, or a run interrupted) is found by it, killed
// and reported. Tests kill their own processes' groups (src/testkit/processes.ts); this is the net.
const MARK = `TRACEPIPE_TEST_RUN=${randomUUID()}`;
env.TRACEPIPE_TEST_RUN = MARK.slice(MARK.indexOf('=') + 1);
// Files run in parallel, each in its own process: they are independent (ports 0, temp dirs), and
// most of their time is spent waiting on child processes and sockets. TEST_CONCURRENCY overrides.
// The fault tests (test/faults/) run afterwards, one file at a time: each drives a real proxy at
// load against a backend whose timing is the fault, and sharing the two cores with other files
// would turn their bounded waits into flakes.
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
const isFaultTest = (path) => path.split(/[\\/]/).includes('faults');
const phases = [
  { files: targets.filter((path) => !isFaultTest(path)), concurrency },
  { files: targets.filter(isFaultTest), concurrency: '1' },
].filter((phase) => phase.files.length > 0);

let interrupted = false;

/** Runs one phase; resolves with its exit status. A SIGINT/SIGTERM to this runner ends it and what it started. */
function runPhase(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit', env });
    const interrupt = (signal) => {
      interrupted = true;
      child.kill(signal);
      void reapMarked(MARK, 3_000).then(() => process.exit(130));
    };
    process.once('SIGINT', interrupt);
    process.once('SIGTERM', interrupt);
    child.once('exit', (code, signal) => {
      process.off('SIGINT', interrupt);
      process.off('SIGTERM', interrupt);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

// dist/ brought up to date once, before any file starts: the tests that pack tracepipe (npm pack
// builds it when a source is newer) would otherwise each compile it inside their time budget, and
// at the same moment into the same dist/.
const build = spawnSync(process.execPath, [join(import.meta.dirname, 'build.mjs'), '--if-stale'], { stdio: 'inherit' });
if (build.status !== 0) process.stderr.write('build of dist/ failed: the tests that pack tracepipe will fail\n');

let status = 0;
for (const phase of phases) {
  const result = await runPhase(
    // `tracepipe-source`: `tracepipe/*` (the package's exports, which the example plugin imports)
    // resolves to src/ rather than to dist/, like every other import in the tests.
    [
      '--import',
      'tsx',
      '--conditions=tracepipe-source',
      '--test',
      `--test-concurrency=${phase.concurrency}`,
      '--test-reporter=spec',
      '--test-timeout=180000',
      ...flags,
      ...phase.files,
    ],
  );
  if (result !== 0) status = result;
  if (interrupted) await new Promise(() => {}); // the interrupt handler exits once the processes are gone
}
const left = await reapMarked(MARK);
for (const { pid, command } of left) process.stderr.write(`left running by a test (killed): ${pid} ${command}\n`);
if (left.length > 0) {
  process.stderr.write(`${left.length} process(es) the tests started were still running after them\n`);
  status ||= 1;
}
process.exit(status);
