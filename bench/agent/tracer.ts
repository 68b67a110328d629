// What tracing costs a run: the offline chat and tools graphs invoked in-process with an in-memory
// checkpointer, p50/p99 per run and CPU per run, three ways: without callbacks; with a callback
// handler that does nothing (what LangChain's callback machinery costs by itself, for every
// runnable a graph step invokes); and with the run tracer, its spans going to a sink.
//
//   node --import tsx bench/agent/tracer.ts [--runs 500]

import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { MemorySaver } from '@langchain/langgraph';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { graph as chatGraph } from '../../examples/graphs/chat.ts';
import { graph as toolsGraph } from '../../examples/graphs/tools.ts';
import { createRunTracer } from '../../plugins/receivers/agent_api/internal/tracing/tracer.ts';
import { Sink } from '../../src/pipeline/testing.ts';
import { countSpans } from '../../src/model/spans.ts';
import { drive, quantile } from './stats.ts';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '500' } } });
const runs = Number(args.runs);
// Enough for the JIT to settle: with 50, the first variant measured paid for it (~0.2 ms per run).
const WARMUP = 300;

type Invocable = {
  withConfig(config: Record<string, unknown>): Invocable;
  checkpointer?: unknown;
  invoke(input: unknown, config: unknown): Promise<unknown>;
};

type Tracing = 'off' | 'no-op handler' | 'on';

/** A handler that records nothing, awaited inline as the run tracer is. */
class NoOpHandler extends BaseCallbackHandler {
  readonly name = 'no_op';
  override awaitHandlers = true;
}

async function measure(name: string, graph: Invocable, tracing: Tracing) {
  const bound = graph.withConfig({});
  bound.checkpointer = new MemorySaver();
  const sink = new Sink<'spans'>();
  const input = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };
  const once = async () => {
    const runId = randomUUID();
    const threadId = randomUUID();
    const tracer =
      tracing === 'on'
        ? createRunTracer({
            next: sink,
            context: { project: 'bench' },
            runId,
            threadId,
            assistantId: 'a',
            graphId: name,
          })
        : undefined;
    const handler = tracing === 'no-op handler' ? new NoOpHandler() : tracer;
    await bound.invoke(input, {
      configurable: { thread_id: threadId },
      runId,
      ...(handler ? { callbacks: [handler] } : {}),
    });
    await tracer?.flush();
  };
  await drive(WARMUP, 1, once);
  const cpuBefore = process.cpuUsage();
  const result = await drive(runs, 1, once);
  const cpu = process.cpuUsage(cpuBefore);
  const spans = sink.batches.reduce((total, batch) => total + countSpans(batch.data), 0);
  return {
    p50: quantile(result.latenciesMs, 0.5),
    p99: quantile(result.latenciesMs, 0.99),
    cpuMsPerRun: (cpu.user + cpu.system) / 1000 / runs,
    spansPerRun: spans / (runs + WARMUP),
  };
}

process.stdout.write(
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}, ${runs} runs each\n\n`,
);
process.stdout.write('| graph | tracing | p50 ms | p99 ms | cpu ms/run | spans/run |\n|:--|:--|--:|--:|--:|--:|\n');
for (const [name, graph] of [
  ['chat', chatGraph],
  ['tools', toolsGraph],
] as const) {
  for (const tracing of ['off', 'no-op handler', 'on'] as const) {
    const figures = await measure(name, graph as unknown as Invocable, tracing);
    process.stdout.write(
      `| ${name} | ${tracing} | ${figures.p50.toFixed(2)} | ${figures.p99.toFixed(2)} | ${figures.cpuMsPerRun.toFixed(2)} | ${figures.spansPerRun.toFixed(0)} |\n`,
    );
  }
}
