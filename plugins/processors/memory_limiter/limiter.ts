// The `memory_limiter` processor: refuses data while the process's memory is above its soft limit,
// so that clients back off and retry instead of the proxy growing until it is killed.
//
// The check runs on a timer (one reading of RSS and of V8's heap a `check_interval_ms`); `consume`
// reads the last decision and nothing else. A pipeline per data type gets an instance of this
// processor each, and every instance of one component id in a service shares one check: one timer,
// one forced collection, one log line when refusing starts and one when it stops.

import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { Logger } from 'pino';
import type {
  ComponentDescription,
  ComponentSettings,
  Consumer,
  DataOf,
  DataType,
  Host,
  Processor,
  RequestContext,
} from 'tracepipe/plugin';
import { ThrottleError, fullCollection } from 'tracepipe/plugin';
import type { MemoryLimiterConfig } from './config.ts';
import { MiB, memoryLimits } from './config.ts';
import { availableMemory } from './internal/available-memory.ts';
import type { AvailableMemory } from './internal/available-memory.ts';
import { MemoryLimiterPolicy } from './internal/policy.ts';
import type { CheckOutcome, MemoryReading, MemorySource } from './internal/policy.ts';

/**
 * This process: RSS from the kernel, the heap from V8, and one round of the idle collection's
 * compacting full collection. One: each round stops the event loop for a full collection of the
 * heap, and the load that brought the limiter on keeps making garbage for the next round to find,
 * so the idle collection's rounds (repeated until one gives nothing back) would go on while
 * requests wait.
 */
export function processMemory(): MemorySource {
  // Undefined only where V8's flags cannot be set at run time; refusing still bounds the intake.
  const collect = fullCollection(1) ?? (() => {});
  return {
    read: () => ({ rssBytes: process.memoryUsage.rss(), heapUsedBytes: getHeapStatistics().used_heap_size }),
    collect,
  };
}

const mib = (bytes: number) => Math.round(bytes / MiB);

const readingFields = (reading: MemoryReading) => ({
  rss_mib: mib(reading.rssBytes),
  heap_used_mib: mib(reading.heapUsedBytes),
});

/** The check that every instance of one component id shares. */
class MemoryWatch {
  refusal: ThrottleError | undefined;
  private readonly policy: MemoryLimiterPolicy;
  private readonly timer: NodeJS.Timeout;
  private users = 0;
  private refusedSince = 0;
  private lastCollectionMs = 0;
  private readonly metrics;
  private readonly logger: Logger;

  constructor(
    settings: ComponentSettings,
    private readonly config: MemoryLimiterConfig,
    memory: MemorySource,
    readonly available: AvailableMemory,
  ) {
    this.logger = settings.telemetry.logger;
    const limits = memoryLimits(config, available.bytes);
    // Each collection is timed: it stops the event loop, and its length goes to the debug log.
    const timed: MemorySource = {
      read: () => memory.read(),
      collect: () => {
        const started = performance.now();
        memory.collect();
        this.lastCollectionMs = performance.now() - started;
      },
    };
    this.policy = new MemoryLimiterPolicy(
      limits,
      { softMs: config.min_gc_interval_when_soft_limited_ms, hardMs: config.min_gc_interval_when_hard_limited_ms },
      timed,
    );
    const { meter } = settings.telemetry;
    this.metrics = {
      usage: meter.gauge({
        name: 'tracepipe_memory_limiter_usage_bytes',
        help: "The process's memory at the last check: rss (what the limits apply to) and heap_used (V8's heap in use).",
        labelNames: ['measure'],
      }),
      limit: meter.gauge({
        name: 'tracepipe_memory_limiter_limit_bytes',
        help: 'The limits on RSS: soft (data is refused above it) and hard (a collection is forced at each check above it).',
        labelNames: ['limit'],
      }),
      refusing: meter.gauge({
        name: 'tracepipe_memory_limiter_refusing',
        help: '1 while data is refused (RSS above the soft limit at the last check), else 0.',
      }),
      refusals: meter.counter({
        name: 'tracepipe_memory_limiter_refused_batches_total',
        help: 'Requests refused: by the receivers asking before they journal and decode one, or in consume() (its items are in tracepipe_component_items_refused_total).',
      }),
      collections: meter.counter({
        name: 'tracepipe_memory_limiter_forced_collections_total',
        help: 'Garbage collections forced, by the limit that was passed (soft, hard).',
        labelNames: ['limit'],
      }),
    };
    this.metrics.limit.set({ limit: 'soft' }, limits.softBytes);
    this.metrics.limit.set({ limit: 'hard' }, limits.hardBytes);
    this.logger.info(
      {
        soft_limit_mib: mib(limits.softBytes),
        hard_limit_mib: mib(limits.hardBytes),
        available_mib: mib(available.bytes),
        available_from: available.source,
        check_interval_ms: config.check_interval_ms,
      },
      'Limiting memory: data is refused while the RSS is above the soft limit.',
    );
    // The first decision before any data: a process already above its limit refuses from the start.
    this.check();
    this.timer = setInterval(() => this.check(), config.check_interval_ms);
    this.timer.unref();
  }

  get limits() {
    return this.policy.limits;
  }

  acquire(): void {
    this.users++;
  }

  /** True once the last user is gone (the timer is then stopped). */
  release(): boolean {
    if (--this.users > 0) return false;
    clearInterval(this.timer);
    return true;
  }

  countRefusal(): void {
    this.refusedSince++;
    this.metrics.refusals.inc();
  }

  private check(): void {
    const outcome = this.policy.check(performance.now());
    this.metrics.usage.set({ measure: 'rss' }, outcome.reading.rssBytes);
    this.metrics.usage.set({ measure: 'heap_used' }, outcome.reading.heapUsedBytes);
    this.metrics.refusing.set(outcome.refusing ? 1 : 0);
    if (outcome.collected) this.noteCollection(outcome);
    this.refusal = outcome.refusing ? this.refusalFor(outcome.reading) : undefined;
    if (outcome.change === 'started') {
      this.refusedSince = 0;
      this.logger.warn(
        { ...readingFields(outcome.reading), soft_limit_mib: mib(this.limits.softBytes) },
        'Memory is above the soft limit: refusing data (clients retry) until it is below.',
      );
    } else if (outcome.change === 'stopped') {
      this.logger.info(
        { ...readingFields(outcome.reading), refused_batches: this.refusedSince },
        'Memory is below the soft limit again: accepting data.',
      );
    }
  }

  private noteCollection(outcome: CheckOutcome): void {
    this.metrics.collections.inc({ limit: outcome.collected! });
    this.logger.debug(
      {
        limit: outcome.collected,
        collection_ms: Math.round(this.lastCollectionMs),
        before: readingFields(outcome.beforeCollection!),
        after: readingFields(outcome.reading),
      },
      'Forced a garbage collection.',
    );
  }

  private refusalFor(reading: MemoryReading): ThrottleError {
    return new ThrottleError(
      `memory limiter: the process's memory (${mib(reading.rssBytes)} MiB) is above its soft limit (${mib(this.limits.softBytes)} MiB)`,
      this.config.check_interval_ms,
    );
  }
}

/** The shared checks of each service (its host), by component id. */
const watches = new WeakMap<Host, Map<string, MemoryWatch>>();

export class MemoryLimiterProcessor implements Processor<DataType> {
  readonly mutatesData = false;
  private watch: MemoryWatch | undefined;
  /** Whether this instance made the shared check (the one that describes it in the start banner). */
  private owner = false;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: MemoryLimiterConfig,
    private readonly next: Consumer<DataType>,
    /** Where memory is read and freed; tests give a source of their own. */
    private readonly memory: () => MemorySource = processMemory,
    private readonly available: () => AvailableMemory = () => availableMemory(),
  ) {}

  async start(): Promise<void> {
    if (this.watch) return;
    const { host, id } = this.settings;
    let byId = watches.get(host);
    if (!byId) watches.set(host, (byId = new Map()));
    let watch = byId.get(id);
    if (!watch) {
      watch = new MemoryWatch(this.settings, this.config, this.memory(), this.available());
      byId.set(id, watch);
      this.owner = true;
    }
    watch.acquire();
    this.watch = watch;
  }

  /**
   * What a receiver's intake asks before it journals and decodes a request: refused then, it costs
   * its read. An answer is a refused request (the intake asks once per request), so it is counted
   * as `consume()` counts its refusals: in the metric and in the log line that ends a refusal.
   */
  refusal(): ThrottleError | undefined {
    const refusal = this.watch?.refusal;
    if (refusal !== undefined) this.watch!.countRefusal();
    return refusal;
  }

  consume(data: DataOf[DataType], context: RequestContext): Promise<void> {
    const refusal = this.refusal();
    return refusal === undefined ? this.next.consume(data, context) : Promise.reject(refusal);
  }

  async shutdown(): Promise<void> {
    const watch = this.watch;
    if (!watch) return;
    this.watch = undefined;
    this.owner = false;
    if (watch.release()) watches.get(this.settings.host)?.delete(this.settings.id);
  }

  describe(): ComponentDescription {
    const watch = this.watch;
    if (!watch || !this.owner) return {};
    const { softBytes, hardBytes } = watch.limits;
    return {
      details: {
        'memory limit': `refusing data above ${mib(softBytes)} MiB of RSS, collecting above ${mib(hardBytes)} MiB (${watch.available.source}: ${mib(watch.available.bytes)} MiB)`,
      },
    };
  }
}
