#!/usr/bin/env node
// Processes a test run left behind, found by an environment variable the run set (its "mark"):
// every process the tests start inherits it, whatever process group or session it moved to, and
// no process the run did not start has it (PostgreSQL, Redis or Docker daemons started before, the
// machine's other work). Linux only (/proc); elsewhere it finds nothing.
//
//   node scripts/leftover-processes.mjs <VARIABLE>=<value>   lists them, kills them, exits 1 if any
import { readFileSync, readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** Processes whose environment holds `entry` (`NAME=value`), other than this one and its ancestors. */
export function markedProcesses(entry) {
  const ancestors = new Set();
  for (let pid = process.pid; pid > 1;) {
    ancestors.add(pid);
    try {
      pid = Number(
        readFileSync(`/proc/${pid}/stat`, 'utf8')
          .replace(/^.*\) /s, '')
          .split(' ')[1],
      );
    } catch {
      break;
    }
  }
  const found = [];
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return found;
  }
  for (const name of pids) {
    const pid = Number(name);
    if (ancestors.has(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry)) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const state = readFileSync(`/proc/${pid}/stat`, 'utf8')
        .replace(/^.*\) /s, '')
        .split(' ')[0];
      if (state === 'Z') continue; // exited, waiting for its parent to collect it
      found.push({ pid, command });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/**
 * Waits up to `graceMs` for marked processes to end by themselves (a teardown may still be
 * finishing), then SIGKILLs what is left; returns what had to be killed.
 */
export async function reapMarked(entry, graceMs = 5_000) {
  const deadline = Date.now() + graceMs;
  let left = markedProcesses(entry);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(200);
    left = markedProcesses(entry);
  }
  for (const { pid } of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  return left;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const entry = process.argv[2];
  if (!entry || !entry.includes('=')) {
    process.stderr.write('usage: node scripts/leftover-processes.mjs <VARIABLE>=<value>\n');
    process.exit(2);
  }
  const left = await reapMarked(entry);
  for (const { pid, command } of left) process.stderr.write(`left running (killed): ${pid} ${command}\n`);
  if (left.length > 0) {
    process.stderr.write(`${left.length} process(es) started by the run were still running after it\n`);
    process.exit(1);
  }
  process.stdout.write('No process started by the run is left.\n');
}
