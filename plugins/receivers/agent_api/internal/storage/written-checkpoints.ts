// The checkpoint tuple a run last wrote at its thread's root, kept by the SQLite checkpointer so
// that the thread's state after the run (`graph-runner.ts`, `finish`) is prepared from it instead
// of being read back from the file and deserialised again: the run has just written that
// checkpoint through this process's saver, and holds the thread. The tuple is what the saver's
// `getTuple` would return for the thread's latest checkpoint: the checkpoint as it was put, its
// metadata and addresses, and the writes put after it (where interrupts and errors live), with
// the saver's own rules for repeated writes and in the order its read returns them.
//
// What is kept is the graph's objects, not their serialised form; so a tuple is handed out only
// when every value in it is plain data (JSON's values, plain objects and arrays, LangChain
// messages built from such), which serialise and deserialise to the same wire form. Anything
// else (a Date, a class instance, a Map) is read back from the file as before.

import { isBaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { copyCheckpoint } from '@langchain/langgraph';
import type { Checkpoint, CheckpointMetadata, CheckpointTuple } from '@langchain/langgraph';

/**
 * The index the saver gives a write on a special channel (`WRITES_IDX_MAP` of
 * `@langchain/langgraph-checkpoint`, which `@langchain/langgraph` does not export; a test checks
 * they agree). Other writes are numbered by their place in their `putWrites` call.
 */
export const SPECIAL_WRITE_INDEX: Readonly<Record<string, number>> = {
  __error__: -1,
  __scheduled__: -2,
  __interrupt__: -3,
  __resume__: -4,
};

/** A write as the saver keeps it: `[task id, channel, value]`, at index `idx` of its task. */
type PendingWrite = [taskId: string, channel: string, value: unknown];

/** A checkpoint's pending writes by `taskId idx`, the writes table's primary key. */
type Writes = Map<string, { idx: number; write: PendingWrite }>;

interface Written {
  readonly runId: string;
  readonly threadId: string;
  /** The run's latest checkpoint at the thread's root: the greatest id, as the saver's read orders them. */
  latest?: { checkpoint: Checkpoint; metadata: CheckpointMetadata; parentId: string | undefined };
  /**
   * Writes by checkpoint id. LangGraph chains a run's checkpoints one after the other but puts a
   * task's writes at once, so the writes for a checkpoint may be stored before the checkpoint is.
   */
  readonly writes: Map<string, Writes>;
}

/** Runs whose tuple is kept at once; more only when runs end without their state being read. */
const MAX_KEPT = 1000;

export class WrittenCheckpoints {
  private readonly byRun = new Map<string, Written>();
  private readonly runOfThread = new Map<string, string>();

  /**
   * A checkpoint was stored at `threadId`'s root, for the run `runId` (undefined: not for a run,
   * such as a state update). `checkpoint` is the copy that was stored, which nothing changes any
   * more (the graph's loop goes on updating its own): it is kept as it is.
   */
  put(
    threadId: string,
    runId: string | undefined,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    parentId: string | undefined,
  ): void {
    const written = this.entry(threadId, runId);
    if (!written) return;
    if (written.latest && checkpoint.id < written.latest.checkpoint.id) return;
    written.latest = { checkpoint, metadata, parentId };
    for (const id of written.writes.keys()) if (id < checkpoint.id) written.writes.delete(id);
  }

  /** Writes were stored for `checkpointId` at `threadId`'s root by task `taskId` (as `putWrites`). */
  putWrites(
    threadId: string,
    runId: string | undefined,
    checkpointId: string,
    writes: readonly [string, unknown][],
    taskId: string,
  ): void {
    const written = this.entry(threadId, runId);
    // Writes for an earlier checkpoint are not pending writes of the latest.
    if (!written || (written.latest && checkpointId < written.latest.checkpoint.id)) return;
    let stored = written.writes.get(checkpointId);
    if (!stored) written.writes.set(checkpointId, (stored = new Map()));
    // The saver inserts a call's writes with `OR REPLACE` when all are on special channels, else
    // with `OR IGNORE` (a repeated write keeps the first); special channels have fixed indexes.
    const replace = writes.every(([channel]) => channel in SPECIAL_WRITE_INDEX);
    writes.forEach(([channel, value], index) => {
      const idx = SPECIAL_WRITE_INDEX[channel] ?? index;
      const key = `${taskId} ${idx}`;
      if (replace || !stored.has(key)) stored.set(key, { idx, write: [taskId, channel, value] });
    });
  }

  /** Something other than a run's graph changed `threadId`'s checkpoints: what was kept is not the latest. */
  forget(threadId: string): void {
    const runId = this.runOfThread.get(threadId);
    if (runId !== undefined) this.forgetRun(runId);
  }

  forgetAll(): void {
    this.byRun.clear();
    this.runOfThread.clear();
  }

  /**
   * The tuple `runId` last stored at `threadId`'s root, as the saver's `getTuple` would read it
   * back, if it is still the thread's latest and holds only plain data; no longer kept either way.
   */
  take(runId: string, threadId: string): CheckpointTuple | undefined {
    const written = this.byRun.get(runId);
    if (!written) return undefined;
    this.forgetRun(runId);
    const { latest } = written;
    if (!latest || written.threadId !== threadId) return undefined;
    // The order of the saver's read: the writes table's key, task id then index.
    const pending = [...(written.writes.get(latest.checkpoint.id)?.values() ?? [])]
      .sort((a, b) => (a.write[0] < b.write[0] ? -1 : a.write[0] > b.write[0] ? 1 : a.idx - b.idx))
      .map(({ write }) => write);
    if (!isPlain(latest.checkpoint.channel_values) || !pending.every(([, , value]) => isPlain(value))) return undefined;
    const address = (checkpointId: string): RunnableConfig => ({
      configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: checkpointId },
    });
    return {
      config: address(latest.checkpoint.id),
      // A copy again: preparing a state applies the pending writes to the checkpoint it is given.
      checkpoint: copyCheckpoint(latest.checkpoint),
      metadata: latest.metadata,
      ...(latest.parentId !== undefined ? { parentConfig: address(latest.parentId) } : {}),
      pendingWrites: pending,
    };
  }

  /** How many runs' writes are kept (for tests). */
  get size(): number {
    return this.byRun.size;
  }

  /** What `runId` wrote on `threadId` so far; a write not for a run, or for another run, ends what was kept. */
  private entry(threadId: string, runId: string | undefined): Written | undefined {
    const current = this.runOfThread.get(threadId);
    if (current !== undefined && current === runId) return this.byRun.get(current);
    if (current !== undefined) this.forgetRun(current);
    if (runId === undefined) return undefined;
    const written: Written = { runId, threadId, writes: new Map() };
    this.byRun.set(runId, written);
    this.runOfThread.set(threadId, runId);
    if (this.byRun.size > MAX_KEPT) this.forgetRun(this.byRun.keys().next().value!);
    return written;
  }

  private forgetRun(runId: string): void {
    const written = this.byRun.get(runId);
    if (!written) return;
    this.byRun.delete(runId);
    if (this.runOfThread.get(written.threadId) === runId) this.runOfThread.delete(written.threadId);
  }
}

const MAX_DEPTH = 64;

/**
 * Whether `value` comes back from the saver's serialisation as the same wire data: JSON's values,
 * arrays and plain objects of them, and LangChain messages whose constructor arguments are such.
 */
export function isPlain(value: unknown, depth = 0): boolean {
  if (value === null || value === undefined) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) return value.every((item) => isPlain(item, depth + 1));
  if (isBaseMessage(value)) return isPlainMessage(value as unknown as Record<string, unknown>, depth);
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  // The shape LangChain's serialisation gives objects it revives (`{lc, type, id, kwargs}`): read back,
  // such a plain object would come back as something else.
  if ('lc' in value && 'type' in value) return false;
  for (const key in value) if (!isPlain((value as Record<string, unknown>)[key], depth + 1)) return false;
  return true;
}

/**
 * A message serialises as its constructor arguments' keys with the values its fields hold now
 * (`Serializable.toJSON`); read back, it is constructed from those. An id set on the message alone
 * is not among them, yet the wire form of the message in hand keeps it (`messageToWire`).
 */
function isPlainMessage(message: Record<string, unknown>, depth: number): boolean {
  const kwargs = message.lc_kwargs as Record<string, unknown>;
  if (typeof kwargs !== 'object' || kwargs === null) return false;
  if (message.id !== undefined && !('id' in kwargs)) return false;
  for (const key in kwargs) if (!isPlain(key in message ? message[key] : kwargs[key], depth + 1)) return false;
  return true;
}
