// LangGraph state snapshots as the API shows them (`ThreadState`): values, next nodes, tasks with
// their interrupts, checkpoint metadata and the checkpoint/parent checkpoint references.

import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateSnapshot } from '@langchain/langgraph';
import { toWire } from './serialize.ts';

export interface CheckpointRef {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  checkpoint_map: Record<string, unknown> | null;
}

export interface ThreadState {
  values: unknown;
  next: string[];
  tasks: unknown[];
  /** Every pending interrupt of the tasks, as the production server lists them. */
  interrupts: unknown[];
  metadata: Record<string, unknown>;
  created_at: string | null;
  checkpoint: CheckpointRef | null;
  parent_checkpoint: CheckpointRef | null;
  checkpoint_id: string | null;
  parent_checkpoint_id: string | null;
}

export const EMPTY_STATE: ThreadState = Object.freeze({
  values: {},
  next: [],
  tasks: [],
  interrupts: [],
  metadata: {},
  created_at: null,
  checkpoint: null,
  parent_checkpoint: null,
  checkpoint_id: null,
  parent_checkpoint_id: null,
}) as ThreadState;

export function checkpointRef(config: RunnableConfig | undefined): CheckpointRef | null {
  const configurable = config?.configurable;
  if (!configurable?.checkpoint_id) return null;
  return {
    thread_id: String(configurable.thread_id ?? ''),
    checkpoint_ns: String(configurable.checkpoint_ns ?? ''),
    checkpoint_id: String(configurable.checkpoint_id),
    checkpoint_map: (configurable.checkpoint_map as Record<string, unknown> | undefined) ?? null,
  };
}

function isSnapshot(value: unknown): value is StateSnapshot {
  return typeof value === 'object' && value !== null && 'values' in value && 'next' in value;
}

/**
 * What produced a checkpoint, keyed by node name — the `writes` of the checkpoint metadata that the
 * spec lists and that LangGraph.js no longer records. An input checkpoint was written by
 * `__start__` (its own pending task's result); any other by the tasks of its parent checkpoint
 * that finished. `null` when nothing is known (no parent given, or a state update).
 */
export function writesOf(snapshot: StateSnapshot, parent: StateSnapshot | undefined): Record<string, unknown> | null {
  const source = (snapshot.metadata as { source?: unknown } | undefined)?.source;
  const producers =
    source === 'input' ? snapshot.tasks.filter((task) => task.name === '__start__') : (parent?.tasks ?? []);
  const entries = producers
    .filter(
      (task) => (task as { result?: unknown }).result !== undefined && (task as { result?: unknown }).result !== null,
    )
    .map((task) => [task.name, toWire((task as { result?: unknown }).result)] as const);
  return entries.length > 0 ? Object.fromEntries(entries) : null;
}

/** `parent` (the snapshot of `snapshot.parentConfig`), when given, fills in `metadata.writes`. */
export function snapshotToThreadState(snapshot: StateSnapshot, parentSnapshot?: StateSnapshot): ThreadState {
  const checkpoint = checkpointRef(snapshot.config);
  const parent = checkpointRef(snapshot.parentConfig);
  const metadata = { ...((snapshot.metadata as Record<string, unknown> | undefined) ?? {}) };
  if (metadata.checkpoint_ns === '') delete metadata.checkpoint_ns;
  if (metadata.writes === undefined && snapshot.metadata) metadata.writes = writesOf(snapshot, parentSnapshot);
  return {
    values: toWire(snapshot.values) ?? {},
    next: [...snapshot.next],
    tasks: snapshot.tasks.map((task) => ({
      id: task.id,
      name: task.name,
      path: toWire(task.path ?? []),
      error: task.error
        ? task.error instanceof Error
          ? task.error.message
          : String((task.error as { message?: unknown }).message ?? task.error)
        : null,
      interrupts: toWire(task.interrupts ?? []),
      checkpoint:
        task.state && !isSnapshot(task.state) ? toWire((task.state as RunnableConfig).configurable ?? null) : null,
      state: task.state && isSnapshot(task.state) ? subgraphState(snapshotToThreadState(task.state)) : null,
      result: toWire((task as { result?: unknown }).result ?? null),
    })),
    interrupts: toWire(snapshot.tasks.flatMap((task) => task.interrupts ?? [])) as unknown[],
    metadata: toWire(metadata) as Record<string, unknown>,
    created_at: snapshot.createdAt ?? null,
    checkpoint,
    parent_checkpoint: parent,
    checkpoint_id: checkpoint?.checkpoint_id ?? null,
    parent_checkpoint_id: parent?.checkpoint_id ?? null,
  };
}

/**
 * A subgraph's state inside its parent's task, as the LangGraph.js server nests it: without the
 * top-level conveniences (`interrupts`, `checkpoint_id`, `parent_checkpoint_id`), which repeat what
 * the task and the `checkpoint` objects already say. Clients compare these nested states exactly.
 */
function subgraphState(state: ThreadState): Omit<ThreadState, 'interrupts' | 'checkpoint_id' | 'parent_checkpoint_id'> {
  const { interrupts: _interrupts, checkpoint_id: _id, parent_checkpoint_id: _parentId, ...nested } = state;
  return nested;
}

/** Pending interrupts by task id, for the thread record; null when there are none. */
export function interruptsOf(snapshot: StateSnapshot): Record<string, unknown> | null {
  const entries = snapshot.tasks
    .filter((task) => (task.interrupts ?? []).length > 0)
    .map((task) => [task.id, toWire(task.interrupts)]);
  return entries.length > 0 ? Object.fromEntries(entries) : null;
}
