// What tracing costs a run: the offline chat and tools graphs invoked in-process with an in-memory
// checkpointer, as the server invokes them (the run's metadata, a fresh thread, LangChain's
// functions the server replaces at start replaced), CPU per run three ways: without callbacks;
// with a callback handler that does nothing (what LangChain's callback machinery costs by itself,
// for every runnable a graph step invokes); and with the run tracer, its spans going to a sink
// (the pipeline after it is not included). The three alternate in `--rounds` rounds of `--runs`
// runs each; medians. `--library` leaves LangChain's functions as the library has them.
//
//   node --import tsx bench/agent/tracer.ts [--rounds 9] [--runs 300] [--library]

import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { MemorySaver } from '@langchain/langgraph';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { graph as chatGraph } from '../../examples/graphs/chat.ts';
import { graph as toolsGraph } from '../../examples/graphs/tools.ts';
import { installCallbackManagerCopy } from '../../plugins/receivers/agent_api/internal/runtime/callback-manager-copy.ts';
import { installRandomPool } from '../../plugins/receivers/agent_api/internal/runtime/random-pool.ts';
import { installRunWithConfig } from '../../plugins/receivers/agent_api/internal/runtime/run-with-config.ts';
import { createRunTracer } from '../../plugins/receivers/agent_api/internal/tracing/tracer.ts';
import { Sink } from '../../src/pipeline/testing.ts';
import { countSpans } from '../../src/model/spans.ts';

// The example graphs switch to a real OpenAI model when a key is set; this bench always runs offline.
delete process.env.OPENAI_API_KEY;

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '9' },
    runs: { type: 'string', default: '300' },
    library: { type: 'boolean', default: false },
  },
});
const rounds = Number(args.rounds);
const runs = Number(args.runs);
// Enough for the JIT to settle: with 50, the first variant measured paid for it (~0.2 ms per run).
const WARMUP = 300;

if (!args.library) {
  // As the server starts.
  installRandomPool();
  installCallbackManagerCopy();
  installRunWithConfig();
}

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

let spansSeen = 0;

/** A graph bound as the server binds it, and one run of it with tracing `tracing`, to `sink`. */
function runner(name: string, graph: Invocable, sink: Sink<'spans'>) {
  const bound = graph.withConfig({});
  bound.checkpointer = new MemorySaver();
  const input = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };
  return async (tracing: Tracing) => {
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
      metadata: { run_id: runId, thread_id: threadId, graph_id: name, user_id: null, run_attempt: 1 },
      ...(handler ? { callbacks: [handler] } : {}),
    });
    await tracer?.flush();
    // Counted and let go, as the server's intake lets a run's spans go: kept, they would grow the
    // heap and the collector's work with every run.
    for (const batch of sink.batches) spansSeen += countSpans(batch.data);
    sink.batches.length = 0;
  };
}

/** CPU ms per run over `count` runs. */
async function cpuPerRun(once: (tracing: Tracing) => Promise<void>, tracing: Tracing, count: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) await once(tracing);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / count;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const modes: Tracing[] = ['off', 'no-op handler', 'on'];

process.stdout.write(
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}, ` +
    `load average ${loadavg()[0]!.toFixed(1)}; LangChain's functions ${args.library ? 'as the library has them' : 'replaced as the server replaces them'}; ` +
    `${rounds} rounds of ${runs} runs each\n\n`,
);
process.stdout.write(
  '| graph | tracing | cpu ms/run (median) | rounds | over no callbacks | spans/run |\n|:--|:--|--:|:--|--:|--:|\n',
);
for (const [name, graph] of [
  ['chat', chatGraph],
  ['tools', toolsGraph],
] as const) {
  const sink = new Sink<'spans'>();
  const once = runner(name, graph as unknown as Invocable, sink);
  for (const mode of modes) await cpuPerRun(once, mode, WARMUP);
  spansSeen = 0;
  const figures = new Map<Tracing, number[]>(modes.map((mode) => [mode, []]));
  for (let round = 0; round < rounds; round++) {
    // Each mode in turn, starting from another one each round.
    for (let step = 0; step < modes.length; step++) {
      const mode = modes[(round + step) % modes.length]!;
      figures.get(mode)!.push(await cpuPerRun(once, mode, runs));
    }
  }
  const spans = spansSeen;
  const off = median(figures.get('off')!);
  for (const mode of modes) {
    const values = figures.get(mode)!;
    process.stdout.write(
      `| ${name} | ${mode} | ${median(values).toFixed(2)} | ${values.map((value) => value.toFixed(2)).join(' ')} | ` +
        `${mode === 'off' ? '' : `+${(median(values) - off).toFixed(2)}`} | ${mode === 'on' ? (spans / (rounds * runs)).toFixed(0) : 0} |\n`,
    );
  }
}
process.stdout.write(`\nload average ${loadavg()[0]!.toFixed(1)} at the end\n`);
