// Two built-in components together: the agent server's run tracer (agent_api) through the real
// `genai` translator. A traced tool-calling run must come out as one backend trace whose root run
// is the API run (same id), with the model call as an `llm` run carrying its usage and model, the
// tool as a `tool` run, and the thread in metadata.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { MemorySaver } from '@langchain/langgraph';
import { validateAgainst, Sink, nopSettings } from 'tracepipe/testing';
import type { Run } from 'tracepipe/plugin';
import { graph as toolsGraph } from '../../examples/graphs/tools.ts';
import { graph as errorGraph } from '../../examples/graphs/error.ts';
import { genAiProcessorFactory } from '../../plugins/processors/genai/index.ts';
import type { GenAiProcessorConfig } from '../../plugins/processors/genai/index.ts';
import { createRunTracer } from '../../plugins/receivers/agent_api/internal/tracing/tracer.ts';

// The example graphs switch to a real OpenAI model when a key is set; these tests always run offline.
delete process.env.OPENAI_API_KEY;

type Invocable = {
  withConfig(config: Record<string, unknown>): Invocable;
  checkpointer?: unknown;
  invoke(input: unknown, config: unknown): Promise<unknown>;
};

async function translatedRuns(
  graph: Invocable,
  graphId: string,
  input: unknown,
): Promise<{ runId: string; threadId: string; runs: Run[] }> {
  const config: Record<string, unknown> = {};
  assert.deepEqual(validateAgainst(genAiProcessorFactory.configSchema, config, 'genai'), []);
  const sink = new Sink<'runs'>();
  const genai = genAiProcessorFactory.create(
    nopSettings('processor', 'genai'),
    config as unknown as GenAiProcessorConfig,
    sink,
  );
  const controller = new AbortController();
  await genai.start(controller.signal);
  const bound = graph.withConfig({});
  bound.checkpointer = new MemorySaver();
  const runId = randomUUID();
  const threadId = randomUUID();
  const tracer = createRunTracer({
    next: genai,
    context: { project: 'default' },
    runId,
    threadId,
    assistantId: 'assistant-1',
    graphId,
  });
  try {
    await bound.invoke(input, { configurable: { thread_id: threadId }, callbacks: [tracer], runId });
  } catch {
    // failures are part of what is traced
  }
  await tracer.flush();
  await genai.shutdown(Date.now() + 5_000);
  controller.abort();
  return { runId, threadId, runs: sink.batches.flatMap((batch) => batch.data.runs) };
}

describe('run traces through the genai translator', () => {
  it('become one backend trace rooted at the API run', async () => {
    const { runId, threadId, runs } = await translatedRuns(toolsGraph as unknown as Invocable, 'tools', {
      messages: [{ role: 'user', content: 'What is 2 + 40?' }],
    });
    assert.equal(runs.length, 9);
    for (const run of runs) assert.equal(run.trace_id, runId, 'the trace is the API run');
    const root = runs.find((run) => run.parent_run_id === undefined)!;
    assert.equal(root.id, runId, 'the root run has the API run id');
    assert.equal(root.name, 'tools');
    assert.equal(root.run_type, 'chain');
    assert.equal(root.status, 'success');
    const metadata = (root.extra?.metadata ?? {}) as Record<string, unknown>;
    assert.equal(metadata.thread_id, threadId);
    assert.equal(metadata.graph_id, 'tools');
    assert.equal(metadata.assistant_id, 'assistant-1');

    const llms = runs.filter((run) => run.run_type === 'llm');
    assert.equal(llms.length, 2);
    for (const llm of llms) {
      assert.equal(((llm.extra?.metadata ?? {}) as Record<string, unknown>).ls_model_name, 'local-echo');
      const usage = (llm.outputs?.usage_metadata ?? {}) as Record<string, unknown>;
      assert.ok(typeof usage.input_tokens === 'number' && usage.input_tokens > 0, JSON.stringify(llm.outputs));
    }
    const tool = runs.find((run) => run.run_type === 'tool')!;
    assert.equal(tool.name, 'add');
    const ids = new Set(runs.map((run) => run.id));
    for (const run of runs)
      assert.ok(run.parent_run_id === undefined || ids.has(run.parent_run_id), `${run.name}: parent in trace`);
  });

  it('carry a failed run as error runs with the message', async () => {
    const { runs } = await translatedRuns(errorGraph as unknown as Invocable, 'error', {});
    const root = runs.find((run) => run.parent_run_id === undefined)!;
    assert.equal(root.status, 'error');
    assert.match(root.error ?? '', /Boo!/);
  });
});
