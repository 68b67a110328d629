// Gives memory back to the system once the process goes quiet after a burst of work.
//
// V8 collects garbage when JavaScript allocates. A process that has just taken a burst and then
// receives nothing allocates almost nothing, so no collection runs: the young generation stays
// committed at the size the burst grew it to, and the off-heap chunks that processors drop when
// what they remember expires stay allocated, since the objects owning them go only with the next
// full collection. Measured (bench/pipeline/README.md, "idle collection"): the proxy stayed at
// 130 MB for minutes after a 10,000 spans/s load; one full collection once the load had stopped
// brought it to 81 MB.
//
// A plain full collection frees objects but not the old-space pages they were scattered over: a
// page goes back to the system only once nothing on it survives, and V8 moves survivors off a page
// only when its own heuristics pick the page for compaction. After thousands of agent runs, whose
// caches (finished runs' logs, thread states) keep replacing their oldest entries, the old space
// kept ~80 MB of pages for ~45 MB of live objects after one (bench/agent/README.md, "Memory"). So
// the idle collection compacts: it moves survivors off sparse pages and returns the emptied pages.
//
// It compacts a few megabytes at a time. Moving an object needs room for its copy before the old
// page can go back, so compacting every page at once (`--compact-on-every-full-gc`, as this did
// until 2026-11-27) needed a second copy of the whole old space for a moment: +17 MB of RSS on the
// proxy after a load, with 16 MB live, which made the peak of the whole load
// (bench/pipeline/README.md, "idle collection's transient"). In V8's optimise-for-size mode a full
// collection moves only pages at least 20 % free, emptiest first, at most 6 MB of objects; repeated
// until a round gives nothing back, it reaches the same compaction with a transient of 2 MB there.
//
// So, every CHECK_INTERVAL_MS: once the event loop has been busy since the last collection and then
// quiet for QUIET_MS, one compacting full collection runs. It never runs during a load, and once per
// quiet period at most. The quiet period is short, a couple of seconds, so that a look at the
// process a few seconds after a load sees what it holds, not what the load left for the collector.

import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';

/** Event loop utilisation at or above which an interval counts as busy. */
const BUSY_UTILIZATION = 0.05;
const CHECK_INTERVAL_MS = 1000;
/** How long the loop must stay under BUSY_UTILIZATION after being busy before a collection. */
export const QUIET_MS = 2000;

/**
 * After a collection, how long the loop's activity is not taken for a new burst: V8 finishes the
 * collection's sweeping and hands its pages back for a while after it returns, and on a loaded
 * machine that was enough to mark the next 1-s interval busy, so that each collection brought on
 * another one every few seconds.
 */
export const AFTERMATH_MS = 3000;

/**
 * The decision alone, fed one utilisation figure per interval (tests drive it without timers):
 * `observe` answers whether a collection is due now.
 */
export class IdleCollectionPolicy {
  private busySinceCollection = false;
  private quietMs = 0;
  private aftermathMs = 0;

  constructor(
    private readonly quietNeededMs = QUIET_MS,
    private readonly aftermathNeededMs = AFTERMATH_MS,
  ) {}

  observe(utilization: number, intervalMs: number): boolean {
    if (this.aftermathMs > 0) {
      this.aftermathMs -= intervalMs;
      return false;
    }
    if (utilization >= BUSY_UTILIZATION) {
      this.busySinceCollection = true;
      this.quietMs = 0;
      return false;
    }
    this.quietMs += intervalMs;
    if (!this.busySinceCollection || this.quietMs < this.quietNeededMs) return false;
    this.busySinceCollection = false;
    this.aftermathMs = this.aftermathNeededMs;
    return true;
  }
}

/** At most this many rounds per idle collection; each moves at most 6 MB of objects. */
const MAX_COMPACTION_ROUNDS = 8;
/** A round that gives back less than this (one V8 page) of the heap's committed memory ends them. */
const ROUND_GAIN_BYTES = 256 * 1024;

/**
 * A full, compacting collection, or undefined where it cannot be had. `maxRounds` bounds the
 * rounds: the idle collection repeats them until one gives nothing back; a caller under load (the
 * memory limiter) runs one, since each round is a full collection that stops the event loop and a
 * load keeps making garbage for the next round to find. Node has no API for one;
 * `--expose-gc` set at run time gives later contexts a `gc` function (the main context keeps its
 * globals), and a new context is made only to fetch it. V8 reads `--optimize-for-size` as each
 * collection picks the pages to compact: it is on for these collections only, so the collections
 * V8 runs on its own keep their usual (cheaper) heuristics.
 */
export function fullCollection(maxRounds = MAX_COMPACTION_ROUNDS): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    if (typeof gc !== 'function') return undefined;
    return () => {
      let committed = getHeapStatistics().total_heap_size;
      for (let round = 0; round < maxRounds; round++) {
        setFlagsFromString('--optimize-for-size');
        try {
          (gc as () => void)();
        } finally {
          setFlagsFromString('--no-optimize-for-size');
        }
        const after = getHeapStatistics().total_heap_size;
        if (committed - after < ROUND_GAIN_BYTES) return;
        committed = after;
      }
    };
  } catch {
    return undefined;
  }
}

/** Starts the checks; the returned function stops them. The timer never keeps the process alive. */
export function startIdleCollection(logger: Logger): () => void {
  const collect = fullCollection();
  if (!collect) return () => {};
  const policy = new IdleCollectionPolicy();
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    if (!policy.observe(utilization, CHECK_INTERVAL_MS)) return;
    const before = process.memoryUsage.rss();
    collect();
    // The collection's own time is not load (nor, for AFTERMATH_MS, what follows it: the policy).
    last = performance.eventLoopUtilization();
    logger.debug(
      { rss_before: before, rss_after: process.memoryUsage.rss() },
      'Collected garbage once the load had stopped.',
    );
  }, CHECK_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
