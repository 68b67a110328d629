// Tests of the `memory_limiter` processor: the conformance kit and its config fixtures, the limits
// a config sets, the decision fed scripted memory readings (refusing above the soft limit,
// collections forced above either limit at their own pace), the processor refusing with a
// ThrottleError and passing data on once below, one check shared by the instances of a component
// id, and the memory available read from cgroup files laid out in a folder. The processes that
// refuse and recover for real are in test/memory-limiter.e2e.test.ts.

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { RequestContext, SpanBatch } from 'tracepipe/plugin';
import { ThrottleError, isThrottle } from 'tracepipe/plugin';
import {
  Sink,
  captureLogs,
  configFor,
  eventually,
  makeBatch,
  metricValue,
  nopHost,
  nopSettings,
  plainSpan,
  runComponentConformance,
} from 'tracepipe/testing';
import type { MemoryLimiterConfig } from './config.ts';
import { MiB, memoryLimits } from './config.ts';
import { memoryLimiterProcessorFactory } from './index.ts';
import { availableMemory } from './internal/available-memory.ts';
import { MemoryLimiterPolicy } from './internal/policy.ts';
import type { MemoryReading, MemorySource } from './internal/policy.ts';
import { MemoryLimiterProcessor } from './limiter.ts';

runComponentConformance(memoryLimiterProcessorFactory, {
  testdataDir: join(import.meta.dirname, 'testdata'),
  sample: () => makeBatch([plainSpan()]),
});

const config = (partial: Partial<MemoryLimiterConfig>) =>
  configFor<MemoryLimiterConfig>(memoryLimiterProcessorFactory, partial);

describe('memory_limiter: the limits a config sets', () => {
  it('limit_mib with its spike, or a fifth of it', () => {
    assert.deepEqual(memoryLimits(config({ limit_mib: 500, spike_limit_mib: 100 }), 0), {
      hardBytes: 500 * MiB,
      softBytes: 400 * MiB,
    });
    assert.deepEqual(memoryLimits(config({ limit_mib: 500 }), 0), { hardBytes: 500 * MiB, softBytes: 400 * MiB });
  });

  it('percentages of the memory available; limit_mib wins when both are set', () => {
    const available = 1000 * MiB;
    assert.deepEqual(memoryLimits(config({ limit_percentage: 50, spike_limit_percentage: 20 }), available), {
      hardBytes: 500 * MiB,
      softBytes: 300 * MiB,
    });
    assert.deepEqual(memoryLimits(config({}), available), { hardBytes: 800 * MiB, softBytes: 640 * MiB });
    assert.equal(memoryLimits(config({ limit_mib: 100, limit_percentage: 50 }), available).hardBytes, 100 * MiB);
  });
});

/** Memory whose readings the test sets; a collection brings the RSS down to `afterCollection`. */
class ScriptedMemory implements MemorySource {
  rssMib = 0;
  afterCollection: number | undefined;
  collections = 0;

  read(): MemoryReading {
    return { rssBytes: this.rssMib * MiB, heapUsedBytes: (this.rssMib * MiB) / 2 };
  }

  collect(): void {
    this.collections++;
    if (this.afterCollection !== undefined) this.rssMib = this.afterCollection;
  }
}

describe('memory_limiter: the decision', () => {
  const limits = { hardBytes: 200 * MiB, softBytes: 160 * MiB };
  const intervals = { softMs: 10_000, hardMs: 0 };

  it('accepts below the soft limit and collects nothing', () => {
    const memory = new ScriptedMemory();
    const policy = new MemoryLimiterPolicy(limits, intervals, memory);
    memory.rssMib = 159;
    const outcome = policy.check(0);
    assert.equal(outcome.refusing, false);
    assert.equal(outcome.change, undefined);
    assert.equal(outcome.collected, undefined);
    assert.equal(memory.collections, 0);
  });

  it('refuses above the soft limit when a collection does not bring it below, and says so once', () => {
    const memory = new ScriptedMemory();
    const policy = new MemoryLimiterPolicy(limits, intervals, memory);
    memory.rssMib = 170;
    const first = policy.check(0);
    assert.deepEqual([first.refusing, first.change, first.collected], [true, 'started', 'soft']);
    assert.equal(first.beforeCollection?.rssBytes, 170 * MiB);
    const second = policy.check(1000);
    assert.deepEqual([second.refusing, second.change, second.collected], [true, undefined, undefined]);
    assert.equal(policy.refusing, true);
  });

  it('does not refuse when the collection forced at the soft limit frees enough', () => {
    const memory = new ScriptedMemory();
    const policy = new MemoryLimiterPolicy(limits, intervals, memory);
    memory.rssMib = 170;
    memory.afterCollection = 120;
    const outcome = policy.check(0);
    assert.deepEqual([outcome.refusing, outcome.change, outcome.collected], [false, undefined, 'soft']);
    assert.equal(outcome.reading.rssBytes, 120 * MiB);
  });

  it('in the soft band, collects at most every min_gc_interval_when_soft_limited_ms, which ends the refusing', () => {
    const memory = new ScriptedMemory();
    const policy = new MemoryLimiterPolicy(limits, intervals, memory);
    memory.rssMib = 170;
    policy.check(0);
    for (const now of [1000, 5000, 9999]) assert.equal(policy.check(now).collected, undefined);
    assert.equal(memory.collections, 1);
    memory.afterCollection = 100; // what the load left is garbage by now
    const outcome = policy.check(10_000);
    assert.deepEqual([outcome.collected, outcome.refusing, outcome.change], ['soft', false, 'stopped']);
  });

  it('above the hard limit, collects at every check (min_gc_interval_when_hard_limited_ms 0)', () => {
    const memory = new ScriptedMemory();
    const policy = new MemoryLimiterPolicy(limits, intervals, memory);
    memory.rssMib = 250;
    for (const now of [0, 1000, 2000]) {
      const outcome = policy.check(now);
      assert.deepEqual([outcome.collected, outcome.refusing], ['hard', true]);
    }
    assert.equal(memory.collections, 3);
  });

  it('above the hard limit, keeps min_gc_interval_when_hard_limited_ms between collections', () => {
    const memory = new ScriptedMemory();
    const policy = new MemoryLimiterPolicy(limits, { softMs: 10_000, hardMs: 5000 }, memory);
    memory.rssMib = 250;
    assert.equal(policy.check(0).collected, 'hard');
    assert.equal(policy.check(1000).collected, undefined);
    assert.equal(policy.check(5000).collected, 'hard');
    assert.equal(memory.collections, 2);
  });

  it('stops refusing once a reading is below the soft limit', () => {
    const memory = new ScriptedMemory();
    const policy = new MemoryLimiterPolicy(limits, intervals, memory);
    memory.rssMib = 250;
    policy.check(0);
    memory.rssMib = 150;
    const outcome = policy.check(1000);
    assert.deepEqual([outcome.refusing, outcome.change, outcome.collected], [false, 'stopped', undefined]);
  });
});

const context: RequestContext = { project: 'default', apiKey: 'key' };
const batch = (): SpanBatch => makeBatch([plainSpan()]);
const available = () => ({ bytes: 4096 * MiB, source: 'machine' as const });

describe('memory_limiter: the processor', () => {
  it('refuses with a ThrottleError while above the soft limit, passes data on once below', async () => {
    const memory = new ScriptedMemory();
    memory.rssMib = 300;
    const host = nopHost();
    const { logger, lines } = captureLogs();
    const sink = new Sink<'spans'>();
    const settings = nopSettings('processor', 'memory_limiter', host, { logger });
    const processor = new MemoryLimiterProcessor(
      settings,
      config({ limit_mib: 200, check_interval_ms: 5 }),
      sink,
      () => memory,
      available,
    );
    await processor.start();
    try {
      const refused = await processor.consume(batch(), context).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.ok(isThrottle(refused), `expected a ThrottleError, got ${String(refused)}`);
      assert.equal((refused as ThrottleError).retryAfterMs, 5);
      assert.match((refused as Error).message, /300 MiB\) is above its soft limit \(160 MiB\)/);
      assert.equal(sink.batches.length, 0);
      // What a receiver's intake asks before journaling a request: the same decision, a refusal counted too.
      assert.ok(isThrottle(processor.refusal()));
      assert.equal(await metricValue(host.metrics, 'tracepipe_memory_limiter_refusing'), 1);
      assert.equal(await metricValue(host.metrics, 'tracepipe_memory_limiter_refused_batches_total'), 2);
      assert.ok((await metricValue(host.metrics, 'tracepipe_memory_limiter_forced_collections_total')) >= 1);

      memory.rssMib = 100;
      await eventually(async () =>
        assert.equal(await metricValue(host.metrics, 'tracepipe_memory_limiter_refusing'), 0),
      );
      assert.equal(processor.refusal(), undefined);
      await processor.consume(batch(), context);
      assert.equal(sink.batches.length, 1);
      assert.equal(
        await metricValue(host.metrics, 'tracepipe_memory_limiter_usage_bytes', { measure: 'rss' }),
        100 * MiB,
      );

      // One line when refusing started, one when it stopped: none per request or per check.
      const messages = lines.filter((line) => line.level >= 30).map((line) => line.msg);
      assert.deepEqual(
        messages.filter((msg) => msg.startsWith('Memory is')),
        [
          'Memory is above the soft limit: refusing data (clients retry) until it is below.',
          'Memory is below the soft limit again: accepting data.',
        ],
      );
      assert.equal(lines.find((line) => line.msg.startsWith('Memory is below'))?.refused_batches, 2);
    } finally {
      await processor.shutdown();
    }
  });

  it('shares one check, and one description, between the instances of a component id (one per pipeline)', async () => {
    const memory = new ScriptedMemory();
    memory.rssMib = 300;
    let sources = 0;
    const host = nopHost();
    const make = (sink: Sink) =>
      new MemoryLimiterProcessor(
        nopSettings('processor', 'memory_limiter', host),
        config({ limit_mib: 200, check_interval_ms: 60_000 }),
        sink,
        () => (sources++, memory),
        available,
      );
    const spans = make(new Sink());
    const runs = make(new Sink());
    await spans.start();
    await runs.start();
    try {
      assert.equal(sources, 1);
      // The check at start forced one collection for both.
      assert.equal(memory.collections, 1);
      await assert.rejects(spans.consume(batch(), context), ThrottleError);
      await assert.rejects(runs.consume({ runs: [] }, context), ThrottleError);
      // The start banner names the limits once.
      assert.ok(spans.describe().details?.['memory limit']);
      assert.deepEqual(runs.describe(), {});
    } finally {
      await spans.shutdown();
      await runs.shutdown();
    }
    // Both gone: the next start makes a check of its own.
    const again = make(new Sink());
    await again.start();
    await again.shutdown();
    assert.equal(sources, 2);
  });

  it('describes its limits for the start banner', async () => {
    const processor = new MemoryLimiterProcessor(
      nopSettings('processor', 'memory_limiter'),
      config({ limit_percentage: 50 }),
      new Sink(),
      () => new ScriptedMemory(),
      available,
    );
    await processor.start();
    try {
      assert.deepEqual(processor.describe().details, {
        'memory limit': 'refusing data above 1638 MiB of RSS, collecting above 2048 MiB (machine: 4096 MiB)',
      });
    } finally {
      await processor.shutdown();
    }
  });
});

describe('memory_limiter: the memory available', () => {
  const roots: string[] = [];
  after(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });

  /** A folder laid out like `/`, holding the given files. */
  async function fakeRoot(files: Record<string, string>): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), 'tp-cgroup-'));
    roots.push(root);
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    return root;
  }

  const machine = 16 * 1024 * MiB;

  it('cgroup v2: the tightest memory.max from the process cgroup up to the root', async () => {
    const root = await fakeRoot({
      'proc/self/cgroup': '0::/kubepods/pod1/container\n',
      'sys/fs/cgroup/kubepods/memory.max': String(2048 * MiB),
      'sys/fs/cgroup/kubepods/pod1/memory.max': String(512 * MiB),
      'sys/fs/cgroup/kubepods/pod1/container/memory.max': 'max\n',
    });
    assert.deepEqual(availableMemory(root, machine), { bytes: 512 * MiB, source: 'cgroup' });
  });

  it('cgroup v2 inside a cgroup namespace (the path is /): the mount root', async () => {
    const root = await fakeRoot({
      'proc/self/cgroup': '0::/\n',
      'sys/fs/cgroup/memory.max': `${1024 * MiB}\n`,
    });
    assert.deepEqual(availableMemory(root, machine), { bytes: 1024 * MiB, source: 'cgroup' });
  });

  it('cgroup v1: memory.limit_in_bytes of the memory controller; its "no limit" is the machine', async () => {
    const limited = await fakeRoot({
      'proc/self/cgroup': '5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n',
      // The container's own cgroup is mounted at the root: the host's path is not there.
      'sys/fs/cgroup/memory/memory.limit_in_bytes': String(768 * MiB),
    });
    assert.deepEqual(availableMemory(limited, machine), { bytes: 768 * MiB, source: 'cgroup' });
    const unlimited = await fakeRoot({
      'proc/self/cgroup': '4:memory:/session\n',
      'sys/fs/cgroup/memory/session/memory.limit_in_bytes': '9223372036854771712\n',
    });
    assert.deepEqual(availableMemory(unlimited, machine), { bytes: machine, source: 'machine' });
  });

  it('a limit above the machine, or no cgroup file at all: the machine', async () => {
    const above = await fakeRoot({
      'proc/self/cgroup': '0::/big\n',
      'sys/fs/cgroup/big/memory.max': String(2 * machine),
    });
    assert.deepEqual(availableMemory(above, machine), { bytes: machine, source: 'machine' });
    const none = await fakeRoot({});
    assert.deepEqual(availableMemory(none, machine), { bytes: machine, source: 'machine' });
  });
});
