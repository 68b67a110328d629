// What tracing costs a run: the offline chat and tools graphs invoked in-process with an in-memory
// checkpointer, with and without the run tracer (its spans going to a sink), p50/p99 per run.
//
//   node --import tsx bench/agent/tracer.ts [--runs 500]

import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { MemorySaver } from '@langchain/langgraph';
import { graph as chatGraph } from '../../examples/graphs/chat.ts';
import { graph as toolsGraph } from '../../examples/graphs/tools.ts';
import { createRunTracer } from '../../plugins/receivers/agent_api/internal/tracing/tracer.ts';
import { Sink } from '../../src/pipeline/testing.ts';
import { countSpans } from '../../src/model/spans.ts';
import { drive, quantile } from './stats.ts';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '500' } } });
const runs = Number(args.runs);

type Invocable = {
  withConfig(config: Record<string, unknown>): Invocable;
  checkpointer?: unknown;
  invoke(input: unknown, config: unknown): Promise<unknown>;
};

async function measure(name: string, graph: Invocable, traced: boolean) {
  const bound = graph.withConfig({});
  bound.checkpointer = new MemorySaver();
  const sink = new Sink<'spans'>();
  const input = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };
  const once = async () => {
    const runId = randomUUID();
    const threadId = randomUUID();
    const tracer = traced
      ? createRunTracer({ next: sink, context: { project: 'bench' }, runId, threadId, assistantId: 'a', graphId: name })
      : undefined;
    await bound.invoke(input, {
      configurable: { thread_id: threadId },
      runId,
      ...(tracer ? { callbacks: [tracer] } : {}),
    });
    await tracer?.flush();
  };
  await drive(50, 1, once);
  const result = await drive(runs, 1, once);
  const spans = sink.batches.reduce((total, batch) => total + countSpans(batch.data), 0);
  return {
    p50: quantile(result.latenciesMs, 0.5),
    p99: quantile(result.latenciesMs, 0.99),
    spansPerRun: spans / (runs + 50),
  };
}

process.stdout.write(
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}, ${runs} runs each\n\n`,
);
process.stdout.write('| graph | tracing | p50 ms | p99 ms | spans/run |\n|:--|:--|--:|--:|--:|\n');
for (const [name, graph] of [
  ['chat', chatGraph],
  ['tools', toolsGraph],
] as const) {
  for (const traced of [false, true]) {
    const figures = await measure(name, graph as unknown as Invocable, traced);
    process.stdout.write(
      `| ${name} | ${traced ? 'on' : 'off'} | ${figures.p50.toFixed(2)} | ${figures.p99.toFixed(2)} | ${figures.spansPerRun.toFixed(0)} |\n`,
    );
  }
}
