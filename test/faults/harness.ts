// The fault harness: a capture backend whose failure mode is switched at run time, a load sender
// that records which spans the proxy acknowledged, the real proxy CLI as a child process, and the
// bookkeeping that turns one fault run into figures (acknowledged, delivered, lost, duplicates,
// time to drain, exit codes). Used by test/faults/*.test.ts and test/faults/matrix.ts.
//
// The pieces live in test/support/ (capture_backend.ts, otlp_load.ts, proxy_process.ts) and are
// re-exported here; waiting is the test kit's `eventually`.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CaptureBackend } from '../support/capture_backend.ts';
import type { LoadSender, LoadSummary } from '../support/otlp_load.ts';
import type { ExitReport, ProxyProcess } from '../support/proxy_process.ts';
import { killAllProxies } from '../support/proxy_process.ts';

export { CaptureBackend, describeMode, mode, runIdsOf } from '../support/capture_backend.ts';
export type { BackendMode } from '../support/capture_backend.ts';
export { LoadSender, genAiRequest, runIdOfTrace } from '../support/otlp_load.ts';
export type { LoadOptions, LoadSummary, RequestRecord } from '../support/otlp_load.ts';
export {
  JOURNAL_ABSENT,
  PROXY_CONFIG,
  ProxyProcess,
  REPO_ROOT,
  TRACEPIPE_ROOT,
  killAllProxies,
  proxyConfigVariant,
} from '../support/proxy_process.ts';
export type { ExitReport, ProxyOptions } from '../support/proxy_process.ts';

const run = promisify(execFile);

/** Bytes of the files under `dir`, recursively (0 when it does not exist). */
export async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await dirBytes(path);
    else
      total += await stat(path).then(
        (info) => info.size,
        () => 0,
      );
  }
  return total;
}

/**
 * Resolves once the bytes under `dir` have not changed for `quietMs` (checked every 250 ms), or
 * after `timeoutMs` at the latest; returns the last size. For "the proxy has written to disk all
 * it is going to" without knowing its internals.
 */
export async function diskQuiet(dir: string, quietMs = 3000, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = await dirBytes(dir);
  let since = Date.now();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await dirBytes(dir);
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) break;
  }
  return last;
}

/** What one process's end looked like, without its log lines. */
export interface ExitSummary {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stoppedCleanly: boolean;
  readonly lostItemsReported?: number;
  /** ERROR lines (messages), at most 10. */
  readonly errors: readonly string[];
}

export function exitSummary(report: ExitReport): ExitSummary {
  return {
    code: report.code,
    signal: report.signal,
    stoppedCleanly: report.stoppedCleanly,
    ...(report.lostItemsReported !== undefined ? { lostItemsReported: report.lostItemsReported } : {}),
    errors: report.errors.slice(0, 10),
  };
}

/** How the exit looks in a table: `0 "Stopped cleanly."`, `1`, `SIGKILL`. */
export function formatExit(exit: ExitSummary | undefined): string {
  if (!exit) return '–';
  if (exit.code === null) return exit.signal ?? '?';
  return `${exit.code}${exit.stoppedCleanly ? ' "Stopped cleanly."' : ''}${exit.lostItemsReported !== undefined ? ` (lost_items ${exit.lostItemsReported})` : ''}`;
}

/** The figures of one fault run. */
export interface FaultResult {
  readonly fault: string;
  readonly load: LoadSummary;
  /** Spans acknowledged (2xx): each one's run id is promised to the backend. */
  readonly acked: number;
  /** Of those, how many reached the capture backend at least once. */
  readonly delivered: number;
  readonly lost: number;
  /** Up to 5 lost run ids, for messages. */
  readonly missingSample: readonly string[];
  /** Deliveries beyond the first of acknowledged runs. */
  readonly duplicates: number;
  /** Runs delivered that were never acknowledged (requests refused or cut, yet taken): allowed. */
  readonly unackedDelivered: number;
  /** From recovery (backend back, or restart) to the last acknowledged run's first delivery; undefined if some never arrived. */
  readonly drainMs?: number;
  /** The process the fault hit (SIGTERM, kill -9), when the fault ends one. */
  readonly faultExit?: ExitSummary;
  /** The last process, stopped with SIGTERM once everything was delivered (or the wait gave up). */
  readonly finalExit?: ExitSummary;
  readonly backend: string;
  /** WARN and ERROR messages of every proxy process of the run, with their counts. */
  readonly logged: Record<string, number>;
  /** Scenario-specific figures and checks. */
  readonly details: Record<string, unknown>;
}

/** Computes a result from what the sender recorded and what the backend received. */
export function tally(args: {
  fault: string;
  sender: LoadSender | readonly LoadSender[];
  backend: CaptureBackend;
  recoveryAt?: number;
  faultExit?: ExitReport;
  finalExit?: ExitReport;
  /** Every proxy process of the run, for their WARN and ERROR lines. */
  proxies?: readonly ProxyProcess[];
  /** Whose acknowledged spans the drain time is measured on (default: every sender's). */
  drainOf?: LoadSender;
  details?: Record<string, unknown>;
}): FaultResult {
  const logged: Record<string, number> = {};
  for (const proxy of args.proxies ?? []) {
    for (const line of proxy.lines) {
      if ((line.level ?? 0) < 40) continue;
      const key = `${(line.level ?? 0) >= 50 ? 'ERROR' : 'WARN'} ${line.msg ?? line.text}`;
      logged[key] = (logged[key] ?? 0) + 1;
    }
  }
  const senders = Array.isArray(args.sender) ? (args.sender as readonly LoadSender[]) : [args.sender as LoadSender];
  const acked = new Set<string>();
  for (const sender of senders) for (const id of sender.acked) acked.add(id);
  const missing = args.backend.missing(acked);
  const last = args.backend.lastFirstDelivery(args.drainOf ? args.drainOf.acked : acked);
  const load = mergeSummaries(senders.map((sender) => sender.summary()));
  return {
    fault: args.fault,
    load,
    acked: acked.size,
    delivered: acked.size - missing.length,
    lost: missing.length,
    missingSample: missing.slice(0, 5),
    duplicates: args.backend.duplicatesAmong(acked),
    unackedDelivered: args.backend.distinct - (acked.size - missing.length),
    ...(last !== undefined && args.recoveryAt !== undefined ? { drainMs: Math.max(0, last - args.recoveryAt) } : {}),
    ...(args.faultExit ? { faultExit: exitSummary(args.faultExit) } : {}),
    ...(args.finalExit ? { finalExit: exitSummary(args.finalExit) } : {}),
    backend: args.backend.summary(),
    logged,
    details: args.details ?? {},
  };
}

function mergeSummaries(list: LoadSummary[]): LoadSummary {
  const merge = (key: 'refusedByStatus' | 'failures') => {
    const out: Record<string, number> = {};
    for (const summary of list) for (const [k, v] of Object.entries(summary[key])) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const sum = (key: keyof LoadSummary) => list.reduce((total, summary) => total + (summary[key] as number), 0);
  return {
    requests: sum('requests'),
    ackedRequests: sum('ackedRequests'),
    ackedSpans: sum('ackedSpans'),
    refusedRequests: sum('refusedRequests'),
    refusedSpans: sum('refusedSpans'),
    failedRequests: sum('failedRequests'),
    failedSpans: sum('failedSpans'),
    refusedByStatus: merge('refusedByStatus'),
    refusedWithoutRetryAfter: sum('refusedWithoutRetryAfter'),
    failures: merge('failures'),
  };
}

/** A result in one line, for assertion messages. */
export function describeResult(result: FaultResult): string {
  return JSON.stringify({
    fault: result.fault,
    acked: result.acked,
    delivered: result.delivered,
    lost: result.lost,
    missing: result.missingSample,
    duplicates: result.duplicates,
    drain_ms: result.drainMs,
    fault_exit: result.faultExit,
    final_exit: result.finalExit,
    load: result.load,
    backend: result.backend,
    logged: result.logged,
    details: result.details,
  });
}

/**
 * What one test file (or one benchmark scenario) owns: temp dirs, tmpfs mounts, capture backends
 * and load senders, all released by `cleanup()` (call it from `after`). Proxies are killed too —
 * only the ones this process started.
 */
export class FaultLab {
  private readonly dirs: string[] = [];
  private readonly mounts: string[] = [];
  private readonly backends: CaptureBackend[] = [];
  private readonly senders: LoadSender[] = [];

  async tempDir(prefix = 'tp-fault-'): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    this.dirs.push(dir);
    return dir;
  }

  backend(): CaptureBackend {
    const backend = new CaptureBackend();
    this.backends.push(backend);
    return backend;
  }

  track(sender: LoadSender): LoadSender {
    this.senders.push(sender);
    return sender;
  }

  /**
   * Mounts a tmpfs of `sizeMb` MB on a fresh temp dir; returns its path, or `{ skip }` saying why
   * it cannot (not root, no mount permission, no `mount`). Unmounted by cleanup().
   */
  async tmpfs(sizeMb: number): Promise<string | { skip: string }> {
    if (process.platform !== 'linux') return { skip: `tmpfs mounts need Linux (this is ${process.platform})` };
    if (process.getuid?.() !== 0)
      return { skip: 'mounting a tmpfs needs root (run the tests as root to include this variant)' };
    const dir = await this.tempDir('tp-fault-tmpfs-');
    try {
      await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', dir]);
    } catch (error) {
      return {
        skip: `mount -t tmpfs failed (${(error as Error).message.trim().split('\n')[0]}): no CAP_SYS_ADMIN in this container?`,
      };
    }
    this.mounts.push(dir);
    return dir;
  }

  async cleanup(): Promise<void> {
    for (const sender of this.senders) await sender.stop(true).catch(() => undefined);
    await killAllProxies();
    for (const backend of this.backends) await backend.close().catch(() => undefined);
    for (const dir of this.mounts.splice(0)) {
      await run('umount', [dir]).catch(() => run('umount', ['-l', dir]).catch(() => undefined));
    }
    for (const dir of this.dirs.splice(0)) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

// --- Assertions shared by the fault tests ---------------------------------------------------------

/** Every acknowledged span reached the backend at least once. */
export function assertNothingLost(result: FaultResult, context = ''): void {
  assert.ok(result.acked > 0, `nothing was acknowledged, so the test proves nothing: ${describeResult(result)}`);
  assert.equal(
    result.lost,
    0,
    `${result.lost} of ${result.acked} acknowledged spans never reached the backend${context ? ` ${context}` : ''}: ${describeResult(result)}`,
  );
}

/** Duplicates among acknowledged spans stay under `ratio` of them. */
export function assertFewDuplicates(result: FaultResult, ratio = 0.01): void {
  assert.ok(
    result.duplicates < ratio * result.acked,
    `${result.duplicates} duplicate deliveries for ${result.acked} acknowledged spans (${((100 * result.duplicates) / Math.max(1, result.acked)).toFixed(1)} %, limit ${ratio * 100} %): ${describeResult(result)}`,
  );
}

/**
 * The exit of a SIGTERM'd proxy tells the truth: exit code 0 exactly when "Stopped cleanly." was
 * printed; a reported loss means a non-zero code; and, when `lostInTheEnd` is given (acknowledged
 * spans that never arrived, after any restart and drain, where only the shutdown can have lost
 * them), exit 0 is allowed only if it is 0.
 */
export function assertHonestExit(
  exit: ExitSummary | undefined,
  lostInTheEnd: number | undefined,
  result?: FaultResult,
): void {
  const where = result ? `: ${describeResult(result)}` : '';
  assert.ok(exit, `no exit recorded${where}`);
  assert.notEqual(exit.code, null, `the proxy did not exit by itself after SIGTERM (${exit.signal})${where}`);
  if (exit.code === 0) assert.ok(exit.stoppedCleanly, `exit code 0 without "Stopped cleanly."${where}`);
  else assert.ok(!exit.stoppedCleanly, `"Stopped cleanly." printed, yet exit code ${exit.code}${where}`);
  if ((exit.lostItemsReported ?? 0) > 0)
    assert.notEqual(exit.code, 0, `the proxy reported ${exit.lostItemsReported} lost items and still exited 0${where}`);
  if (exit.code === 0 && lostInTheEnd !== undefined) {
    assert.equal(
      lostInTheEnd,
      0,
      `exit code 0 and "Stopped cleanly.", yet ${lostInTheEnd} acknowledged spans never reached the backend${where}`,
    );
  }
}

/** A clean stop: exit code 0 and "Stopped cleanly.". */
export function assertStoppedCleanly(exit: ExitSummary | undefined, result?: FaultResult): void {
  const where = result ? `: ${describeResult(result)}` : '';
  assert.ok(exit, `no exit recorded${where}`);
  assert.equal(exit.code, 0, `exit code ${exit.code ?? exit.signal}, expected 0${where}`);
  assert.ok(exit.stoppedCleanly, `no "Stopped cleanly."${where}`);
}
