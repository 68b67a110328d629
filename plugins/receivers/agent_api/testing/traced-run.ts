// Test support for the runtime's replacements of LangChain internals: one traced run of an example
// graph, as the server makes it (bound with its own checkpointer, the run tracer among the
// callbacks), whose spans a test compares or counts.

import { MemorySaver } from '@langchain/langgraph';
import { Sink } from 'tracepipe/testing';
import type { Span } from 'tracepipe/plugin';
import { createRunTracer } from '../internal/tracing/tracer.ts';

export type InvocableGraph = {
  withConfig(config: Record<string, unknown>): InvocableGraph;
  checkpointer?: unknown;
  invoke(input: unknown, config: unknown): Promise<unknown>;
};

export const TRACED_RUN_IDS = {
  runId: '1f0c0000-0000-7000-8000-000000000001',
  threadId: '1f0c0000-0000-7000-8000-000000000002',
} as const;

/**
 * Runs `graph` once on a fresh checkpointer with a run tracer writing to a sink, and returns the
 * graph's result and every span the tracer flushed, in order. `metadata` is the run config's.
 */
export async function tracedRun(
  graph: unknown,
  graphId: string,
  options: { metadata?: Record<string, unknown> } = {},
): Promise<{ result: unknown; spans: Span[] }> {
  const bound = (graph as InvocableGraph).withConfig({});
  bound.checkpointer = new MemorySaver();
  const sink = new Sink<'spans'>();
  const { runId, threadId } = TRACED_RUN_IDS;
  const tracer = createRunTracer({
    next: sink,
    context: { project: 'default' },
    assistantId: 'a',
    graphId,
    runId,
    threadId,
  });
  const result = await bound.invoke(
    { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] },
    { configurable: { thread_id: threadId }, runId, ...options, callbacks: [tracer] },
  );
  await tracer.flush();
  const spans = sink.batches.flatMap((batch) =>
    batch.data.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)),
  );
  return { result, spans };
}
