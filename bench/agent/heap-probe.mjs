// Preloaded (`node --expose-gc --import`) into the agent server process by `memory.ts`: on
// SIGUSR2 it collects garbage, then writes the process's memory figures (by V8 space too; and, with
// $TRACEPIPE_BENCH_SNAPSHOTS set, a heap snapshot into that directory) to $TRACEPIPE_BENCH_HEAP,
// so that the benchmark sees what stays reachable, not what the collector has not reached yet.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';

const out = process.env.TRACEPIPE_BENCH_HEAP;
const snapshots = process.env.TRACEPIPE_BENCH_SNAPSHOTS;
let probes = 0;

/**
 * Per V8 space (new, old, code, large objects…): what is committed against what is live, so that a
 * heap that holds little but keeps many pages shows which space keeps them.
 */
function spaces() {
  return Object.fromEntries(
    getHeapSpaceStatistics().map((space) => [
      space.space_name,
      { size: space.space_size, used: space.space_used_size, physical: space.physical_space_size },
    ]),
  );
}

process.on('SIGUSR2', () => {
  const spacesBeforeGc = spaces();
  globalThis.gc?.();
  globalThis.gc?.();
  const memory = process.memoryUsage();
  const snapshot = snapshots ? writeHeapSnapshot(join(snapshots, `heap-${probes}.heapsnapshot`)) : undefined;
  probes++;
  if (out) writeFileSync(out, JSON.stringify({ probe: probes, ...memory, spacesBeforeGc, spaces: spaces(), snapshot }));
});
