// The memory limiter's decision, apart from timers and the process: fed a memory reading at each
// check, it says whether to refuse data until the next one, and forces garbage collections.
//
//   RSS ≥ hard limit   → collect (at most every min_gc_interval_when_hard_limited_ms), read again
//   RSS ≥ soft limit   → collect (at most every min_gc_interval_when_soft_limited_ms), read again
//   after that reading:  refuse while RSS ≥ soft limit, accept below it
//
// The collections in the soft band are what let refusing end: a proxy refusing data allocates
// little, so V8 starts no full collection of its own, and the garbage the load left (promoted to
// the old generation while requests waited) would keep the RSS above the limit indefinitely.

import type { MemoryLimits } from '../config.ts';

export interface MemoryReading {
  /** Resident set size: what the kernel and the cgroup count. */
  readonly rssBytes: number;
  /** V8's heap in use: what a collection can free. */
  readonly heapUsedBytes: number;
}

/** Where the policy reads memory and what it calls to free some. */
export interface MemorySource {
  read(): MemoryReading;
  /** A full garbage collection that gives emptied pages back to the system. */
  collect(): void;
}

export interface CollectionIntervals {
  readonly softMs: number;
  readonly hardMs: number;
}

/** What one check did and found. */
export interface CheckOutcome {
  /** The reading the decision was made on (after the collection, when one ran). */
  readonly reading: MemoryReading;
  /** The reading before the collection, when one ran. */
  readonly beforeCollection?: MemoryReading;
  /** Which limit forced a collection, if one ran. */
  readonly collected?: 'soft' | 'hard';
  readonly refusing: boolean;
  /** `started` or `stopped` refusing at this check; undefined when nothing changed. */
  readonly change?: 'started' | 'stopped';
}

export class MemoryLimiterPolicy {
  private refusingNow = false;
  private lastCollectionAt = -Infinity;

  constructor(
    readonly limits: MemoryLimits,
    private readonly intervals: CollectionIntervals,
    private readonly memory: MemorySource,
  ) {}

  get refusing(): boolean {
    return this.refusingNow;
  }

  /** One check at `now` (ms, any monotonic clock). */
  check(now: number): CheckOutcome {
    let reading = this.memory.read();
    let beforeCollection: MemoryReading | undefined;
    let collected: 'soft' | 'hard' | undefined;
    const sinceCollection = now - this.lastCollectionAt;
    if (reading.rssBytes >= this.limits.hardBytes && sinceCollection >= this.intervals.hardMs) collected = 'hard';
    else if (reading.rssBytes >= this.limits.softBytes && sinceCollection >= this.intervals.softMs) collected = 'soft';
    if (collected) {
      this.memory.collect();
      this.lastCollectionAt = now;
      beforeCollection = reading;
      reading = this.memory.read();
    }
    const refusing = reading.rssBytes >= this.limits.softBytes;
    const change = refusing === this.refusingNow ? undefined : refusing ? 'started' : 'stopped';
    this.refusingNow = refusing;
    return { reading, beforeCollection, collected, refusing, change };
  }
}
