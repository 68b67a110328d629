// Tracing of graph runs: a LangChain callback handler that records a run's graph, nodes, chat
// model calls, tools and retrievers as OpenTelemetry spans (the SDK setup is `provider.ts`, the
// span names and attributes `genai-attributes.ts`), and hands them to the receiver's pipeline when
// the run is over. The trace id is the run id, the root span is the graph run, and LangGraph's
// internal runnables (tagged `langsmith:hidden`) are folded into their nearest visible ancestor, as
// LangSmith does. While a LangChain run executes, its span is the active span
// (`context-manager.ts`), so spans graph code opens nest under it and travel with the run.

import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import type { BaseMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import type { DocumentInterface } from '@langchain/core/documents';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import type { Consumer, RequestContext } from 'tracepipe/plugin';
import { CONTEXT_OF_RUN } from './context-manager.ts';
import type { RunContextSource } from './context-manager.ts';
import {
  HIDDEN_TAG,
  chainEnd,
  chainStart,
  failure,
  modelCallEnd,
  modelCallStart,
  retrieverEnd,
  retrieverStart,
  toolEnd,
  toolStart,
} from './genai-attributes.ts';
import type { RunIdentity, SpanStart } from './genai-attributes.ts';
import { traceIdFromRunId } from './ids.ts';
import { runTracing } from './provider.ts';
import type { RunSpans } from './provider.ts';
import { toSpanBatch } from './span-batch.ts';

export const TRACER_SCOPE_NAME = 'tracepipe.agent_api';
/** Spans sent to the pipeline per batch. */
const SPANS_PER_BATCH = 512;
/** Spans kept per run; a run that makes more (a runaway loop) has the rest counted as dropped. */
export const DEFAULT_MAX_SPANS_PER_RUN = 10_000;

export interface RunTracerOptions {
  readonly next: Consumer<'spans'>;
  readonly context: RequestContext;
  readonly runId: string;
  readonly threadId?: string;
  readonly assistantId: string;
  readonly graphId: string;
  /** `service.name` of the spans' resource; default `tracepipe-agent-server`. */
  readonly serviceName?: string;
  /**
   * Called (never thrown) when spans cannot be delivered (`next.consume` rejected, e.g. the
   * pipeline is full) or were dropped (`SpansDroppedError`), and when a callback failed. The
   * caller counts and logs; a tracing failure never fails the run.
   */
  readonly onError?: (err: unknown) => void;
  /** Spans kept for the run, its own and those graph code opens in its trace. */
  readonly maxSpans?: number;
}

/** A callback handler recording one graph run as spans. */
export type RunTracer = BaseCallbackHandler & {
  /**
   * Ends the run's recording: ends the spans of its trace still open (marking them
   * `tracepipe.span.unfinished`), sends every recorded span downstream, with the run's request
   * context, and resolves when the pipeline has accepted them or refused them (reported to
   * `onError`). Never rejects. Safe to call more than once: later calls send nothing new, as spans
   * that start after the first call are not recorded.
   */
  flush(): Promise<void>;
};

/** Spans of a run that were not recorded because the run exceeded the per-run span limit. */
export class SpansDroppedError extends Error {
  override readonly name = 'SpansDroppedError';
  constructor(
    readonly count: number,
    readonly runId: string,
  ) {
    super(`${count} spans of run ${runId} were dropped: the run exceeded the per-run span limit`);
  }
}

export function createRunTracer(options: RunTracerOptions): RunTracer {
  return new GraphRunTracer(options);
}

class GraphRunTracer extends BaseCallbackHandler implements RunContextSource {
  readonly name = 'tracepipe_run_tracer';
  // Our handlers only record in memory; running them inline keeps span order exact, means that
  // everything is recorded by the time the run's promise settles, and that a run's span exists
  // before its body executes (the context manager looks it up then).
  override awaitHandlers = true;
  override raiseError = false;

  private readonly traceId: string;
  private readonly identity: RunIdentity;
  private readonly tracer: Tracer;
  private readonly spans: RunSpans;
  /** Spans open, by LangChain run id. */
  private readonly open = new Map<string, { span: Span; model?: string }>();
  /** LangChain run id → the context its children start in (hidden and dropped runs: an ancestor's). */
  private readonly contextOfRun = new Map<string, Context>();
  private rootContext: Context | undefined;
  private recording = true;
  /** A node stopped at an interrupt: the run ends paused, and its root span says so. */
  private interrupted = false;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly options: RunTracerOptions) {
    super();
    this.traceId = traceIdFromRunId(options.runId);
    this.identity = {
      runId: options.runId,
      threadId: options.threadId,
      assistantId: options.assistantId,
      graphId: options.graphId,
    };
    const tracing = runTracing();
    this.tracer = tracing.provider.getTracer(TRACER_SCOPE_NAME);
    this.spans = tracing.register(this.traceId, options.maxSpans ?? DEFAULT_MAX_SPANS_PER_RUN);
  }

  [CONTEXT_OF_RUN](runId: string): Context | undefined {
    return this.contextOfRun.get(runId);
  }

  // ---- chains: the graph, its nodes, subgraphs, branches --------------------------------------

  // The parameter order is the one CallbackManager calls with (runId, parentRunId, tags, metadata,
  // runType, runName); the declaration in @langchain/core's base.d.ts names them in another order.
  override handleChainStart(
    chain: Serialized,
    inputs: unknown,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): void {
    this.guard(() => {
      if (tags?.includes(HIDDEN_TAG)) return this.hide(runId, parentRunId);
      const isRoot = this.rootContext === undefined;
      this.start(runId, parentRunId, chainStart(this.identity, isRoot, chain, inputs, tags, metadata, runName));
    });
  }

  override handleChainEnd(outputs: unknown, runId: string): void {
    this.guard(() => this.end(runId, () => chainEnd(outputs)));
  }

  override handleChainError(err: unknown, runId: string): void {
    this.guard(() => this.fail(runId, err));
  }

  // ---- model calls ------------------------------------------------------------------------------

  override handleChatModelStart(
    llm: Serialized,
    messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.guard(() => {
      if (tags?.includes(HIDDEN_TAG)) return this.hide(runId, parentRunId);
      const start = modelCallStart(this.identity, llm, extraParams, metadata, runName, {
        operation: 'chat',
        messages: messages[0] ?? [],
      });
      this.start(runId, parentRunId, start, start.model);
    });
  }

  override handleLLMStart(
    llm: Serialized,
    prompts: string[],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.guard(() => {
      if (tags?.includes(HIDDEN_TAG)) return this.hide(runId, parentRunId);
      const start = modelCallStart(this.identity, llm, extraParams, metadata, runName, {
        operation: 'text_completion',
        prompts,
      });
      this.start(runId, parentRunId, start, start.model);
    });
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    this.guard(() => this.end(runId, (model) => modelCallEnd(output, model)));
  }

  override handleLLMError(err: unknown, runId: string): void {
    this.guard(() => this.fail(runId, err));
  }

  // ---- tools and retrievers ---------------------------------------------------------------------

  override handleToolStart(
    tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    this.guard(() => {
      if (tags?.includes(HIDDEN_TAG)) return this.hide(runId, parentRunId);
      this.start(runId, parentRunId, toolStart(this.identity, tool, input, metadata, runName, toolCallId));
    });
  }

  override handleToolEnd(output: unknown, runId: string): void {
    this.guard(() => this.end(runId, () => toolEnd(output)));
  }

  override handleToolError(err: unknown, runId: string): void {
    this.guard(() => this.fail(runId, err));
  }

  override handleRetrieverStart(
    retriever: Serialized,
    query: string,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    name?: string,
  ): void {
    this.guard(() => {
      if (tags?.includes(HIDDEN_TAG)) return this.hide(runId, parentRunId);
      this.start(runId, parentRunId, retrieverStart(this.identity, retriever, query, metadata, name));
    });
  }

  override handleRetrieverEnd(documents: DocumentInterface[], runId: string): void {
    this.guard(() => this.end(runId, () => retrieverEnd(documents)));
  }

  override handleRetrieverError(err: unknown, runId: string): void {
    this.guard(() => this.fail(runId, err));
  }

  // ---- delivery ---------------------------------------------------------------------------------

  flush(): Promise<void> {
    // Serialised so that two flushes never send the same spans or interleave their batches.
    this.flushing = this.flushing.then(() => this.send());
    return this.flushing;
  }

  private async send(): Promise<void> {
    if (this.recording) {
      this.recording = false;
      // Spans of the trace still open (a cancelled run; graph code that never ended its span) end
      // now, while the run still collects them; later spans are not recorded.
      for (const span of [...this.spans.open]) {
        span.setAttribute('tracepipe.span.unfinished', true);
        span.end();
      }
      this.open.clear();
      runTracing().unregister(this.traceId);
    }
    const { spans, dropped } = this.spans.take();
    if (dropped > 0) this.report(new SpansDroppedError(dropped, this.options.runId));
    const resource = { serviceName: this.options.serviceName ?? 'tracepipe-agent-server' };
    for (let offset = 0; offset < spans.length; offset += SPANS_PER_BATCH) {
      const batch = toSpanBatch(spans.slice(offset, offset + SPANS_PER_BATCH), resource, TRACER_SCOPE_NAME);
      try {
        await this.options.next.consume(batch, this.options.context);
      } catch (error) {
        this.report(error);
      }
    }
  }

  // ---- span bookkeeping -------------------------------------------------------------------------

  private parentContext(parentRunId: string | undefined): Context {
    return (
      (parentRunId !== undefined ? this.contextOfRun.get(parentRunId) : undefined) ?? this.rootContext ?? ROOT_CONTEXT
    );
  }

  private start(runId: string, parentRunId: string | undefined, start: SpanStart, model?: string): void {
    const parent = this.parentContext(parentRunId);
    const span = runTracing().startSpan(
      this.tracer,
      this.traceId,
      start.name,
      { kind: start.kind, attributes: start.attributes },
      parent,
    );
    if (!span.isRecording()) {
      // Over the run's span limit (counted by the sampler) or after the flush: children of an
      // unrecorded span attach to its parent, so the kept tree stays connected.
      if (trace.getSpan(parent)) this.contextOfRun.set(runId, parent);
      return;
    }
    const context = trace.setSpan(parent, span);
    this.rootContext ??= context;
    this.open.set(runId, { span, model });
    this.contextOfRun.set(runId, context);
  }

  private hide(runId: string, parentRunId: string | undefined): void {
    const target = (parentRunId !== undefined ? this.contextOfRun.get(parentRunId) : undefined) ?? this.rootContext;
    if (target) this.contextOfRun.set(runId, target);
  }

  private end(runId: string, attributes?: (model: string | undefined) => Attributes): void {
    const open = this.open.get(runId);
    if (!open) return; // hidden, dropped, or already ended
    if (attributes) open.span.setAttributes(attributes(open.model));
    // An interrupt stops a node, and the graph run around it ends normally; the root span carries
    // the outcome as run metadata, so that a trace list can show the run as interrupted.
    if (this.interrupted && this.rootContext && trace.getSpan(this.rootContext) === open.span) {
      open.span.setAttributes({ 'langgraph.interrupted': true, 'langsmith.metadata.interrupted': true });
    }
    this.open.delete(runId);
    open.span.end();
  }

  private fail(runId: string, err: unknown): void {
    const open = this.open.get(runId);
    if (!open) return;
    const marked = failure(err);
    if (marked.attributes['langgraph.interrupted'] === true) this.interrupted = true;
    open.span.setAttributes(marked.attributes);
    if (marked.status) open.span.setStatus(marked.status);
    open.span.addEvent(marked.event.name, marked.event.attributes);
    this.end(runId);
  }

  private guard(record: () => void): void {
    try {
      record();
    } catch (error) {
      this.report(error);
    }
  }

  private report(error: unknown): void {
    try {
      this.options.onError?.(error);
    } catch {
      // The error reporter itself failed; tracing must still never break the run.
    }
  }
}
