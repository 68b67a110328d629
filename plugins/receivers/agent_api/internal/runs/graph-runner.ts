// Executes one claimed run: loads its graph with the server's checkpointer and store, streams it
// with the run's stream modes into the broker, and records the outcome — `success`, `error`
// (with an `error` event), `interrupted` (cancelled), `timeout` — on the run and its thread.
// A failing run records its own error and never affects another run.

import type { StreamEvent as LangChainEvent } from '@langchain/core/tracers/log_stream';
import { Command, Send } from '@langchain/langgraph';
import type { BaseStore } from '@langchain/langgraph';
import type { Logger } from 'pino';
import type { GraphRegistry } from '../graphs/registry.ts';
import type { CheckpointDatabase } from '../storage/checkpoints.ts';
import type { Assistant, JsonObject, RunKwargs, RunRecord, RunStatus, Storage } from '../storage/storage.ts';
import { TtlMap } from 'tracepipe/collections';
import { isoNow } from '../api/clock.ts';
import { settleThread } from '../storage/settle-thread.ts';
import type { RunTracer } from '../tracing/tracer.ts';
import { metadataEvent } from './broker.ts';
import type { EventBroker } from './broker.ts';
import { interruptsOf } from '../graphs/state.ts';
import { toWire } from '../graphs/serialize.ts';
import { StreamModeMapper, libraryModes, needsEventStream } from './stream-modes.ts';
import { ThrottledWarning } from './throttled-warning.ts';
import { Turnstile } from './turnstile.ts';
import { sendWebhook } from './webhook.ts';
import type { WebhookOptions } from './webhook.ts';

export interface GraphRunnerMetrics {
  runFinished(status: RunStatus, seconds: number): void;
  tracingFailed(): void;
  webhookFailed(): void;
}

export interface GraphRunnerOptions {
  readonly storage: Storage;
  readonly graphs: GraphRegistry;
  readonly checkpoints: CheckpointDatabase;
  readonly store: BaseStore;
  readonly broker: EventBroker;
  /** Called when a run starts executing here (other instances may then reach it to cancel it). */
  readonly onStart?: (runId: string) => void;
  readonly logger: Logger;
  readonly metrics: GraphRunnerMetrics;
  /** 0: no limit. */
  readonly runTimeoutMs: number;
  readonly tracer?: (run: RunRecord, assistant: Assistant) => RunTracer | undefined;
  /** Where webhooks may go, and their time limit and attempts. */
  readonly webhooks: WebhookOptions;
}

/**
 * Why a run stopped before its graph ended: cancelled (`interrupt`, `rollback`), over its time
 * limit, the server stopping, or `lost`: its lease lapsed and another instance settled it, so
 * nothing more is recorded here.
 */
export type StopReason = 'interrupt' | 'rollback' | 'timeout' | 'shutdown' | 'lost';

/** Messages that make a graph's error readable on the wire: `{error: <class>, message}`. */
export function describeError(error: unknown): { error: string; message: string } {
  if (error instanceof Error)
    return {
      error: error.constructor?.name && error.constructor.name !== 'Error' ? error.constructor.name : error.name,
      message: error.message,
    };
  return { error: 'Error', message: String(error) };
}

function toCommand(command: NonNullable<RunKwargs['command']>): Command {
  const toGoto = (item: unknown): unknown =>
    typeof item === 'object' && item !== null && 'node' in item
      ? new Send(String((item as { node: unknown }).node), (item as { input?: unknown }).input)
      : item;
  const goto = Array.isArray(command.goto)
    ? command.goto.map(toGoto)
    : command.goto !== undefined
      ? toGoto(command.goto)
      : undefined;
  return new Command({
    ...(command.resume !== undefined ? { resume: command.resume } : {}),
    ...(command.update !== undefined && command.update !== null
      ? { update: command.update as Record<string, unknown> }
      : {}),
    ...(goto !== undefined ? { goto: goto as never } : {}),
  });
}

/**
 * How long, and for how many runs, the last root values of a finished run are kept for wait and
 * join. They read them as the run ends; a later join falls back on the thread's values (see
 * `RunCoordinator.result`). Kept by time as well as by count, so that an idle server holds none of
 * them and a busy one no more than a few seconds' worth.
 */
const RESULT_TTL_MS = 60_000;
const MAX_RESULTS = 1000;

export class GraphRunner {
  private readonly tracingWarning: ThrottledWarning;
  private readonly webhookWarning: ThrottledWarning;
  private readonly active = new Map<string, AbortController>();
  /** The last root `values` of recently finished runs, for wait/join (bounded, oldest dropped). */
  private readonly results = new TtlMap<string, unknown>(RESULT_TTL_MS, MAX_RESULTS);
  /** Where runs let the event loop read new requests between their steps (see turnstile.ts). */
  private readonly turnstile = new Turnstile();

  constructor(private readonly options: GraphRunnerOptions) {
    this.tracingWarning = new ThrottledWarning(options.logger, 'Tracing a run failed; the run itself is unaffected.');
    this.webhookWarning = new ThrottledWarning(options.logger, 'Could not deliver a run webhook.');
  }

  activeIds(): ReadonlySet<string> {
    return new Set(this.active.keys());
  }

  get running(): number {
    return this.active.size;
  }

  result(runId: string): unknown {
    return this.results.get(runId);
  }

  abort(runId: string, reason: StopReason): boolean {
    const controller = this.active.get(runId);
    if (!controller) return false;
    controller.abort(reason);
    return true;
  }

  abortAll(reason: StopReason): void {
    for (const controller of this.active.values()) controller.abort(reason);
  }

  /**
   * Executes the run to its end and records it. Resolves to true when its thread has more runs
   * waiting (enqueued behind it): the worker pool, which claims only when told to, then has a
   * worker claim the next one now.
   */
  async execute(run: RunRecord): Promise<boolean> {
    const { broker, logger } = this.options;
    const started = Date.now();
    const startedAt = isoNow();
    const controller = new AbortController();
    this.active.set(run.run_id, controller);
    this.options.onStart?.(run.run_id);
    // The run's creation put its `metadata` first in the log; a log without it (an in-process log
    // lost with a restart before the run started) gets it now, so every stream starts with one.
    broker.open(run.run_id, metadataEvent(run.run_id), { reopen: true });
    const timer =
      this.options.runTimeoutMs > 0
        ? setTimeout(() => controller.abort('timeout'), this.options.runTimeoutMs)
        : undefined;
    timer?.unref();
    let failure: { error: string; message: string } | undefined;
    let tracer: RunTracer | undefined;
    let assistant: Assistant | undefined;
    const { kwargs } = run;
    try {
      await this.turnstile.pass();
      assistant = await this.options.storage.assistants.get(run.assistant_id);
      if (!assistant) throw new Error(`Assistant ${run.assistant_id} was deleted before the run started`);
      try {
        tracer = this.options.tracer?.(run, assistant);
      } catch (error) {
        this.tracingFailed(run, error);
      }
      // Cancelled before the graph starts (while its assistant was read): the graph never starts,
      // so it writes no checkpoint that a rollback would have to find.
      controller.signal.throwIfAborted();
      const mapper = await this.stream(run, assistant, kwargs, controller.signal, tracer);
      const result = mapper.result();
      if (result !== undefined) this.remember(run.run_id, toWire(result));
    } catch (error) {
      if (!controller.signal.aborted) {
        failure = describeError(error);
        broker.publish(run.run_id, 'error', failure);
      }
    } finally {
      clearTimeout(timer);
      this.active.delete(run.run_id);
    }
    const reason = controller.signal.aborted ? (controller.signal.reason as StopReason) : undefined;
    if (reason === 'timeout') {
      failure = { error: 'TimeoutError', message: `Run exceeded its time limit of ${this.options.runTimeoutMs} ms` };
      broker.publish(run.run_id, 'error', failure);
    } else if (reason === 'shutdown') {
      failure = {
        error: 'ServerShutdown',
        message: 'The server stopped while this run was executing; start a new run to retry.',
      };
      broker.publish(run.run_id, 'error', failure);
    }
    if (tracer) {
      try {
        await tracer.flush();
      } catch (error) {
        this.tracingFailed(run, error);
      }
    }
    // Settled by the instance that reclaimed it (status, thread, stream end): nothing left to do.
    if (reason === 'lost') return false;
    await this.turnstile.pass();
    const status: RunStatus | 'deleted' =
      reason === 'rollback'
        ? 'deleted'
        : reason === 'interrupt'
          ? 'interrupted'
          : reason === 'timeout'
            ? 'timeout'
            : failure
              ? 'error'
              : 'success';
    let queuedBehind = false;
    try {
      queuedBehind = await this.finish(run, assistant, status, failure);
    } catch (error) {
      logger.error({ run_id: run.run_id, err: error }, 'Could not record the end of a run.');
    }
    if (status !== 'deleted') this.options.metrics.runFinished(status, (Date.now() - started) / 1000);
    if (status === 'deleted') broker.discard(run.run_id);
    else broker.finish(run.run_id);
    if (kwargs.webhook && status !== 'deleted') {
      const record = (await this.options.storage.runs.get(run.run_id)) ?? { ...run, error: failure ?? null };
      const thread = run.temporary ? undefined : await this.options.storage.threads.get(run.thread_id);
      const payload = { run: record, status, startedAt, values: thread?.values ?? this.results.get(run.run_id) };
      // Not awaited: the worker moves on; delivery has its own time limit and attempts.
      void sendWebhook(kwargs.webhook, payload, this.options.webhooks, (fields) => {
        this.options.metrics.webhookFailed();
        this.webhookWarning.warn(fields);
      });
    }
    return queuedBehind;
  }

  private async stream(
    run: RunRecord,
    assistant: Assistant,
    kwargs: RunKwargs,
    signal: AbortSignal,
    tracer?: RunTracer,
  ): Promise<StreamModeMapper> {
    const { config: runConfig } = kwargs;
    const { configurable, metadata, tags, recursion_limit: recursionLimit, ...rest } = runConfig;
    const graph = await this.options.graphs.get(assistant.graph_id, {
      config: { ...rest, tags, configurable, metadata },
      checkpointer: kwargs.temporary ? false : this.options.checkpoints.saver,
      store: this.options.store,
    });
    const mapper = new StreamModeMapper(kwargs.stream_mode, run.run_id, kwargs.subgraphs);
    const input = kwargs.command ? toCommand(kwargs.command) : kwargs.input;
    const options = {
      ...rest,
      ...(tags ? { tags } : {}),
      ...(recursionLimit !== undefined ? { recursionLimit } : {}),
      configurable: Object.fromEntries(Object.entries(configurable).filter(([, value]) => value !== null)),
      // Checkpoint metadata comes from here: the ids let history be filtered by run and let a
      // rollback find the checkpoints a run wrote.
      metadata: {
        ...metadata,
        run_id: run.run_id,
        thread_id: configurable.thread_id,
        graph_id: assistant.graph_id,
        assistant_id: assistant.assistant_id,
        user_id: configurable.user_id ?? null,
        run_attempt: run.attempt,
      },
      context: kwargs.context,
      ...(kwargs.interrupt_before ? { interruptBefore: kwargs.interrupt_before } : {}),
      ...(kwargs.interrupt_after ? { interruptAfter: kwargs.interrupt_after } : {}),
      streamMode: libraryModes(kwargs.stream_mode),
      subgraphs: kwargs.subgraphs,
      runId: run.run_id,
      signal,
      ...(tracer ? { callbacks: [tracer] } : {}),
    };
    const publish = (event: LangChainEvent) => {
      for (const mapped of mapper.map(event)) this.options.broker.publish(run.run_id, mapped.event, mapped.data);
    };
    if (needsEventStream(kwargs.stream_mode)) {
      for await (const event of graph.streamEvents(input, { ...options, version: 'v2' })) {
        publish(event as LangChainEvent);
        await this.turnstile.pass();
      }
    } else {
      // `stream` costs much less than `streamEvents`; its chunks are what the root graph's
      // `on_chain_stream` events would carry, so the same mapping applies. A protocol run streams
      // as LangGraph's protocol streaming does (`version: "v3"`): its `messages` chunks are then
      // message lifecycle events, as the reference server's protocol sessions get them.
      const streamOptions = kwargs.protocol ? { ...options, version: 'v3' as const } : options;
      for await (const chunk of await graph.stream(input, streamOptions)) {
        publish({
          event: 'on_chain_stream',
          run_id: run.run_id,
          name: '',
          tags: [],
          metadata: {},
          data: { chunk },
        } as LangChainEvent);
        await this.turnstile.pass();
      }
    }
    return mapper;
  }

  private async finish(
    run: RunRecord,
    assistant: Assistant | undefined,
    status: RunStatus | 'deleted',
    failure?: { error: string; message: string },
  ): Promise<boolean> {
    const { storage, checkpoints } = this.options;
    if (run.temporary) {
      // A threadless run's thread exists only for the run (no checkpointer was used): drop it with
      // its runs. Wait and join answer from the broker's retained events and the kept values.
      await storage.threads.delete(run.thread_id);
      return false;
    }
    if (status === 'deleted') await checkpoints.deleteRunCheckpoints(run.thread_id, run.run_id);
    let values: JsonObject | null | undefined;
    let interrupts: JsonObject | null | undefined;
    let interrupted = false;
    if (assistant && this.options.graphs.has(assistant.graph_id)) {
      try {
        const graph = await this.options.graphs.get(assistant.graph_id, {
          config: { configurable: run.kwargs.config.configurable },
          checkpointer: checkpoints.saver,
          store: this.options.store,
        });
        // After a graph that ran to its end or failed, every checkpoint write it made has been
        // stored (LangGraph awaits them before its stream ends), so the checkpoint tuple the run
        // last wrote can stand for the thread's (`stateAfterRun`); a stopped run's graph may still
        // be writing in the background, so its thread is read.
        const ranToItsEnd = status === 'success' || status === 'error';
        // Taken either way, so that nothing stays kept for the run.
        const lent = checkpoints.stateAfterRun?.(run.thread_id, run.run_id);
        const snapshot = await graph.getState(
          ranToItsEnd && lent ? lent : { configurable: { thread_id: run.thread_id, checkpoint_ns: '' } },
        );
        values = (toWire(snapshot.values) as JsonObject) ?? null;
        interrupts = interruptsOf(snapshot);
        interrupted = status === 'success' && snapshot.next.length > 0;
      } catch (error) {
        this.options.logger.warn({ run_id: run.run_id, err: error }, 'Could not read the thread state after a run.');
      }
    }
    // Whether runs wait on the thread (settled as busy): the caller has a worker claim the next.
    return storage.transaction(async (tx) => {
      // The thread first: reading it takes its lock (PostgreSQL), so the run is then read once,
      // as the transaction that last held the thread left it.
      const thread = (await tx.threads.get(run.thread_id)) ?? null;
      const current = await tx.runs.get(run.run_id);
      // Already settled elsewhere (its lease lapsed and another instance reclaimed it): the first
      // outcome recorded stands.
      if (current && current.status !== 'running') return false;
      if (status === 'deleted') await tx.runs.delete(run.run_id);
      else if (current) await tx.runs.update({ ...current, status, error: failure ?? null, updated_at: isoNow() });
      const settled = await settleThread(
        tx,
        run.thread_id,
        { error: status === 'error' || status === 'timeout', interrupted, values, interrupts },
        thread,
      );
      return settled?.status === 'busy';
    });
  }

  private remember(runId: string, values: unknown): void {
    this.results.sweep();
    this.results.set(runId, values);
  }

  /** How many finished runs' values are kept (for tests). */
  get retainedResults(): number {
    this.results.sweep();
    return this.results.size;
  }

  private tracingFailed(run: RunRecord, error: unknown): void {
    this.options.metrics.tracingFailed();
    this.tracingWarning.warn({ run_id: run.run_id, err: error });
  }
}
