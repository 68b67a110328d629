// Tracing of graph runs: a LangChain callback handler that records a run's graph, nodes, chat
// model calls, tools and retrievers as OTLP-shaped spans (src/model/spans.ts) with GenAI and
// langsmith.* attributes, and hands them to the receiver's pipeline when the run is over. The
// trace id is the run id, the root span is the graph run, and LangGraph's internal runnables
// (tagged `langsmith:hidden`) are folded into their nearest visible ancestor, as LangSmith does.

import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import type { BaseMessage } from '@langchain/core/messages';
import { isBaseMessage } from '@langchain/core/messages';
import type { ChatGeneration, LLMResult } from '@langchain/core/outputs';
import type { DocumentInterface } from '@langchain/core/documents';
import type { Consumer } from '../../../../../src/pipeline/component.ts';
import type { RequestContext } from '../../../../../src/pipeline/data.ts';
import { SpanKind, StatusCode } from '../../../../../src/model/spans.ts';
import type { Attribute, Span, SpanBatch, SpanEvent } from '../../../../../src/model/spans.ts';
import {
  MAX_ATTRIBUTE_CHARS,
  anyAttr,
  boolAttr,
  boundedJson,
  intAttr,
  plainMessage,
  stringAttr,
} from './attributes.ts';
import { toGenAiMessage } from './genai-messages.ts';
import { newSpanId, nowUnixNano, traceIdFromRunId } from './ids.ts';

export const TRACER_SCOPE_NAME = 'tracepipe.agent_api';
const HIDDEN_TAG = 'langsmith:hidden';
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
  readonly maxSpans?: number;
}

export type RunTracer = BaseCallbackHandler & {
  /**
   * Ends the spans still open (marking them `tracepipe.span.unfinished`), sends every recorded
   * span downstream and resolves when the pipeline has accepted them or refused them (reported
   * to `onError`). Never rejects. Safe to call more than once: each call sends what was recorded
   * since the previous one.
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

interface OpenSpan {
  readonly spanId: string;
  readonly parentSpanId: string;
  name: string;
  readonly kind: number;
  readonly startTimeUnixNano: bigint;
  readonly attributes: Attribute[];
  readonly events: SpanEvent[];
  status: { code: number; message: string };
  modelName?: string;
}

export function createRunTracer(options: RunTracerOptions): RunTracer {
  return new GraphRunTracer(options);
}

class GraphRunTracer extends BaseCallbackHandler {
  readonly name = 'tracepipe_run_tracer';
  // Our handlers only record in memory; running them inline keeps span order exact and means
  // that everything is recorded by the time the run's promise settles.
  override awaitHandlers = true;
  override raiseError = false;

  private readonly traceId: string;
  private readonly common: Attribute[];
  /** Open spans by LangChain run id. */
  private readonly open = new Map<string, OpenSpan>();
  /** LangChain run id → the span id its children attach to (hidden runs map to an ancestor's). */
  private readonly spanIdOfRun = new Map<string, string>();
  private finished: Span[] = [];
  private rootSpanId: string | undefined;
  private recorded = 0;
  private dropped = 0;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly options: RunTracerOptions) {
    super();
    this.traceId = traceIdFromRunId(options.runId);
    this.common = [
      stringAttr('langsmith.metadata.run_id', options.runId),
      stringAttr('langsmith.metadata.assistant_id', options.assistantId),
      stringAttr('langsmith.metadata.graph_id', options.graphId),
      ...(options.threadId
        ? [
            stringAttr('langsmith.metadata.thread_id', options.threadId),
            stringAttr('gen_ai.conversation.id', options.threadId),
          ]
        : []),
    ];
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
      const isRoot = this.rootSpanId === undefined;
      const span = this.start(
        runId,
        parentRunId,
        isRoot ? this.options.graphId : (runName ?? serializedName(chain)),
        SpanKind.INTERNAL,
      );
      if (!span) return;
      span.attributes.push(stringAttr('langsmith.span.kind', 'chain'), stringAttr('input.value', boundedJson(inputs)));
      if (isRoot) {
        // The OTel GenAI view of the same span: an agent invocation (the langsmith.span.kind above
        // keeps it a chain run for the backend).
        span.attributes.push(
          stringAttr('gen_ai.operation.name', 'invoke_agent'),
          stringAttr('gen_ai.agent.name', this.options.graphId),
          stringAttr('gen_ai.agent.id', this.options.assistantId),
        );
      }
      this.addGraphMetadata(span, metadata);
      if (tags && tags.length > 0) span.attributes.push(stringAttr('langsmith.span.tags', tags.join(',')));
    });
  }

  override handleChainEnd(outputs: unknown, runId: string): void {
    this.guard(() => this.end(runId, (span) => span.attributes.push(stringAttr('output.value', boundedJson(outputs)))));
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
      const prompt = messages[0] ?? [];
      this.startModelCall(llm, runId, parentRunId, extraParams, metadata, runName, tags, 'chat', [
        stringAttr('gen_ai.input.messages', boundedJson(prompt.map((message) => toGenAiMessage(message)))),
        stringAttr('input.value', boundedJson({ messages: prompt.map(plainMessage) })),
      ]);
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
      this.startModelCall(llm, runId, parentRunId, extraParams, metadata, runName, tags, 'text_completion', [
        stringAttr('input.value', boundedJson({ prompts })),
      ]);
    });
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    this.guard(() =>
      this.end(runId, (span) => {
        const generations = output.generations.flat();
        const messages = generations.map((generation) => (generation as ChatGeneration).message).filter(isBaseMessage);
        const finishReasons: string[] = [];
        let usage: { input_tokens?: number; output_tokens?: number; total_tokens?: number } | undefined;
        let responseModel: string | undefined;
        let responseId: string | undefined;
        for (const [index, generation] of generations.entries()) {
          const message = (generation as ChatGeneration).message as BaseMessage | undefined;
          const responseMetadata = (message?.response_metadata ?? {}) as Record<string, unknown>;
          const reason = responseMetadata.finish_reason ?? generation.generationInfo?.finish_reason;
          if (typeof reason === 'string') finishReasons[index] = reason;
          responseModel ??= stringOrUndefined(responseMetadata.model_name) ?? stringOrUndefined(responseMetadata.model);
          responseId ??= message?.id;
          usage ??= (message as { usage_metadata?: typeof usage } | undefined)?.usage_metadata;
        }
        usage ??= usageFromLlmOutput(output.llmOutput);
        if (messages.length > 0) {
          span.attributes.push(
            stringAttr(
              'gen_ai.output.messages',
              boundedJson(messages.map((message, i) => toGenAiMessage(message, finishReasons[i]))),
            ),
            stringAttr('output.value', boundedJson({ messages: messages.map(plainMessage) })),
          );
        } else {
          span.attributes.push(
            stringAttr('output.value', boundedJson({ generations: generations.map((g) => g.text) })),
          );
        }
        if (usage?.input_tokens !== undefined)
          span.attributes.push(intAttr('gen_ai.usage.input_tokens', usage.input_tokens));
        if (usage?.output_tokens !== undefined)
          span.attributes.push(intAttr('gen_ai.usage.output_tokens', usage.output_tokens));
        if (usage?.total_tokens !== undefined)
          span.attributes.push(intAttr('gen_ai.usage.total_tokens', usage.total_tokens));
        if (responseModel ?? span.modelName)
          span.attributes.push(stringAttr('gen_ai.response.model', (responseModel ?? span.modelName)!));
        if (responseId) span.attributes.push(stringAttr('gen_ai.response.id', responseId));
        const reasons = finishReasons.filter((reason) => reason !== undefined);
        if (reasons.length > 0) {
          span.attributes.push({
            key: 'gen_ai.response.finish_reasons',
            value: { type: 'array', value: reasons.map((reason) => ({ type: 'string' as const, value: reason })) },
          });
        }
      }),
    );
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
      const toolName = runName ?? serializedName(tool);
      const span = this.start(runId, parentRunId, `execute_tool ${toolName}`, SpanKind.INTERNAL);
      if (!span) return;
      span.attributes.push(
        stringAttr('langsmith.span.kind', 'tool'),
        stringAttr('langsmith.trace.name', toolName),
        stringAttr('gen_ai.operation.name', 'execute_tool'),
        stringAttr('gen_ai.tool.name', toolName),
        stringAttr('gen_ai.tool.call.arguments', truncate(input)),
        stringAttr('input.value', truncate(input)),
      );
      if (toolCallId) span.attributes.push(stringAttr('gen_ai.tool.call.id', toolCallId));
      this.addGraphMetadata(span, metadata);
    });
  }

  override handleToolEnd(output: unknown, runId: string): void {
    this.guard(() =>
      this.end(runId, (span) => {
        // A tool called with a tool call returns a ToolMessage; its content is the result.
        const result = isBaseMessage(output) ? output.content : output;
        const text = typeof result === 'string' ? truncate(result) : boundedJson(result);
        span.attributes.push(stringAttr('gen_ai.tool.call.result', text), stringAttr('output.value', text));
      }),
    );
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
      const span = this.start(runId, parentRunId, name ?? serializedName(retriever), SpanKind.INTERNAL);
      if (!span) return;
      span.attributes.push(stringAttr('langsmith.span.kind', 'retriever'), stringAttr('input.value', truncate(query)));
      this.addGraphMetadata(span, metadata);
    });
  }

  override handleRetrieverEnd(documents: DocumentInterface[], runId: string): void {
    this.guard(() =>
      this.end(runId, (span) => span.attributes.push(stringAttr('output.value', boundedJson({ documents })))),
    );
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
    const endTime = nowUnixNano();
    for (const [runId, span] of this.open) {
      span.attributes.push(boolAttr('tracepipe.span.unfinished', true));
      this.finished.push(this.close(span, endTime));
      this.open.delete(runId);
    }
    const spans = this.finished;
    this.finished = [];
    if (this.dropped > 0) {
      this.report(new SpansDroppedError(this.dropped, this.options.runId));
      this.dropped = 0;
    }
    for (let offset = 0; offset < spans.length; offset += SPANS_PER_BATCH) {
      const batch = this.batchOf(spans.slice(offset, offset + SPANS_PER_BATCH));
      try {
        await this.options.next.consume(batch, this.options.context);
      } catch (error) {
        this.report(error);
      }
    }
  }

  private batchOf(spans: Span[]): SpanBatch {
    return {
      resourceSpans: [
        {
          resource: {
            attributes: [
              stringAttr('service.name', this.options.serviceName ?? 'tracepipe-agent-server'),
              stringAttr('telemetry.sdk.name', 'tracepipe'),
            ],
            droppedAttributesCount: 0,
          },
          schemaUrl: '',
          scopeSpans: [
            {
              scope: { name: TRACER_SCOPE_NAME, version: '', attributes: [], droppedAttributesCount: 0 },
              schemaUrl: '',
              spans,
            },
          ],
        },
      ],
    };
  }

  // ---- span bookkeeping -------------------------------------------------------------------------

  private start(runId: string, parentRunId: string | undefined, name: string, kind: number): OpenSpan | undefined {
    const limit = this.options.maxSpans ?? DEFAULT_MAX_SPANS_PER_RUN;
    const parentSpanId =
      (parentRunId !== undefined ? this.spanIdOfRun.get(parentRunId) : undefined) ?? this.rootSpanId ?? '';
    if (this.recorded >= limit) {
      // Children of a dropped span attach to its parent, so the kept tree stays connected.
      this.dropped++;
      if (parentSpanId) this.spanIdOfRun.set(runId, parentSpanId);
      return undefined;
    }
    this.recorded++;
    const span: OpenSpan = {
      spanId: newSpanId(),
      parentSpanId,
      name,
      kind,
      startTimeUnixNano: nowUnixNano(),
      attributes: [...this.common],
      events: [],
      status: { code: StatusCode.UNSET, message: '' },
    };
    this.rootSpanId ??= span.spanId;
    this.open.set(runId, span);
    this.spanIdOfRun.set(runId, span.spanId);
    return span;
  }

  private hide(runId: string, parentRunId: string | undefined): void {
    const target = (parentRunId !== undefined ? this.spanIdOfRun.get(parentRunId) : undefined) ?? this.rootSpanId;
    if (target) this.spanIdOfRun.set(runId, target);
  }

  private end(runId: string, annotate?: (span: OpenSpan) => void): void {
    const span = this.open.get(runId);
    if (!span) return; // hidden, dropped, or already ended
    annotate?.(span);
    this.open.delete(runId);
    this.finished.push(this.close(span, nowUnixNano()));
  }

  private fail(runId: string, err: unknown): void {
    this.end(runId, (span) => {
      const error = err instanceof Error ? err : new Error(String(err));
      if (isBubbleUp(error)) {
        // An interrupt (or a command to the parent graph) is control flow, not a failure.
        span.attributes.push(
          boolAttr('langgraph.interrupted', error.name === 'GraphInterrupt' || error.name === 'NodeInterrupt'),
        );
        span.events.push({
          timeUnixNano: nowUnixNano(),
          name: 'langgraph.interrupt',
          attributes: [stringAttr('langgraph.error.type', error.name)],
          droppedAttributesCount: 0,
        });
        return;
      }
      span.status = { code: StatusCode.ERROR, message: `${error.name}: ${error.message}` };
      // message before stacktrace: translators append the stack trace to the message.
      const attributes = [stringAttr('exception.type', error.name), stringAttr('exception.message', error.message)];
      if (error.stack) attributes.push(stringAttr('exception.stacktrace', truncate(error.stack)));
      span.events.push({ timeUnixNano: nowUnixNano(), name: 'exception', attributes, droppedAttributesCount: 0 });
    });
  }

  private close(span: OpenSpan, endTimeUnixNano: bigint): Span {
    return {
      traceId: this.traceId,
      spanId: span.spanId,
      parentSpanId: span.parentSpanId,
      traceState: '',
      flags: 1, // sampled
      name: span.name,
      kind: span.kind,
      startTimeUnixNano: span.startTimeUnixNano,
      endTimeUnixNano: endTimeUnixNano < span.startTimeUnixNano ? span.startTimeUnixNano : endTimeUnixNano,
      attributes: span.attributes,
      droppedAttributesCount: 0,
      events: span.events,
      droppedEventsCount: 0,
      links: [],
      droppedLinksCount: 0,
      status: span.status,
    };
  }

  private startModelCall(
    llm: Serialized,
    runId: string,
    parentRunId: string | undefined,
    extraParams: Record<string, unknown> | undefined,
    metadata: Record<string, unknown> | undefined,
    runName: string | undefined,
    tags: string[] | undefined,
    operation: 'chat' | 'text_completion',
    payload: Attribute[],
  ): void {
    if (tags?.includes(HIDDEN_TAG)) return this.hide(runId, parentRunId);
    const params = (extraParams?.invocation_params ?? {}) as Record<string, unknown>;
    const model =
      stringOrUndefined(metadata?.ls_model_name) ??
      stringOrUndefined(params.model) ??
      stringOrUndefined(params.model_name);
    const provider = stringOrUndefined(metadata?.ls_provider);
    const span = this.start(
      runId,
      parentRunId,
      model ? `${operation} ${model}` : (runName ?? serializedName(llm)),
      SpanKind.CLIENT,
    );
    if (!span) return;
    span.modelName = model;
    span.attributes.push(
      stringAttr('langsmith.span.kind', 'llm'),
      stringAttr('gen_ai.operation.name', operation),
      ...payload,
    );
    if (runName) span.attributes.push(stringAttr('langsmith.trace.name', runName));
    if (model) span.attributes.push(stringAttr('gen_ai.request.model', model));
    if (provider)
      span.attributes.push(stringAttr('gen_ai.system', provider), stringAttr('gen_ai.provider.name', provider));
    for (const [param, key] of [
      ['temperature', 'gen_ai.request.temperature'],
      ['top_p', 'gen_ai.request.top_p'],
      ['max_tokens', 'gen_ai.request.max_tokens'],
    ] as const) {
      const value = params[param] ?? metadata?.[`ls_${param}`];
      if (typeof value === 'number') span.attributes.push(anyAttr(key, value));
    }
    this.addGraphMetadata(span, metadata);
  }

  /** LangGraph's task metadata, so a span can be matched to its node, step and namespace. */
  private addGraphMetadata(span: OpenSpan, metadata: Record<string, unknown> | undefined): void {
    if (!metadata) return;
    const node = metadata.langgraph_node;
    const step = metadata.langgraph_step;
    const namespace = metadata.langgraph_checkpoint_ns;
    if (typeof node === 'string') span.attributes.push(stringAttr('langsmith.metadata.langgraph_node', node));
    if (typeof step === 'number') span.attributes.push(intAttr('langsmith.metadata.langgraph_step', step));
    if (typeof namespace === 'string' && namespace !== '') {
      span.attributes.push(stringAttr('langsmith.metadata.langgraph_checkpoint_ns', namespace));
    }
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

function serializedName(serialized: Serialized | undefined): string {
  const named = serialized as { name?: unknown; id?: unknown } | undefined;
  if (typeof named?.name === 'string' && named.name !== '') return named.name;
  if (Array.isArray(named?.id) && named.id.length > 0) return String(named.id[named.id.length - 1]);
  return 'unknown';
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function truncate(text: string): string {
  return text.length > MAX_ATTRIBUTE_CHARS
    ? `${text.slice(0, MAX_ATTRIBUTE_CHARS)}…[truncated ${text.length - MAX_ATTRIBUTE_CHARS} chars]`
    : text;
}

function usageFromLlmOutput(llmOutput: Record<string, unknown> | undefined) {
  const usage = (llmOutput?.tokenUsage ?? llmOutput?.usage) as Record<string, unknown> | undefined;
  if (!usage) return undefined;
  const number = (...keys: string[]) =>
    keys.map((key) => usage[key]).find((value): value is number => typeof value === 'number');
  return {
    input_tokens: number('input_tokens', 'promptTokens', 'prompt_tokens'),
    output_tokens: number('output_tokens', 'completionTokens', 'completion_tokens'),
    total_tokens: number('total_tokens', 'totalTokens'),
  };
}

// LangGraph's GraphBubbleUp family (GraphInterrupt, NodeInterrupt, ParentCommand) is control flow
// that travels as an exception.
function isBubbleUp(error: Error): boolean {
  return (
    (error as { is_bubble_up?: unknown }).is_bubble_up === true ||
    error.name === 'GraphInterrupt' ||
    error.name === 'NodeInterrupt' ||
    error.name === 'ParentCommand'
  );
}
