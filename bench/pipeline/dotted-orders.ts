// Memory and speed of the batcher's remembered dotted orders: the TtlMap of strings it used before
// and DottedOrderMemory, at `max_remembered_runs` = 500,000 with the default TTL. The workload is
// the batcher's: traces of a root and three children, ids from randomUUID, each child's order its
// parent's plus its own segment. Each variant runs in a child process of its own (with
// --expose-gc), so that neither measures the other's garbage.
//
// Memory: the rise of heapUsed + external (ArrayBuffers, where the arena and table live) after a
// full collection, from an empty store to a full one, divided by the runs it holds; then again
// after a quarter as many more runs went in at the cap (the steady state: the TtlMap's Map keeps
// the holes of its evictions, DottedOrderMemory's table has been rebuilt at its working size).
// Time, in CPU ns per operation, best of the rounds: inserts while filling (root, then its children,
// as the batcher releases them) and at the cap (each also evicts the oldest; one round), lookups of
// present ids in random order and of absent ones, and late children (look the root up, insert the
// child, as for a child arriving after its parent was sent).
//
//   node --import tsx bench/pipeline/dotted-orders.ts [--runs 500000] [--rounds 5]

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TtlMap } from '../../src/collections/ttl-map.ts';
import type { RememberedOrder } from '../../plugins/processors/batch/internal/dotted-order-memory.ts';
import { DottedOrderMemory } from '../../plugins/processors/batch/internal/dotted-order-memory.ts';
import { segment } from '../../plugins/processors/batch/internal/dotted-order.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '500000' },
    rounds: { type: 'string', default: '5' },
    variant: { type: 'string' },
  },
});
const runs = Number(values.runs);
const rounds = Number(values.rounds);
const TTL_MS = 300_000;

interface Store {
  get(id: string): RememberedOrder | undefined;
  set(id: string, order: RememberedOrder): void;
}

type Variant = 'TtlMap' | 'DottedOrderMemory';

function create(variant: Variant): Store {
  return variant === 'TtlMap'
    ? new TtlMap<string, RememberedOrder>(TTL_MS, runs, Date.now)
    : new DottedOrderMemory(TTL_MS, runs, Date.now);
}

interface Result {
  variant: Variant;
  heapBytesPerRun: number;
  externalBytesPerRun: number;
  bytesPerRun: number;
  steadyBytesPerRun: number;
  insertNs: number;
  insertAtCapNs: number;
  lookupNs: number;
  missNs: number;
  lateChildNs: number;
}

const baseMs = Date.UTC(2026, 10, 24, 9, 0, 0);

/** A start time with microseconds, as OTLP nanosecond times give them. */
function startTime(trace: number, child: number): string {
  const iso = new Date(baseMs + trace * 7 + child).toISOString();
  return `${iso.slice(0, -1)}${String((trace * 37 + child * 101) % 1000).padStart(3, '0')}Z`;
}

/**
 * A flat copy of a string. randomUUID's strings are trees of concatenated pieces until something
 * flattens them, and orders are concatenations; in the proxy the exporter's JSON.stringify
 * flattens both. Flat copies are the smallest form, so the TtlMap's figure is a lower bound.
 */
function flat(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/** Puts `traces` traces into the store the way the batcher does: root, then each child under it. */
function fill(store: Store, traces: number, offset = 0): void {
  for (let trace = offset; trace < offset + traces; trace++) {
    const root = flat(randomUUID());
    store.set(root, { dotted: flat(segment(startTime(trace, 0), root)), traceId: root });
    for (let child = 1; child <= 3; child++) {
      const parent = store.get(root)!;
      const id = flat(randomUUID());
      store.set(id, {
        dotted: flat(`${parent.dotted}.${segment(startTime(trace, child), id)}`),
        traceId: parent.traceId,
      });
    }
  }
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with --expose-gc (the parent process does)');
  collect();
  collect();
}

let retained: Store | undefined;

type MemoryResult = Pick<Result, 'heapBytesPerRun' | 'externalBytesPerRun' | 'bytesPerRun' | 'steadyBytesPerRun'>;

function measureMemory(variant: Variant): MemoryResult {
  gc();
  const before = process.memoryUsage();
  const store = create(variant);
  fill(store, runs / 4);
  gc();
  const full = process.memoryUsage();
  // A quarter more at the cap, each evicting the oldest: the state the proxy stays in.
  fill(store, runs / 16, runs / 4);
  gc();
  const steady = process.memoryUsage();
  retained = store; // reachable until after the measurement
  const heap = (full.heapUsed - before.heapUsed) / runs;
  const external = (full.external - before.external) / runs;
  const steadyBytesPerRun = (steady.heapUsed + steady.external - before.heapUsed - before.external) / runs;
  return { heapBytesPerRun: heap, externalBytesPerRun: external, bytesPerRun: heap + external, steadyBytesPerRun };
}

interface Input {
  id: string;
  order: RememberedOrder;
}

function inputs(traces: number, offset: number): Input[] {
  const result: Input[] = [];
  for (let trace = offset; trace < offset + traces; trace++) {
    const root = flat(randomUUID());
    const rootOrder = { dotted: flat(segment(startTime(trace, 0), root)), traceId: root };
    result.push({ id: root, order: rootOrder });
    for (let child = 1; child <= 3; child++) {
      const id = flat(randomUUID());
      const dotted = flat(`${rootOrder.dotted}.${segment(startTime(trace, child), id)}`);
      result.push({ id, order: { dotted, traceId: root } });
    }
  }
  return result;
}

/** CPU ns of this process per operation (CPU time, not wall time: the machine is shared). */
function nsPer(count: number, body: () => void): number {
  const cpu = (): number => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) * 1000;
  };
  const start = cpu();
  body();
  return (cpu() - start) / count;
}

function measureTime(variant: Variant): Omit<Result, 'variant' | keyof MemoryResult> {
  const first = inputs(runs / 4, 0);
  const second = inputs(runs / 4, runs / 4);
  const shuffled = first.map((input) => input.id).sort(() => Math.random() - 0.5);
  const absent = Array.from({ length: runs }, () => flat(randomUUID()));
  const best = { insertNs: Infinity, lookupNs: Infinity, missNs: Infinity, lateChildNs: Infinity, insertAtCapNs: 0 };
  let sink = 0;
  for (let round = 0; round < rounds; round++) {
    gc();
    const store = create(variant);
    best.insertNs = Math.min(
      best.insertNs,
      nsPer(runs, () => {
        for (const { id, order } of first) store.set(id, order);
      }),
    );
    best.lookupNs = Math.min(
      best.lookupNs,
      nsPer(runs, () => {
        for (const id of shuffled) sink += store.get(id)!.dotted.length;
      }),
    );
    best.missNs = Math.min(
      best.missNs,
      nsPer(runs, () => {
        for (const id of absent) if (store.get(id) !== undefined) sink++;
      }),
    );
    // Children arriving after their parent was released: look the parent up, write the child.
    gc();
    const late = create(variant);
    for (let i = 0; i < first.length; i += 4) late.set(first[i]!.id, first[i]!.order);
    best.lateChildNs = Math.min(
      best.lateChildNs,
      nsPer((runs * 3) / 4, () => {
        for (let i = 0; i < first.length; i += 4) {
          for (let child = 1; child <= 3; child++) {
            const parent = late.get(first[i]!.id)!;
            const { id, order } = first[i + child]!;
            if (parent.traceId === order.traceId) late.set(id, order);
          }
        }
      }),
    );
    // At the cap every insert evicts the oldest entry. Measured once: with the TtlMap it is slow
    // enough (a Map skips the holes its deletions left at its front) to dominate the run time.
    if (round === 0) {
      best.insertAtCapNs = nsPer(runs, () => {
        for (const { id, order } of second) store.set(id, order);
      });
    }
  }
  if (sink < 0) console.log(sink);
  return best;
}

if (values.variant) {
  const variant = values.variant as Variant;
  const memory = measureMemory(variant);
  retained = undefined;
  const time = measureTime(variant);
  console.log(JSON.stringify({ variant, ...memory, ...time } satisfies Result));
} else {
  const results: Result[] = [];
  for (const variant of ['TtlMap', 'DottedOrderMemory'] as const) {
    const child = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        `--variant=${variant}`,
        `--runs=${runs}`,
        `--rounds=${rounds}`,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    if (child.status !== 0) throw new Error(`${variant} failed`);
    results.push(JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Result);
  }
  console.log(
    `${runs} runs (traces of a root and 3 children), Node ${process.version}, ${availableParallelism()} cores`,
  );
  console.log(
    '| store | bytes/run full (heap + external) | after a quarter more at the cap | insert ns | insert at cap ns | lookup ns | miss ns | late child (lookup + insert) ns |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const bytes = `${r.bytesPerRun.toFixed(0)} (${r.heapBytesPerRun.toFixed(0)} + ${r.externalBytesPerRun.toFixed(0)})`;
    const ns = [r.insertNs, r.insertAtCapNs, r.lookupNs, r.missNs, r.lateChildNs]
      .map((value) => value.toFixed(0))
      .join(' | ');
    console.log(`| ${r.variant} | ${bytes} | ${r.steadyBytesPerRun.toFixed(0)} | ${ns} |`);
  }
}
