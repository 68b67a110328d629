// Which kind of run a span is (llm, chain, tool, ...), from the hints each convention gives.
// Precedence, first match wins: an explicit `langsmith.span.kind`; the OTel GenAI operation name;
// Traceloop's `llm.request.type`; the OpenInference / Traceloop span kinds; the Vercel AI SDK's
// operation; otherwise `chain`. Unlike the reference, a value a hint does not know falls through to
// the next hint instead of forcing `chain`. Two overrides follow (see `translateSpan`): a prompt
// template makes a `prompt` run, and `gen_ai.tool.name` makes a `tool` run.

import type { RunType } from 'tracepipe/plugin';
import { RUN_TYPES } from 'tracepipe/plugin';
import type { AttributeMap } from './attributes.ts';
import { KeyList } from './attributes.ts';

// OTel GenAI `gen_ai.operation.name` well-known values (and the older `completion`/`embedding`).
const OPERATION_RUN_TYPES: Readonly<Record<string, RunType>> = {
  chat: 'llm',
  completion: 'llm',
  text_completion: 'llm',
  generate_content: 'llm',
  embeddings: 'embedding',
  embedding: 'embedding',
  execute_tool: 'tool',
  invoke_agent: 'chain',
  create_agent: 'chain',
};

// OpenInference `openinference.span.kind` and Traceloop `traceloop.span.kind`, lower-cased.
const SPAN_KIND_RUN_TYPES: Readonly<Record<string, RunType>> = {
  llm: 'llm',
  tool: 'tool',
  retriever: 'retriever',
  embedding: 'embedding',
  chain: 'chain',
  agent: 'chain',
  workflow: 'chain',
  task: 'chain',
  reranker: 'retriever',
  prompt: 'prompt',
};

// Vercel AI SDK: `ai.operationId` names the SDK call; the `doGenerate`/`doStream` inner spans are
// the provider calls, the outer spans the SDK's orchestration.
const VERCEL_OPERATION_RUN_TYPES: Readonly<Record<string, RunType>> = {
  'ai.generateText.doGenerate': 'llm',
  'ai.streamText.doStream': 'llm',
  'ai.generateObject.doGenerate': 'llm',
  'ai.streamObject.doStream': 'llm',
  'ai.embed.doEmbed': 'embedding',
  'ai.embedMany.doEmbed': 'embedding',
  'ai.embed': 'embedding',
  'ai.embedMany': 'embedding',
  'ai.toolCall': 'tool',
};

export function runTypeOf(attributes: AttributeMap): RunType {
  const explicit = attributes.string('langsmith.span.kind')?.toLowerCase();
  if (explicit && (RUN_TYPES as readonly string[]).includes(explicit)) return explicit as RunType;

  const operation = attributes.string('gen_ai.operation.name')?.toLowerCase();
  if (operation && OPERATION_RUN_TYPES[operation]) return OPERATION_RUN_TYPES[operation];

  const requestType = attributes.string('llm.request.type')?.toLowerCase();
  if (requestType) return requestType === 'embedding' ? 'embedding' : 'llm';

  for (const key of ['openinference.span.kind', 'traceloop.span.kind']) {
    const kind = attributes.string(key)?.toLowerCase();
    if (kind && SPAN_KIND_RUN_TYPES[kind]) return SPAN_KIND_RUN_TYPES[kind];
  }

  const vercel = attributes.string('ai.operationId');
  if (vercel && VERCEL_OPERATION_RUN_TYPES[vercel]) return VERCEL_OPERATION_RUN_TYPES[vercel];

  return 'chain';
}

/** Whether `langsmith.span.kind` names a valid run type (it then also beats the overrides). */
export function hasExplicitRunType(attributes: AttributeMap): boolean {
  const explicit = attributes.string('langsmith.span.kind')?.toLowerCase();
  return explicit !== undefined && (RUN_TYPES as readonly string[]).includes(explicit);
}

/** Whether any convention states the span's kind (so that no other evidence should override it). */
export function hasKindHint(attributes: AttributeMap): boolean {
  return attributes.hasAny(KIND_KEYS);
}

const KIND_KEYS = new KeyList([
  'langsmith.span.kind',
  'gen_ai.operation.name',
  'llm.request.type',
  'openinference.span.kind',
  'traceloop.span.kind',
  'ai.operationId',
]);
