// The fault matrix of "acknowledged means kept", measured: runs each scenario of
// test/faults/scenarios.ts (the same ones the fault tests assert on, bigger by default) against
// the real proxy CLI and a capture backend, and prints a markdown table — spans acknowledged,
// delivered (distinct), lost, duplicates, time to drain after recovery, exit codes — then the
// details of each run (refusals, WARN/ERROR lines) as JSON.
//
//   node --import tsx test/faults/matrix.ts [--scale 1] [--only slowSigterm,kill9Hung] [--json]
//
// FAULTS_TRACEPIPE_ROOT=<dir> measures another checkout (see test/faults/README.md).

import { parseArgs } from 'node:util';
import type { FaultResult } from './harness.ts';
import { FaultLab, TRACEPIPE_ROOT, formatExit } from './harness.ts';
import * as scenarios from './scenarios.ts';

const { values } = parseArgs({
  options: {
    /** Multiplies every scenario's span count. */
    scale: { type: 'string', default: '1' },
    /** Comma-separated scenario names (see the list below); all by default. */
    only: { type: 'string' },
    /** Print the results as JSON lines too. */
    json: { type: 'boolean', default: false },
  },
});
const scale = Number(values.scale);
const n = (spans: number) => Math.max(100, Math.round(spans * scale));
/** Bigger runs take longer to drain: the bound grows with the size (never asserted, only a cut-off). */
const drain = (ms: number) => Math.round(ms * Math.max(1, scale));

interface Entry {
  readonly name: string;
  readonly run: (lab: FaultLab) => Promise<FaultResult | { skip: string }>;
}

const matrix: Entry[] = [
  {
    name: 'healthy',
    run: (lab) => scenarios.healthy(lab, { spans: n(40_000), concurrency: 8 }, { drainTimeoutMs: drain(60_000) }),
  },
  { name: 'sigtermFlush', run: (lab) => scenarios.sigtermFlush(lab, { spans: n(20_000), concurrency: 8 }) },
  {
    name: 'slowSigterm',
    run: (lab) =>
      scenarios.slowSigterm(
        lab,
        { spans: n(40_000), concurrency: 8 },
        { slowMs: 2000, sigtermAfterSpans: n(32_000), drainTimeoutMs: drain(60_000) },
      ),
  },
  {
    name: 'hungSigterm',
    run: (lab) =>
      scenarios.hungSigterm(
        lab,
        { spans: n(40_000), concurrency: 8 },
        { shutdownTimeoutMs: 2000, drainTimeoutMs: drain(60_000) },
      ),
  },
  {
    name: 'lossySigterm',
    run: (lab) => scenarios.lossySigterm(lab, { spans: n(10_000) }, { shutdownTimeoutMs: 2000 }),
  },
  {
    name: 'kill9Outage',
    run: (lab) =>
      scenarios.kill9Outage(
        lab,
        { spans: n(40_000), perRequest: 50, concurrency: 4 },
        { killAfterSpans: n(20_000), drainTimeoutMs: drain(60_000) },
      ),
  },
  {
    name: 'kill9Hung',
    run: (lab) =>
      scenarios.kill9Hung(
        lab,
        { spans: n(40_000), concurrency: 8, encoding: 'json' },
        { drainTimeoutMs: drain(60_000) },
      ),
  },
  {
    name: 'throttleOnce',
    run: (lab) => scenarios.throttleOnce(lab, { spans: n(20_000) }, { retryAfterS: 3600, drainTimeoutMs: 60_000 }),
  },
  {
    name: 'errorOutage',
    run: (lab) => scenarios.errorOutage(lab, { spans: n(20_000) }, { status: 503, drainTimeoutMs: drain(60_000) }),
  },
  {
    name: 'diskCap',
    run: (lab) =>
      scenarios.diskFull(
        lab,
        { spans: n(30_000), entropyBytes: 256 },
        {
          journalMaxBytes: 2 * 1024 * 1024,
          label: 'journal cap 2 MiB reached, backend down',
          drainTimeoutMs: drain(30_000),
        },
      ),
  },
  {
    name: 'diskTmpfs',
    run: async (lab) => {
      const dir = await lab.tmpfs(5);
      if (typeof dir !== 'string') return dir;
      return scenarios.diskFull(
        lab,
        { spans: n(40_000), entropyBytes: 256 },
        { dataDir: dir, label: 'DATA_DIR full (5 MB tmpfs), backend down', drainTimeoutMs: drain(30_000) },
      );
    },
  },
];

const only = values.only ? new Set(values.only.split(',').map((name) => name.trim())) : undefined;
if (only) {
  const unknown = [...only].filter((name) => !matrix.some((entry) => entry.name === name));
  if (unknown.length > 0)
    throw new Error(
      `unknown scenario(s) ${unknown.join(', ')}; known: ${matrix.map((entry) => entry.name).join(', ')}`,
    );
}

function seconds(ms: number | undefined): string {
  return ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s`;
}

function exitColumn(result: FaultResult): string {
  const parts: string[] = [];
  if (result.faultExit) parts.push(`fault: ${formatExit(result.faultExit)}`);
  if (result.finalExit) parts.push(`${result.faultExit ? 'then' : 'SIGTERM'}: ${formatExit(result.finalExit)}`);
  return parts.join('; ') || '–';
}

/** What the other columns do not show: liveness after recovery, losses kept vs lost, shutdown losses. */
function notes(result: FaultResult): string {
  const out: string[] = [];
  const d = result.details as {
    accepted_again?: boolean;
    after_recovery?: { requests: number; acked: number; refused_by_status: Record<string, number> };
    after_restart?: { lost: number };
    while_full?: { refused_without_retry_after: number };
  };
  if (d.after_recovery) {
    const refused = Object.entries(d.after_recovery.refused_by_status)
      .map(([s, c]) => `${s}×${c}`)
      .join(' ');
    out.push(
      d.accepted_again
        ? 'accepts again after recovery'
        : `NOT accepting again after recovery: ${d.after_recovery.acked} of ${d.after_recovery.requests} requests acked${refused ? ` (${refused})` : ''}`,
    );
  }
  if (d.while_full && d.while_full.refused_without_retry_after > 0)
    out.push(`${d.while_full.refused_without_retry_after} refusals without Retry-After`);
  if (result.lost > 0 && d.after_restart)
    out.push(
      d.after_restart.lost < result.lost
        ? `a restart delivered ${result.lost - d.after_restart.lost} of the missing`
        : 'a restart delivered none of the missing',
    );
  if (result.load.refusedWithoutRetryAfter > 0 && !d.while_full)
    out.push(`${result.load.refusedWithoutRetryAfter} refusals without Retry-After`);
  const errors = Object.entries(result.logged).filter(([line]) => line.startsWith('ERROR'));
  if (errors.length > 0)
    out.push(`ERROR lines: ${errors.map(([line, count]) => `${line.slice(6)} ×${count}`).join('; ')}`);
  return out.join('; ').replace(/\|/g, '/') || '';
}

function row(result: FaultResult): string {
  const refused =
    result.load.refusedSpans > 0
      ? ` (${result.load.refusedSpans} refused: ${Object.entries(result.load.refusedByStatus)
          .map(([s, c]) => `${s}×${c}`)
          .join(' ')})`
      : '';
  const lost =
    result.lost > 0 && result.details.after_restart
      ? `${result.lost} (after a restart: ${(result.details.after_restart as { lost: number }).lost})`
      : String(result.lost);
  const dupPercent = result.acked > 0 ? ` (${((100 * result.duplicates) / result.acked).toFixed(1)} %)` : '';
  return `| ${result.fault} | ${result.acked}${refused} | ${result.delivered} | ${lost} | ${result.duplicates}${dupPercent} | ${result.lost > 0 ? 'never (see Lost)' : seconds(result.drainMs)} | ${exitColumn(result)} | ${notes(result)} |`;
}

const rows: string[] = [];
const details: Record<string, unknown>[] = [];
const started = Date.now();
for (const entry of matrix) {
  if (only && !only.has(entry.name)) continue;
  const lab = new FaultLab();
  process.stderr.write(`${entry.name}: running...\n`);
  const t0 = Date.now();
  try {
    const result = await entry.run(lab);
    if ('skip' in result) {
      rows.push(`| ${entry.name} | skipped: ${result.skip} | | | | | | |`);
      continue;
    }
    rows.push(row(result));
    details.push({
      scenario: entry.name,
      seconds: Math.round((Date.now() - t0) / 1000),
      load: result.load,
      logged: result.logged,
      details: result.details,
    });
    process.stderr.write(
      `${entry.name}: ${result.acked} acked, ${result.lost} lost, ${result.duplicates} duplicates (${Math.round((Date.now() - t0) / 1000)} s)\n`,
    );
    if (values.json) console.log(JSON.stringify({ scenario: entry.name, ...result }));
  } catch (error) {
    rows.push(`| ${entry.name} | error: ${(error as Error).message.replace(/\|/g, '/').slice(0, 200)} | | | | | | |`);
  } finally {
    await lab.cleanup();
  }
}

const header = [
  `Fault matrix, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, scale ${scale}, tracepipe at ${TRACEPIPE_ROOT}, ${Math.round((Date.now() - started) / 1000)} s in all.`,
  '',
  '| Fault | Spans acked | Delivered (distinct) | Lost | Duplicates | Drain after recovery | Exit code | Notes |',
  '|---|---|---|---|---|---|---|---|',
];
console.log([...header, ...rows].join('\n'));
console.log('\nDetails (per scenario: the load, WARN/ERROR lines of the proxies, scenario figures):\n');
for (const entry of details)
  console.log(
    JSON.stringify({
      scenario: entry.scenario,
      seconds: entry.seconds,
      load: entry.load,
      logged: entry.logged,
      details: entry.details,
    }),
  );
