// The domain service for run records: creation (assistant and thread resolution,
// config/context/metadata merging, the multitask strategies), reads, cancel and delete. Executing
// runs is the worker pool's (`../runs/`), reached through `RunControl`; this module decides what a
// run is and which state changes it causes.

import { v7 as uuid7 } from 'uuid';
import type {
  JsonObject,
  MultitaskStrategy,
  RunKwargs,
  RunQuery,
  RunRecord,
  Storage,
  StorageOps,
  Thread,
} from '../storage/storage.ts';
import type { ApiStreamMode } from '../api/stream-modes.ts';
import type { RunCreate } from '../api/schemas.ts';
import type { AssistantService } from './assistants.ts';
import type { AuthContext } from '../auth/custom.ts';
import { matchesAuthFilters } from '../auth/filters.ts';
import type { AuthFilters } from '../auth/filters.ts';
import { conflict, invalid, notFound } from '../api/errors.ts';
import { isoNow } from '../api/clock.ts';
import { HeaderFilter } from '../api/configurable-headers.ts';
import { RunCancellation } from './run-cancellation.ts';
import type { RunControl } from './run-control.ts';

export type { RunCreate };

export const DEFAULT_STREAM_MODE: ApiStreamMode[] = ['values'];

/** What the custom auth handler decided for a run's creation (all optional: no auth, no limits). */
export interface RunAccess {
  /** The run id the handler was shown (`threads:create_run`). */
  readonly runId?: string;
  /** The `threads:create_run` filter: an existing thread it hides is a 404. */
  readonly threadVisible?: AuthFilters;
  /** The `assistants:read` filter: an assistant it hides is a 404 (system assistants get none). */
  readonly assistantVisible?: AuthFilters;
  /** The authenticated user, stamped into `configurable` (`langgraph_auth_user`, ...). */
  readonly auth?: AuthContext;
  /**
   * Runs first inside the transaction that inserts the run; throwing aborts the creation. A cron
   * claims its tick here, so the tick and its run commit together or not at all.
   */
  readonly claim?: (tx: StorageOps) => Promise<void>;
  /** The run is started through the thread protocol (see `RunKwargs.protocol`). */
  readonly protocol?: boolean;
}

export interface RunServiceOptions {
  /** Which request headers reach `configurable` (default: `HeaderFilter`'s defaults). */
  readonly headerFilter?: HeaderFilter;
  /** What is wrong with a webhook URL (a refused address, ...), or undefined; a problem is a 422. */
  readonly webhookProblem?: (url: string) => string | undefined;
  /**
   * Deletes the checkpoints a run wrote. A rollback of a run that a stopped process left
   * `running` (no worker holds it) calls this, since no worker will; a worker deletes those of the
   * runs it executes itself. Used by the default `cancellation`.
   */
  readonly deleteRunCheckpoints?: (threadId: string, runId: string) => Promise<unknown>;
  /** How runs are cancelled (default: one on this service's storage and run control). */
  readonly cancellation?: RunCancellation;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class RunService {
  constructor(
    private readonly storage: Storage,
    private readonly assistants: AssistantService,
    private readonly execution: RunControl,
    private readonly graphDeployed: (graphId: string) => boolean,
    /** Whether the thread has this checkpoint (namespace `''` is the root graph's). */
    private readonly checkpointExists: (
      threadId: string,
      checkpointId: string,
      checkpointNs: string,
    ) => Promise<boolean> = async () => true,
    private readonly options: RunServiceOptions = {},
  ) {
    this.headerFilter = options.headerFilter ?? new HeaderFilter();
    this.cancellation = options.cancellation ?? new RunCancellation(storage, execution, options.deleteRunCheckpoints);
  }

  private readonly headerFilter: HeaderFilter;
  private readonly cancellation: RunCancellation;

  /**
   * Creates a pending run on `threadId`, or on a new thread when `threadId` is undefined
   * (threadless: the thread is temporary unless `on_completion: keep`). Applies the multitask
   * strategy against the thread's pending and running runs: `reject` answers 409; `enqueue` waits
   * its turn; `interrupt` and `rollback` cancel them once the new run exists.
   */
  async create(
    threadId: string | undefined,
    body: RunCreate,
    headers: Record<string, string | string[] | undefined> = {},
    access: RunAccess = {},
  ): Promise<RunRecord> {
    const assistantId = this.assistants.resolveId(body.assistant_id);
    const webhookProblem = body.webhook ? this.options.webhookProblem?.(body.webhook) : undefined;
    if (webhookProblem) throw invalid(`body.webhook: ${webhookProblem}`);
    const strategy = body.multitask_strategy ?? 'reject';
    // Starting from a checkpoint the thread does not have would silently start from nothing.
    const fromCheckpoint = body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? undefined;
    const existingThread =
      threadId !== undefined && fromCheckpoint ? await this.storage.threads.get(threadId) : undefined;
    if (existingThread && !matchesAuthFilters(existingThread.metadata, access.threadVisible))
      throw notFound(`Thread with ID ${threadId} not found`);
    if (threadId !== undefined && fromCheckpoint && existingThread) {
      if (!(await this.checkpointExists(threadId, fromCheckpoint, body.checkpoint?.checkpoint_ns ?? ''))) {
        throw notFound(`Checkpoint ${fromCheckpoint} not found in thread ${threadId}`);
      }
    }
    const { run, inflight } = await this.storage.transaction(async (tx) => {
      if (access.claim) await access.claim(tx);
      const assistant = await tx.assistants.get(assistantId);
      if (!assistant || !matchesAuthFilters(assistant.metadata, access.assistantVisible)) {
        throw notFound(
          `No assistant found for '${body.assistant_id}'. Make sure the assistant ID is for a valid assistant or a valid graph ID.`,
        );
      }
      if (!this.graphDeployed(assistant.graph_id))
        throw notFound(`Graph '${assistant.graph_id}' of assistant ${assistantId} is not deployed`);
      const now = isoNow();
      const runId = access.runId ?? uuid7();
      const temporary = threadId === undefined && (body.on_completion ?? 'delete') === 'delete';
      const runConfig: JsonObject = isObject(body.config) ? body.config : {};
      let thread = threadId === undefined ? undefined : await tx.threads.get(threadId);
      // A thread the user's filter hides answers as a missing one, and is never created over.
      if (thread && !matchesAuthFilters(thread.metadata, access.threadVisible))
        throw notFound(`Thread with ID ${threadId} not found`);
      if (threadId !== undefined && !thread && body.if_not_exists !== 'create')
        throw notFound(`Thread with ID ${threadId} not found`);
      if (!thread) {
        thread = {
          thread_id: threadId ?? uuid7(),
          created_at: now,
          updated_at: now,
          metadata: { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id, ...(body.metadata ?? {}) },
          status: 'busy',
          config: {},
          values: null,
          interrupts: null,
        };
        await tx.threads.insert(thread);
      }
      const inflight = await tx.runs.inflight(thread.thread_id);
      if (inflight.length > 0 && strategy === 'reject') {
        throw conflict(
          `Thread ${thread.thread_id} is already running a task. Wait for it to finish or choose a different multitask strategy (enqueue, interrupt or rollback).`,
        );
      }
      const assistantConfigurable = isObject(assistant.config.configurable) ? assistant.config.configurable : {};
      const threadConfigurable = isObject(thread.config.configurable) ? thread.config.configurable : {};
      const requestConfigurable = isObject(runConfig.configurable) ? runConfig.configurable : {};
      const checkpointSelector: JsonObject = {};
      if (body.checkpoint)
        for (const [k, v] of Object.entries(body.checkpoint))
          if (v !== undefined && v !== null) checkpointSelector[k] = v;
      const configurable: JsonObject = {
        ...assistantConfigurable,
        ...threadConfigurable,
        ...requestConfigurable,
        ...this.headerFilter.toConfigurable(headers),
        ...checkpointSelector,
        run_id: runId,
        thread_id: thread.thread_id,
        graph_id: assistant.graph_id,
        assistant_id: assistant.assistant_id,
        user_id:
          requestConfigurable.user_id ??
          threadConfigurable.user_id ??
          assistantConfigurable.user_id ??
          access.auth?.user.identity ??
          null,
        checkpoint_id: body.checkpoint_id ?? checkpointSelector.checkpoint_id ?? null,
        ...(body.langsmith_tracer?.project_name ? { langsmith_project: body.langsmith_tracer.project_name } : {}),
      };
      // Who the user is comes from the server alone: `langgraph_auth_*` keys a request (or an
      // assistant's or thread's config) brings are dropped; the authenticated user is stamped as
      // the reference stamps it, for graphs that act on the user's behalf.
      for (const key of Object.keys(configurable)) if (key.startsWith('langgraph_auth_')) delete configurable[key];
      if (access.auth) {
        Object.assign(configurable, {
          langgraph_auth_user: access.auth.user,
          langgraph_auth_user_id: access.auth.user.identity,
          langgraph_auth_permissions: access.auth.scopes,
        });
      }
      // The thread as this run leaves it names this run's graph and assistant (updated below); the
      // run's metadata is merged from that, not from the previous run's.
      const threadMetadata: JsonObject = {
        ...thread.metadata,
        graph_id: assistant.graph_id,
        assistant_id: assistant.assistant_id,
      };
      const metadata: JsonObject = { ...assistant.metadata, ...threadMetadata, ...(body.metadata ?? {}) };
      const context =
        assistant.context !== null && assistant.context !== undefined && !isObject(assistant.context)
          ? assistant.context
          : {
              ...(isObject(assistant.context) ? assistant.context : {}),
              ...(isObject(body.context) ? body.context : {}),
            };
      const streamMode =
        body.stream_mode === undefined
          ? DEFAULT_STREAM_MODE
          : Array.isArray(body.stream_mode)
            ? body.stream_mode
            : [body.stream_mode];
      const kwargs: RunKwargs = {
        input: body.input ?? null,
        command: body.command ?? null,
        config: {
          ...assistant.config,
          ...runConfig,
          configurable,
          metadata: { ...metadata, created_by: metadata.created_by ?? 'system' },
        },
        context,
        stream_mode: [...new Set(streamMode)],
        interrupt_before: body.interrupt_before ?? null,
        interrupt_after: body.interrupt_after ?? null,
        webhook: body.webhook ?? null,
        feedback_keys: body.feedback_keys ?? null,
        temporary,
        subgraphs: body.stream_subgraphs ?? false,
        resumable: body.stream_resumable ?? false,
        ...(access.protocol ? { protocol: true } : {}),
      };
      const run: RunRecord = {
        run_id: runId,
        thread_id: thread.thread_id,
        assistant_id: assistant.assistant_id,
        created_at: isoNow((body.after_seconds ?? 0) * 1000),
        updated_at: now,
        status: 'pending',
        metadata,
        kwargs,
        multitask_strategy: strategy,
        error: null,
        attempt: 0,
        temporary,
      };
      await tx.runs.insert(run);
      await tx.threads.update({
        ...thread,
        status: 'busy',
        metadata: threadMetadata,
        config: {
          ...thread.config,
          ...assistant.config,
          ...runConfig,
          configurable: { ...threadConfigurable, ...assistantConfigurable, ...requestConfigurable },
        },
        updated_at: now,
      });
      return { run, inflight };
    });
    this.execution.open(run.run_id, run.thread_id);
    if (strategy === 'interrupt' || strategy === 'rollback') {
      for (const old of inflight) await this.cancellation.cancelOne(old, strategy);
    }
    this.execution.notify();
    return run;
  }

  async get(threadId: string | undefined, runId: string): Promise<RunRecord> {
    const run = await this.storage.runs.get(runId);
    if (!run || (threadId !== undefined && run.thread_id !== threadId)) throw notFound(`Run ${runId} not found`);
    return run;
  }

  /** The run, or undefined when there is none (where a missing run is no error). */
  find(runId: string): Promise<RunRecord | undefined> {
    return this.storage.runs.get(runId);
  }

  /** The ids of every run of the thread, in the order `list` gives them. */
  async idsOfThread(threadId: string): Promise<string[]> {
    return (await this.storage.runs.list(threadId, { limit: 10_000, offset: 0 })).map((run) => run.run_id);
  }

  /** The ids of the thread's pending and running runs; undefined once the thread is gone. */
  async inflightIds(threadId: string): Promise<string[] | undefined> {
    if (!(await this.storage.threads.get(threadId))) return undefined;
    return (await this.storage.runs.inflight(threadId)).map((run) => run.run_id);
  }

  /**
   * Whether the run ended with its graph paused on an interrupt: it succeeded, its thread waits
   * for an answer, and no run came after it on the thread.
   */
  async endedOnInterrupt(run: RunRecord): Promise<boolean> {
    if (run.status !== 'success') return false;
    const thread = await this.storage.threads.get(run.thread_id);
    if (thread?.status !== 'interrupted') return false;
    const last = (await this.storage.runs.list(run.thread_id, { limit: 10_000, offset: 0 })).at(-1);
    return last?.run_id === run.run_id;
  }

  async list(threadId: string, query: RunQuery): Promise<RunRecord[]> {
    if (!(await this.storage.threads.get(threadId))) throw notFound(`Thread with ID ${threadId} not found`);
    return this.storage.runs.list(threadId, query);
  }

  /**
   * Cancels a pending or running run. One that has already ended is left as it is, without an
   * error, as on the reference server: a client cannot know whether its run ends before its
   * cancel arrives, and either way the run is no longer running.
   */
  async cancel(
    threadId: string | undefined,
    runId: string,
    action: 'interrupt' | 'rollback',
    wait: boolean,
  ): Promise<void> {
    const run = await this.get(threadId, runId);
    if (run.status !== 'pending' && run.status !== 'running') return;
    await this.cancellation.cancelOne(run, action);
    if (wait) await this.execution.waitFor(runId);
  }

  /** Interrupts a run if it is still pending or running (a client that left); an ended run is left alone. */
  cancelIfActive(runId: string): Promise<void> {
    return this.cancellation.cancelIfActive(runId);
  }

  async delete(threadId: string | undefined, runId: string): Promise<void> {
    const run = await this.get(threadId, runId);
    if (run.status === 'pending' || run.status === 'running') {
      await this.cancellation.cancelOne(run, 'interrupt');
      await this.execution.waitFor(runId);
    }
    await this.storage.runs.delete(runId);
    this.execution.discard(runId);
  }
}
