// The batcher's holding area: gives every run its `dotted_order`, which needs the parent's. Children
// usually end, and so arrive, before their parents; such a child waits here (keyed by its parent's
// id) until the parent's order is known, across any number of consumed batches. When a parent is
// released, its waiting children follow at once, depth first, so a parent always leaves before its
// children. A trace whose runs have waited `orphanTimeoutMs` falls back under the orphan policy.

import type { Run, RunBodyJson, RunTreeHints, RequestContext } from 'tracepipe/plugin';
import { TtlMap, UuidMap } from 'tracepipe/collections';
import { segment, segmentTime } from './dotted-order.ts';
import type { RememberedOrder } from './dotted-order-memory.ts';
import { DottedOrderMemory } from './dotted-order-memory.ts';

export type OrphanPolicy = 'attach_to_root' | 'promote_to_root';

export interface TreeOptions {
  readonly orphanTimeoutMs: number;
  readonly orphanPolicy: OrphanPolicy;
  /** How long a released run's dotted order is remembered for late children. */
  readonly rememberMs: number;
  /** At most this many orders, and as many root aliases and filtered ids, are remembered. */
  readonly rememberMax: number;
  /** Bytes the remembered orders and root aliases may take together; the oldest go first. */
  readonly rememberBytes: number;
  readonly now?: () => number;
}

/** A run with what the batcher tracks about it. */
export interface HeldRun {
  readonly run: Run;
  readonly context: RequestContext;
  /**
   * The run's JSON size before its dotted order was set: its texts' lengths and an estimate of its
   * other members (see estimateJsonBytes).
   */
  readonly bytes: number;
  /** The texts of its inputs, outputs and `extra`; absent when it cannot be serialised. */
  readonly body?: RunBodyJson;
}

interface WaitingTrace {
  readonly since: number;
  /** Parent ids under which this trace's runs wait. */
  readonly parents: Set<string>;
}

const NO_RUNS: readonly HeldRun[] = Object.freeze([]);

// A chain of filtered runs longer than this is treated as a cycle.
const MAX_ANCESTOR_WALK = 1000;

export class RunTree {
  /** Released run id → its order (packed: the largest thing the proxy remembers, see the module). */
  private readonly known: DottedOrderMemory;
  /** Root span UUID → root run id (see RunTreeHints.rootAliases); one per trace, kept off the heap. */
  private readonly aliases: UuidMap;
  /** Filtered run id → its parent, or null (see RunTreeHints.droppedRuns). */
  private readonly dropped: TtlMap<string, string | null>;
  private readonly waiting = new Map<string, HeldRun[]>();
  /** Id of every waiting run → the parent it waits for. */
  private readonly waitingIds = new Map<string, string>();
  private readonly waitingTraces = new Map<string, WaitingTrace>();
  private readonly now: () => number;
  private heldRuns = 0;
  private heldBytes = 0;

  constructor(
    private readonly options: TreeOptions,
    /** Receives each run once its dotted order is set, parents before children. */
    private readonly release: (held: HeldRun) => void,
    /** Told of each run that waited for a parent that never came, as the policy placed it. */
    private readonly onOrphan: (held: HeldRun) => void = () => {},
  ) {
    this.now = options.now ?? Date.now;
    this.known = new DottedOrderMemory(options.rememberMs, options.rememberMax, this.now);
    this.aliases = new UuidMap(options.rememberMs, options.rememberMax, this.now);
    this.dropped = new TtlMap(options.rememberMs, options.rememberMax, this.now);
  }

  get waitingRuns(): number {
    return this.heldRuns;
  }

  get waitingBytes(): number {
    return this.heldBytes;
  }

  /** Bytes the remembered orders and root aliases take (what `rememberBytes` bounds). */
  get rememberedBytes(): number {
    return this.known.heldBytes + this.aliases.heldBytes;
  }

  /** Whether a batch brings a parent (or a root alias, or a filtered run) that runs wait for. */
  unblocks(runIds: readonly string[], hints: RunTreeHints | undefined): boolean {
    const keys = [...runIds, ...Object.keys(hints?.rootAliases ?? {}), ...Object.keys(hints?.droppedRuns ?? {})];
    return keys.some((id) => this.waiting.has(id));
  }

  /** Records what the translator knows about the tree; call before adding the batch's runs. */
  applyHints(hints: RunTreeHints | undefined): void {
    for (const [alias, rootId] of Object.entries(hints?.rootAliases ?? {})) {
      this.rememberAlias(alias, rootId);
      this.moveWaiting(alias, rootId);
    }
    for (const [id, parent] of Object.entries(hints?.droppedRuns ?? {})) {
      this.dropped.set(id, parent);
      // Children already waiting for a run that will never come look again, one level up.
      const children = this.takeWaiting(id);
      for (const child of children) this.add(child);
    }
  }

  /** Takes a run: releases it (and any children waiting for it) now, or holds it. */
  add(held: HeldRun): void {
    const { run } = held;
    // A run that comes with its dotted order (the LangSmith SDK orders its runs itself) keeps it;
    // an update of a sent run takes the order that run was sent with. Either leaves at once, and
    // is remembered for children that arrive without an order.
    if (run.dotted_order !== undefined || run.update) {
      const known = run.update ? this.known.get(run.id) : undefined;
      if (known) {
        run.dotted_order = known.dotted;
        run.trace_id = known.traceId;
      }
      if (run.dotted_order === undefined) {
        this.release(held);
        return;
      }
      this.setOrderAndRelease(held, run.dotted_order, run.trace_id);
      return;
    }
    const parent = this.resolveParent(run.parent_run_id);
    if (parent === undefined) {
      this.releaseAsRoot(held);
      return;
    }
    run.parent_run_id = parent;
    const known = this.known.get(parent);
    if (known) {
      this.releaseUnder(held, known);
      return;
    }
    this.hold(held, parent);
  }

  /** Falls back every trace that has waited at least the orphan timeout. */
  expire(): void {
    const now = this.now();
    for (const [traceId, waiting] of this.waitingTraces) {
      if (now - waiting.since >= this.options.orphanTimeoutMs) this.fallBackTrace(traceId);
    }
    this.known.sweep();
    this.aliases.sweep();
    this.dropped.sweep();
  }

  // The only writers of the remembered orders and root aliases: every write is followed by the
  // byte bound, so that none can escape it.
  private rememberOrder(runId: string, order: RememberedOrder): void {
    this.known.set(runId, order);
    this.keepRememberedWithinBytes();
  }

  private rememberAlias(alias: string, rootId: string): void {
    this.aliases.set(alias, rootId);
    this.keepRememberedWithinBytes();
  }

  /**
   * Forgets the oldest of the remembered orders and root aliases, whichever was written first,
   * until both fit in `rememberBytes` together. The count caps alone let them reach ~60 MB at the
   * defaults, the largest thing a busy proxy holds. A byte bound keeps the full TTL at moderate
   * rates and the newest runs at high ones; a late child of a forgotten parent falls back as an
   * orphan.
   */
  private keepRememberedWithinBytes(): void {
    while (this.known.heldBytes + this.aliases.heldBytes > this.options.rememberBytes) {
      const order = this.known.oldestWrittenAt();
      const alias = this.aliases.oldestWrittenAt();
      if (order === undefined && alias === undefined) return; // only the empty tables are left
      if (alias === undefined || (order !== undefined && order <= alias)) this.known.forgetOldest();
      else this.aliases.forgetOldest();
    }
  }

  /** Falls back everything still waiting (shutdown: nothing held may be lost). */
  expireAll(): void {
    for (const traceId of [...this.waitingTraces.keys()]) this.fallBackTrace(traceId);
  }

  /** Follows root aliases and filtered runs up to the parent a run should have; undefined: none. */
  private resolveParent(parentId: string | undefined): string | undefined {
    let parent = parentId === undefined ? undefined : (this.aliases.get(parentId) ?? parentId);
    for (let steps = 0; parent !== undefined && steps < MAX_ANCESTOR_WALK; steps++) {
      const above = this.dropped.get(parent);
      if (above === undefined) return parent;
      parent = above === null ? undefined : (this.aliases.get(above) ?? above);
    }
    return parent !== undefined && this.dropped.has(parent) ? undefined : parent;
  }

  private releaseAsRoot(held: HeldRun): void {
    const { run } = held;
    delete run.parent_run_id;
    // The backend's invariant: a root's id is its trace id (the first dotted segment's id).
    run.trace_id = run.id;
    this.setOrderAndRelease(held, segment(run.start_time, run.id), run.id);
  }

  private releaseUnder(held: HeldRun, parent: RememberedOrder): void {
    held.run.trace_id = parent.traceId;
    this.setOrderAndRelease(held, `${parent.dotted}.${segment(held.run.start_time, held.run.id)}`, parent.traceId);
  }

  /** Sets the order, releases the run, then its waiting descendants depth first (no recursion). */
  private setOrderAndRelease(first: HeldRun, dotted: string, traceId: string): void {
    const stack: { held: HeldRun; dotted: string; traceId: string }[] = [{ held: first, dotted, traceId }];
    while (stack.length > 0) {
      const item = stack.pop()!;
      const { run } = item.held;
      run.dotted_order = item.dotted;
      this.rememberOrder(run.id, item);
      this.release(item.held);
      const children = this.takeWaiting(run.id);
      // Reversed so that children leave in arrival order.
      for (let i = children.length - 1; i >= 0; i--) {
        const child = children[i]!;
        child.run.parent_run_id = run.id;
        child.run.trace_id = item.traceId;
        stack.push({
          held: child,
          dotted: `${item.dotted}.${segment(child.run.start_time, child.run.id)}`,
          traceId: item.traceId,
        });
      }
    }
  }

  private hold(held: HeldRun, parent: string): void {
    let group = this.waiting.get(parent);
    if (!group) this.waiting.set(parent, (group = []));
    group.push(held);
    this.waitingIds.set(held.run.id, parent);
    this.heldRuns++;
    this.heldBytes += held.bytes;
    let trace = this.waitingTraces.get(held.run.trace_id);
    if (!trace) this.waitingTraces.set(held.run.trace_id, (trace = { since: this.now(), parents: new Set() }));
    trace.parents.add(parent);
  }

  private takeWaiting(parent: string): readonly HeldRun[] {
    const group = this.waiting.get(parent);
    // Asked for every run released, which most often has no waiting children: no array for those.
    if (!group) return NO_RUNS;
    this.waiting.delete(parent);
    for (const held of group) {
      this.waitingIds.delete(held.run.id);
      this.heldRuns--;
      this.heldBytes -= held.bytes;
      const trace = this.waitingTraces.get(held.run.trace_id);
      if (trace) {
        trace.parents.delete(parent);
        if (trace.parents.size === 0) this.waitingTraces.delete(held.run.trace_id);
      }
    }
    return group;
  }

  /** Children that waited under a root's span alias now wait under (or follow) the root's id. */
  private moveWaiting(alias: string, rootId: string): void {
    for (const child of this.takeWaiting(alias)) {
      child.run.parent_run_id = rootId;
      this.add(child);
    }
  }

  private fallBackTrace(traceId: string): void {
    const trace = this.waitingTraces.get(traceId);
    if (!trace) return;
    const parents = [...trace.parents];
    let earliest: string | undefined;
    for (const parent of parents) {
      for (const held of this.waiting.get(parent) ?? []) {
        const time = segmentTime(held.run.start_time);
        if (earliest === undefined || time < earliest) earliest = time;
      }
    }
    // Only groups whose parent is not itself waiting are orphans; the rest follow them. Whatever is
    // still waiting after that waits in a cycle, and falls back too.
    const orphanGroups = parents.filter((parent) => !this.waitingIds.has(parent));
    for (const parent of [...orphanGroups, ...parents]) {
      if (!this.waiting.has(parent)) continue;
      for (const held of this.takeWaiting(parent)) this.placeOrphan(held, traceId, earliest!);
    }
    this.waitingTraces.delete(traceId);
  }

  private placeOrphan(held: HeldRun, traceId: string, earliest: string): void {
    const { run } = held;
    if (this.options.orphanPolicy === 'promote_to_root' || run.id === traceId) {
      this.releaseAsRoot(held);
    } else {
      // The trace's root has not been seen: its segment takes the earliest start time among the
      // runs falling back (a root starts no later than its descendants), remembered so that every
      // orphan of the trace agrees on it until the real root replaces it.
      let root = this.known.get(traceId);
      if (!root) {
        this.rememberOrder(traceId, (root = { dotted: `${earliest}${traceId}`, traceId }));
      }
      run.parent_run_id = traceId;
      this.releaseUnder(held, root);
    }
    this.onOrphan(held);
  }
}
