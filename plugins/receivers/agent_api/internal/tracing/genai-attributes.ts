// The LangChain → span mapping: what a graph's chains, model calls, tools and retrievers look like
// as spans — names, kinds, GenAI (`gen_ai.*`) and LangSmith (`langsmith.*`, `input.value`,
// `output.value`) attributes, and how failures and interrupts are marked. It knows nothing about
// span ids or parents: `tracer.ts` keeps that bookkeeping with the OpenTelemetry SDK.

import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Attributes, SpanStatus } from '@opentelemetry/api';
import type { DocumentInterface } from '@langchain/core/documents';
import type { Serialized } from '@langchain/core/load/serializable';
import type { BaseMessage } from '@langchain/core/messages';
import { isBaseMessage } from '@langchain/core/messages';
import type { ChatGeneration, LLMResult } from '@langchain/core/outputs';
import { boundedJson, boundedText, plainMessage } from './attributes.ts';
import { toGenAiMessage } from './genai-messages.ts';

/** LangGraph's internal runnables carry this tag; they are folded into their parent, as LangSmith shows them. */
export const HIDDEN_TAG = 'langsmith:hidden';

/** A span to start: its name, kind and first attributes. */
export interface SpanStart {
  readonly name: string;
  readonly kind: SpanKind;
  readonly attributes: Attributes;
}

export interface RunIdentity {
  readonly runId: string;
  readonly threadId?: string;
  readonly assistantId: string;
  readonly graphId: string;
}

/** The attributes every span of a run carries. */
export function runAttributes(run: RunIdentity): Attributes {
  return {
    'langsmith.metadata.run_id': run.runId,
    'langsmith.metadata.assistant_id': run.assistantId,
    'langsmith.metadata.graph_id': run.graphId,
    ...(run.threadId ? { 'langsmith.metadata.thread_id': run.threadId, 'gen_ai.conversation.id': run.threadId } : {}),
  };
}

/** A chain: the graph run itself (`root`), a node, a subgraph, a branch. */
export function chainStart(
  run: RunIdentity,
  root: boolean,
  chain: Serialized,
  inputs: unknown,
  tags: string[] | undefined,
  metadata: Record<string, unknown> | undefined,
  runName: string | undefined,
): SpanStart {
  const attributes: Attributes = {
    ...runAttributes(run),
    'langsmith.span.kind': 'chain',
    'input.value': boundedJson(inputs),
  };
  if (root) {
    // The OTel GenAI view of the same span: an agent invocation (the langsmith.span.kind above
    // keeps it a chain run for the backend).
    Object.assign(attributes, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': run.graphId,
      'gen_ai.agent.id': run.assistantId,
    });
  }
  Object.assign(attributes, graphMetadata(metadata));
  if (tags && tags.length > 0) attributes['langsmith.span.tags'] = tags.join(',');
  return {
    name: root ? run.graphId : (runName ?? serializedName(chain)),
    kind: SpanKind.INTERNAL,
    attributes,
  };
}

export function chainEnd(outputs: unknown): Attributes {
  return { 'output.value': boundedJson(outputs) };
}

/** A chat model or completion call; `model` is kept for the end, which may not name it. */
export function modelCallStart(
  run: RunIdentity,
  llm: Serialized,
  extraParams: Record<string, unknown> | undefined,
  metadata: Record<string, unknown> | undefined,
  runName: string | undefined,
  prompt: { operation: 'chat'; messages: BaseMessage[] } | { operation: 'text_completion'; prompts: string[] },
): SpanStart & { model?: string } {
  const params = (extraParams?.invocation_params ?? {}) as Record<string, unknown>;
  const model =
    stringOrUndefined(metadata?.ls_model_name) ??
    stringOrUndefined(params.model) ??
    stringOrUndefined(params.model_name);
  const provider = stringOrUndefined(metadata?.ls_provider);
  const attributes: Attributes = {
    ...runAttributes(run),
    'langsmith.span.kind': 'llm',
    'gen_ai.operation.name': prompt.operation,
  };
  if (prompt.operation === 'chat') {
    attributes['gen_ai.input.messages'] = boundedJson(prompt.messages.map((message) => toGenAiMessage(message)));
    attributes['input.value'] = boundedJson({ messages: prompt.messages.map(plainMessage) });
  } else {
    attributes['input.value'] = boundedJson({ prompts: prompt.prompts });
  }
  if (runName) attributes['langsmith.trace.name'] = runName;
  if (model) attributes['gen_ai.request.model'] = model;
  if (provider) Object.assign(attributes, { 'gen_ai.system': provider, 'gen_ai.provider.name': provider });
  for (const [param, key] of [
    ['temperature', 'gen_ai.request.temperature'],
    ['top_p', 'gen_ai.request.top_p'],
    ['max_tokens', 'gen_ai.request.max_tokens'],
  ] as const) {
    const value = params[param] ?? metadata?.[`ls_${param}`];
    if (typeof value === 'number') attributes[key] = value;
  }
  Object.assign(attributes, graphMetadata(metadata));
  return {
    name: model ? `${prompt.operation} ${model}` : (runName ?? serializedName(llm)),
    kind: SpanKind.CLIENT,
    attributes,
    model,
  };
}

export function modelCallEnd(output: LLMResult, requestModel: string | undefined): Attributes {
  const attributes: Attributes = {};
  const generations = output.generations.flat();
  const messages = generations.map((generation) => (generation as ChatGeneration).message).filter(isBaseMessage);
  const finishReasons: string[] = [];
  let usage: TokenUsage | undefined;
  let responseModel: string | undefined;
  let responseId: string | undefined;
  for (const [index, generation] of generations.entries()) {
    const message = (generation as ChatGeneration).message as BaseMessage | undefined;
    const responseMetadata = (message?.response_metadata ?? {}) as Record<string, unknown>;
    const reason = responseMetadata.finish_reason ?? generation.generationInfo?.finish_reason;
    if (typeof reason === 'string') finishReasons[index] = reason;
    responseModel ??= stringOrUndefined(responseMetadata.model_name) ?? stringOrUndefined(responseMetadata.model);
    responseId ??= message?.id;
    usage ??= (message as { usage_metadata?: TokenUsage } | undefined)?.usage_metadata;
  }
  usage ??= usageFromLlmOutput(output.llmOutput);
  if (messages.length > 0) {
    attributes['gen_ai.output.messages'] = boundedJson(
      messages.map((message, i) => toGenAiMessage(message, finishReasons[i])),
    );
    attributes['output.value'] = boundedJson({ messages: messages.map(plainMessage) });
  } else {
    attributes['output.value'] = boundedJson({ generations: generations.map((g) => g.text) });
  }
  if (usage?.input_tokens !== undefined) attributes['gen_ai.usage.input_tokens'] = Math.trunc(usage.input_tokens);
  if (usage?.output_tokens !== undefined) attributes['gen_ai.usage.output_tokens'] = Math.trunc(usage.output_tokens);
  if (usage?.total_tokens !== undefined) attributes['gen_ai.usage.total_tokens'] = Math.trunc(usage.total_tokens);
  const model = responseModel ?? requestModel;
  if (model) attributes['gen_ai.response.model'] = model;
  if (responseId) attributes['gen_ai.response.id'] = responseId;
  const reasons = finishReasons.filter((reason) => reason !== undefined);
  if (reasons.length > 0) attributes['gen_ai.response.finish_reasons'] = reasons;
  return attributes;
}

export function toolStart(
  run: RunIdentity,
  tool: Serialized,
  input: string,
  metadata: Record<string, unknown> | undefined,
  runName: string | undefined,
  toolCallId: string | undefined,
): SpanStart {
  const toolName = runName ?? serializedName(tool);
  return {
    name: `execute_tool ${toolName}`,
    kind: SpanKind.INTERNAL,
    attributes: {
      ...runAttributes(run),
      'langsmith.span.kind': 'tool',
      'langsmith.trace.name': toolName,
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': toolName,
      'gen_ai.tool.call.arguments': boundedText(input),
      'input.value': boundedText(input),
      ...(toolCallId ? { 'gen_ai.tool.call.id': toolCallId } : {}),
      ...graphMetadata(metadata),
    },
  };
}

export function toolEnd(output: unknown): Attributes {
  // A tool called with a tool call returns a ToolMessage; its content is the result.
  const result = isBaseMessage(output) ? output.content : output;
  const text = typeof result === 'string' ? boundedText(result) : boundedJson(result);
  return { 'gen_ai.tool.call.result': text, 'output.value': text };
}

export function retrieverStart(
  run: RunIdentity,
  retriever: Serialized,
  query: string,
  metadata: Record<string, unknown> | undefined,
  name: string | undefined,
): SpanStart {
  return {
    name: name ?? serializedName(retriever),
    kind: SpanKind.INTERNAL,
    attributes: {
      ...runAttributes(run),
      'langsmith.span.kind': 'retriever',
      'input.value': boundedText(query),
      ...graphMetadata(metadata),
    },
  };
}

export function retrieverEnd(documents: DocumentInterface[]): Attributes {
  return { 'output.value': boundedJson({ documents }) };
}

/**
 * How a failed chain, model call or tool is marked: an interrupt (or a command to the parent
 * graph) is control flow, not a failure; anything else is an ERROR status with an `exception`
 * event whose message comes before its stack trace (translators append the stack trace to the
 * message).
 */
export function failure(err: unknown): {
  attributes: Attributes;
  status?: SpanStatus;
  event: { name: string; attributes: Attributes };
} {
  const error = err instanceof Error ? err : new Error(String(err));
  if (isBubbleUp(error)) {
    return {
      attributes: { 'langgraph.interrupted': error.name === 'GraphInterrupt' || error.name === 'NodeInterrupt' },
      event: { name: 'langgraph.interrupt', attributes: { 'langgraph.error.type': error.name } },
    };
  }
  const attributes: Attributes = { 'exception.type': error.name, 'exception.message': error.message };
  if (error.stack) attributes['exception.stacktrace'] = boundedText(error.stack);
  return {
    attributes: {},
    status: { code: SpanStatusCode.ERROR, message: `${error.name}: ${error.message}` },
    event: { name: 'exception', attributes },
  };
}

/** LangGraph's task metadata, so a span can be matched to its node, step and namespace. */
function graphMetadata(metadata: Record<string, unknown> | undefined): Attributes {
  const attributes: Attributes = {};
  if (!metadata) return attributes;
  const node = metadata.langgraph_node;
  const step = metadata.langgraph_step;
  const namespace = metadata.langgraph_checkpoint_ns;
  if (typeof node === 'string') attributes['langsmith.metadata.langgraph_node'] = node;
  if (typeof step === 'number') attributes['langsmith.metadata.langgraph_step'] = Math.trunc(step);
  if (typeof namespace === 'string' && namespace !== '')
    attributes['langsmith.metadata.langgraph_checkpoint_ns'] = namespace;
  return attributes;
}

interface TokenUsage {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
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

function usageFromLlmOutput(llmOutput: Record<string, unknown> | undefined): TokenUsage | undefined {
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
