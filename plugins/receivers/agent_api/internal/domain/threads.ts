// Threads: records with metadata and a status (`idle`, `busy` while a run is pending or running,
// `interrupted`, `error`), and their state, read from and written to the graph's checkpoints.

import type { RunnableConfig } from '@langchain/core/runnables';
import { InvalidUpdateError } from '@langchain/langgraph';
import type { StateSnapshot } from '@langchain/langgraph';
import type { FromSchema } from 'json-schema-to-ts';
import { v7 as uuid7 } from 'uuid';
import type { CompiledGraphLike } from '../graphs/registry.ts';
import { EMPTY_STATE, checkpointRef, interruptsOf, snapshotToThreadState } from '../graphs/state.ts';
import type { ThreadState } from '../graphs/state.ts';
import { toWire } from '../graphs/serialize.ts';
import type { JsonObject, Storage, Thread, ThreadQuery } from '../storage/storage.ts';
import type { CheckpointDatabase } from '../storage/checkpoints.ts';
import type { RequestPayload, checkpoint, stateUpdate, threadCreate } from '../api/schemas.ts';
import { conflict, invalid, notFound } from '../api/errors.ts';
import { isoNow } from '../api/clock.ts';
import { settleThread } from '../storage/settle-thread.ts';
import { StateCache } from './state-cache.ts';

/** A thread's creation parameters: the request body (`threadCreate` in api/schemas.ts), nulls dropped. */
export type ThreadCreate = RequestPayload<FromSchema<typeof threadCreate>>;

/** Which checkpoint to read or write from (`checkpoint` in api/schemas.ts). */
export type CheckpointSelector = NonNullable<FromSchema<typeof checkpoint>>;

/** A state write: the request body (`stateUpdate` in api/schemas.ts), nulls dropped. */
export type StateUpdate = RequestPayload<FromSchema<typeof stateUpdate>>;

/** A history page's query: the request body or query string with `limit` defaulted. */
export interface HistoryQuery {
  limit: number;
  /**
   * A checkpoint id, a checkpoint reference `{checkpoint_id}` or a config `{configurable:
   * {checkpoint_id}}`; the schema checks no more than that it is a string or an object.
   */
  before?: string | JsonObject;
  metadata?: JsonObject;
  checkpoint?: CheckpointSelector | null;
}

/**
 * Runs a state write, turning LangGraph's `InvalidUpdateError` (an unknown `as_node`, values the
 * node could not have returned) into a 422: the request is wrong, not the server.
 */
async function rejectingInvalidUpdates<T>(
  graph: CompiledGraphLike,
  asNodes: readonly (string | undefined)[],
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof InvalidUpdateError)) throw error;
    // Name the field at fault: a node the graph does not have, else the values.
    const nodes = (graph as { nodes?: Record<string, unknown> }).nodes ?? {};
    const unknownNode = asNodes.some((node) => node !== undefined && !node.startsWith('__') && !(node in nodes));
    throw invalid(`body.${unknownNode ? 'as_node' : 'values'}: ${error.message.split('\n')[0]}`);
  }
}

/** `value[key]` when `value` is an object, else undefined (as `value?.[key]` reads a string's). */
function fieldOf(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, key) : undefined;
}

/** A graph bound to the server's checkpointer and store, loaded for a thread's config. */
export type GraphForThread = (graphId: string, config: RunnableConfig) => Promise<CompiledGraphLike>;

/** How much latest-state JSON is kept for repeated reads (see state-cache.ts). */
const STATE_CACHE = { maxThreads: 1000, maxChars: 16 * 1024 * 1024 };

export class ThreadService {
  /** Latest states already serialised; only where this process alone writes the checkpoints. */
  private readonly states?: StateCache;

  constructor(
    private readonly storage: Storage,
    private readonly checkpoints: CheckpointDatabase,
    private readonly graphFor: GraphForThread,
    /** Stops the thread's in-flight runs before it is deleted. */
    private readonly cancelThreadRuns: (threadId: string) => Promise<void>,
  ) {
    if (checkpoints.onChange) {
      const states = (this.states = new StateCache(STATE_CACHE));
      checkpoints.onChange((threadId) => states.invalidate(threadId));
    }
  }

  /** Threads whose latest state is kept serialised (0 without a cache). */
  get cachedStates(): number {
    return this.states?.size ?? 0;
  }

  /**
   * The thread's latest state as JSON (what `GET /threads/{id}/state` answers): from the cache
   * when this thread's checkpoints were not written since it was last read with the same graph
   * and config, else read as `state` reads it.
   */
  async latestStateJson(threadId: string): Promise<string> {
    if (!this.states) return JSON.stringify(await this.state(threadId));
    const thread = await this.get(threadId);
    const key = `${String(thread.metadata.graph_id)}\u0000${JSON.stringify(thread.config)}`;
    return this.states.get(threadId, key, async () => JSON.stringify(await this.stateOf(thread, {})));
  }

  /**
   * Creates the thread. Under custom auth (`visible`: may this user see a thread with this
   * metadata?), an existing thread of that id it may not see is a conflict, never returned
   * (`if_exists: do_nothing` included).
   */
  async create(body: ThreadCreate, options: { visible?: (metadata: JsonObject) => boolean } = {}): Promise<Thread> {
    const threadId = body.thread_id || uuid7();
    if (body.supersteps?.length && typeof body.metadata?.graph_id !== 'string') {
      throw invalid('metadata.graph_id: is required when supersteps are given');
    }
    const thread = await this.storage.transaction(async (tx) => {
      const existing = await tx.threads.get(threadId);
      if (existing) {
        if (options.visible && !options.visible(existing.metadata)) throw conflict(`Thread ${threadId} already exists`);
        if (body.if_exists === 'do_nothing') return { thread: existing, created: false };
        throw conflict(`Thread ${threadId} already exists`);
      }
      const now = isoNow();
      const created: Thread = {
        thread_id: threadId,
        created_at: now,
        updated_at: now,
        metadata: body.metadata ?? {},
        status: 'idle',
        config: {},
        values: null,
        interrupts: null,
      };
      await tx.threads.insert(created);
      return { thread: created, created: true };
    });
    if (thread.created && body.supersteps?.length) {
      try {
        return await this.applySupersteps(thread.thread, body.supersteps);
      } catch (error) {
        // The request failed as a whole: no half-built thread is left behind.
        await this.storage.threads.delete(threadId);
        await this.checkpoints.deleteThread(threadId);
        throw error;
      }
    }
    return thread.thread;
  }

  private async applySupersteps(thread: Thread, supersteps: NonNullable<ThreadCreate['supersteps']>): Promise<Thread> {
    const graphId = thread.metadata.graph_id;
    if (typeof graphId !== 'string') throw invalid('metadata.graph_id: is required when supersteps are given');
    const graph = await this.graphFor(graphId, { configurable: { thread_id: thread.thread_id } });
    const config = { configurable: { thread_id: thread.thread_id, checkpoint_ns: '' } };
    if (!graph.bulkUpdateState) throw invalid('supersteps: this graph cannot apply bulk state updates');
    const asNodes = supersteps.flatMap((step) => step.updates.map((update) => update.as_node));
    await rejectingInvalidUpdates(graph, asNodes, () =>
      graph.bulkUpdateState!(
        config,
        supersteps.map((step) => ({
          updates: step.updates.map((u) => ({ values: u.values ?? u.command, asNode: u.as_node })),
        })),
      ),
    );
    return this.refreshValues(thread.thread_id, graph);
  }

  async get(threadId: string): Promise<Thread> {
    const thread = await this.storage.threads.get(threadId);
    if (!thread) throw notFound(`Thread with ID ${threadId} not found`);
    return thread;
  }

  /** The thread, or undefined when there is none (where a missing thread is no error). */
  find(threadId: string): Promise<Thread | undefined> {
    return this.storage.threads.get(threadId);
  }

  async exists(threadId: string): Promise<boolean> {
    return (await this.storage.threads.get(threadId)) !== undefined;
  }

  /** Merges `metadata` into the thread's metadata. */
  async patch(threadId: string, metadata: JsonObject): Promise<Thread> {
    return this.storage.transaction(async (tx) => {
      const thread = await tx.threads.get(threadId);
      if (!thread) throw notFound(`Thread with ID ${threadId} not found`);
      const next = { ...thread, metadata: { ...thread.metadata, ...metadata }, updated_at: isoNow() };
      await tx.threads.update(next);
      return next;
    });
  }

  /** Deletes the thread, its runs (stopping those in flight) and its checkpoints. */
  async delete(threadId: string): Promise<void> {
    await this.get(threadId);
    await this.cancelThreadRuns(threadId);
    await this.storage.threads.delete(threadId);
    await this.checkpoints.deleteThread(threadId);
  }

  search(query: ThreadQuery) {
    return this.storage.threads.search(query);
  }

  /**
   * A new idle thread holding a copy of the source's checkpoints and metadata (or `metadata`, as
   * the custom auth handler left it for the copy), with id `threadId` or a new one.
   */
  async copy(threadId: string, options: { threadId?: string; metadata?: JsonObject } = {}): Promise<Thread> {
    const source = await this.get(threadId);
    const now = isoNow();
    const copy: Thread = {
      ...source,
      thread_id: options.threadId ?? uuid7(),
      created_at: now,
      updated_at: now,
      status: 'idle',
      metadata: { ...(options.metadata ?? source.metadata) },
    };
    await this.storage.threads.insert(copy);
    await this.checkpoints.copyThread(source.thread_id, copy.thread_id);
    return copy;
  }

  private async graphOf(thread: Thread): Promise<CompiledGraphLike | undefined> {
    const graphId = thread.metadata.graph_id;
    if (typeof graphId !== 'string') return undefined;
    return this.graphFor(graphId, {
      ...(thread.config as RunnableConfig),
      configurable: { ...((thread.config.configurable as object) ?? {}), thread_id: thread.thread_id },
    });
  }

  private configFor(threadId: string, selector?: CheckpointSelector | null, checkpointId?: string): RunnableConfig {
    const configurable: Record<string, unknown> = { thread_id: threadId, checkpoint_ns: '' };
    if (selector) {
      for (const [key, value] of Object.entries(selector))
        if (value !== undefined && value !== null) configurable[key] = value;
    }
    if (checkpointId) configurable.checkpoint_id = checkpointId;
    return { configurable };
  }

  async state(
    threadId: string,
    options: { subgraphs?: boolean; checkpoint?: CheckpointSelector | null; checkpoint_id?: string } = {},
  ): Promise<ThreadState> {
    return this.stateOf(await this.get(threadId), options);
  }

  private async stateOf(
    thread: Thread,
    options: { subgraphs?: boolean; checkpoint?: CheckpointSelector | null; checkpoint_id?: string },
  ): Promise<ThreadState> {
    const threadId = thread.thread_id;
    const requested = options.checkpoint_id ?? options.checkpoint?.checkpoint_id;
    const checkpointNotFound = () => notFound(`Checkpoint ${requested} not found in thread ${threadId}`);
    const graph = await this.graphOf(thread);
    if (!graph) {
      // A thread no graph ran yet has no checkpoints: any checkpoint asked for is unknown.
      if (requested) throw checkpointNotFound();
      return { ...EMPTY_STATE };
    }
    const config = this.configFor(threadId, options.checkpoint, options.checkpoint_id);
    const snapshot = await graph.getState(config, { subgraphs: options.subgraphs ?? false });
    // LangGraph answers an unknown checkpoint with an empty snapshot echoing the requested id; only
    // a saved checkpoint has a creation time.
    if (requested && !snapshot?.createdAt) throw checkpointNotFound();
    const parent = snapshot.parentConfig ? await graph.getState(snapshot.parentConfig) : undefined;
    return snapshotToThreadState(snapshot, parent);
  }

  /** Writes values to the thread's state as if `as_node` had produced them. */
  async updateState(threadId: string, update: StateUpdate): Promise<{ checkpoint: unknown }> {
    const thread = await this.get(threadId);
    if ((await this.storage.runs.inflight(threadId)).length > 0)
      throw conflict(`Thread ${threadId} is busy: a run is pending or running`);
    const graph = await this.graphOf(thread);
    if (!graph) throw invalid(`thread ${threadId} has no graph yet: run it once, or create it with metadata.graph_id`);
    const config = this.configFor(threadId, update.checkpoint, update.checkpoint_id);
    const next = await rejectingInvalidUpdates(graph, [update.as_node], () =>
      graph.updateState(config, update.values ?? null, update.as_node),
    );
    await this.refreshValues(threadId, graph);
    return { checkpoint: toWire(checkpointRef(next) ?? next.configurable ?? null) };
  }

  /** Merges metadata into the latest checkpoint's metadata (no new checkpoint). */
  async patchStateMetadata(threadId: string, metadata: JsonObject): Promise<void> {
    await this.get(threadId);
    if (!(await this.checkpoints.patchLatestMetadata(threadId, metadata)))
      throw notFound(`Thread ${threadId} has no state yet`);
  }

  async history(threadId: string, query: HistoryQuery): Promise<ThreadState[]> {
    const thread = await this.get(threadId);
    const graph = await this.graphOf(thread);
    if (!graph) return [];
    const before =
      typeof query.before === 'string'
        ? query.before
        : (query.before?.checkpoint_id ?? fieldOf(query.before?.configurable, 'checkpoint_id'));
    const snapshots: StateSnapshot[] = [];
    const iterator = graph.getStateHistory(this.configFor(threadId, query.checkpoint), {
      limit: query.limit,
      ...(before ? { before: { configurable: { checkpoint_id: before } } } : {}),
      ...(query.metadata ? { filter: query.metadata } : {}),
    });
    for await (const snapshot of iterator) snapshots.push(snapshot);
    // Each checkpoint's `writes` come from its parent: usually the next entry of the page, read
    // separately only where the page (its end, or a metadata filter) leaves it out.
    const byId = new Map(
      snapshots.map((snapshot) => [snapshot.config.configurable?.checkpoint_id as string, snapshot]),
    );
    const states: ThreadState[] = [];
    for (const snapshot of snapshots) {
      const parentId = snapshot.parentConfig?.configurable?.checkpoint_id as string | undefined;
      const parent = parentId ? (byId.get(parentId) ?? (await graph.getState(snapshot.parentConfig!))) : undefined;
      states.push(snapshotToThreadState(snapshot, parent));
    }
    return states;
  }

  /**
   * Copies the latest checkpoint's values and interrupts onto the thread record after a state
   * update, and its status with them, by the rule a run's end follows: `interrupted` while the
   * graph has nodes still to run, else `idle` (`busy` while runs wait). An update that answers an
   * interrupt, or moves the thread past a failed step, leaves no status that contradicts its state.
   */
  async refreshValues(threadId: string, graph: CompiledGraphLike): Promise<Thread> {
    const snapshot = await graph.getState({ configurable: { thread_id: threadId, checkpoint_ns: '' } });
    return this.storage.transaction(async (tx) => {
      const settled = await settleThread(tx, threadId, {
        interrupted: snapshot.next.length > 0,
        values: toWire(snapshot.values) as JsonObject,
        interrupts: interruptsOf(snapshot),
      });
      if (!settled) throw notFound(`Thread with ID ${threadId} not found`);
      return settled;
    });
  }
}
