// Preloaded (`node --expose-gc --import`) into the agent server process by `memory.ts`: on
// SIGUSR2 it collects garbage, then writes the process's memory figures (and, with
// $TRACEPIPE_BENCH_SNAPSHOTS set, a heap snapshot into that directory) to $TRACEPIPE_BENCH_HEAP,
// so that the benchmark sees what stays reachable, not what the collector has not reached yet.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';

const out = process.env.TRACEPIPE_BENCH_HEAP;
const snapshots = process.env.TRACEPIPE_BENCH_SNAPSHOTS;
let probes = 0;

process.on('SIGUSR2', () => {
  globalThis.gc?.();
  globalThis.gc?.();
  const memory = process.memoryUsage();
  const snapshot = snapshots ? writeHeapSnapshot(join(snapshots, `heap-${probes}.heapsnapshot`)) : undefined;
  probes++;
  if (out) writeFileSync(out, JSON.stringify({ probe: probes, ...memory, snapshot }));
});
