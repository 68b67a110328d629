// Child processes of tests, each in a process group of its own and killed as a group, whatever
// way the test ends: its own teardown (`stop()`), a timeout (the test's promise is abandoned, but
// the file's process ends and its exit kills what is left), or the runner interrupting the file
// (SIGINT/SIGTERM). A process that starts others (npm running a script, a server and its workers)
// leaves none behind. Test-only, like browser.ts: tsconfig.build.json leaves it out of the build.

import { spawn } from 'node:child_process';
import type { ChildProcess, ChildProcessWithoutNullStreams, SpawnOptions } from 'node:child_process';
import { finished } from 'node:stream/promises';

const running = new Set<ChildProcess>();

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** SIGKILLs every group still running: the last resort at exit, synchronous as 'exit' requires. */
function killAll(): void {
  for (const child of running) signalGroup(child, 'SIGKILL');
  running.clear();
}

let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll();
      // What the default action would have done, now that the children are gone.
      process.kill(process.pid, signal);
    });
  }
}

export interface GroupProcess {
  /** Typed with its pipes, as tests spawn with `stdio: ['ignore', 'pipe', 'pipe']` (or the default). */
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves with the exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  /**
   * Sends `signal` to the whole group and waits for the process to exit; after `killAfterMs`
   * without an exit, SIGKILLs the group. Safe to call more than once, and after the exit.
   */
  stop(signal?: NodeJS.Signals, killAfterMs?: number): Promise<number | null>;
}

/** `spawn` in a new process group, remembered until it exits, and killed with its group at the latest when this process ends. */
export function spawnGroup(command: string, args: readonly string[], options: SpawnOptions = {}): GroupProcess {
  hookExit();
  const child = spawn(command, args, { ...options, detached: true }) as ChildProcessWithoutNullStreams;
  running.add(child);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      // The leader is gone; what it started may not be: the group goes too.
      signalGroup(child, 'SIGKILL');
      running.delete(child);
      resolve(code);
    });
    child.once('error', () => {
      running.delete(child);
      resolve(null);
    });
  });
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 15_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return exited;
    signalGroup(child, signal);
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), killAfterMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  return { child, exited, stop };
}

export interface GroupRun {
  /** The exit code; null when a signal ended it (the timeout's SIGKILL among them). */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the group was killed at `timeoutMs`. */
  readonly timedOut: boolean;
}

/**
 * Runs a command to its end in a process group of its own, as `spawnGroup`, and resolves with what
 * it wrote. For commands that start others (npm running a script, `node --test` running files):
 * unlike `spawnSync`, it does not block the test's timers, so a test timeout still fires, and on
 * `timeoutMs` (default 5 min) the whole group is killed, not only the command.
 */
export async function runGroup(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { readonly timeoutMs?: number } = {},
): Promise<GroupRun> {
  const { timeoutMs = 300_000, ...spawnOptions } = options;
  const run = spawnGroup(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  run.child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  run.child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void run.stop('SIGKILL');
  }, timeoutMs);
  try {
    const code = await run.exited;
    // The output's last chunks may still be in the pipes when 'exit' comes.
    await Promise.all([run.child.stdout, run.child.stderr].map((stream) => finished(stream).catch(() => undefined)));
    return { code, stdout, stderr, timedOut };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `source` as an ES module in a child Node process of its own group, as `runGroup`: with tsx,
 * so that it can import the TypeScript modules under test by URL. `args` are its `process.argv`
 * from index 1.
 */
export function runModuleSource(
  source: string,
  args: readonly string[] = [],
  nodeArgs: readonly string[] = [],
): Promise<GroupRun> {
  return runGroup(process.execPath, [
    ...nodeArgs,
    '--import',
    'tsx',
    '--input-type=module',
    '--eval',
    source,
    '--',
    ...args,
  ]);
}

/** Stops every process `spawnGroup` started that still runs (for `after` hooks). */
export async function stopAllGroups(signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 5_000): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      signalGroup(child, signal);
      const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), killAfterMs);
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
      clearTimeout(timer);
    }),
  );
}
