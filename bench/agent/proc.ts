// What /proc (Linux) says of a benchmarked server process: its CPU time, children included.

import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS = 100;

/**
 * CPU time (user + system) the server has used, ms, from /proc (Linux): the process, the children
 * it has running (the LangGraph.js dev server runs behind the CLI that starts it, with workers of
 * its own) and those it has waited for. The server's cost per operation, which other load on the
 * machine changes much less than latency.
 */
export function cpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime, stime, cutime and cstime are fields 14–17 of the line, 12–15 after "pid (comm) ".
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    let ms = (ticks * 1000) / CLOCK_TICKS;
    for (const child of childrenOf(pid)) ms += cpuMsOf(child) || 0;
    return ms;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU time (user + system) of the process's main thread alone, ms: the thread that runs the
 * event loop (its thread id is the process id). Beside `cpuMsOf`, it tells whether a server is
 * bound by that one thread while the machine has cores to spare.
 */
export function mainThreadCpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    let list = '';
    try {
      list = readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').trim();
    } catch {
      continue; // the thread ended since the directory was read
    }
    if (list !== '') children.push(...list.split(' ').map(Number));
  }
  return children;
}
