// What the run tracer itself costs per run, without LangChain around it: the callbacks of one traced
// run of the offline `chat` and `tools` graphs are recorded once (their arguments as LangChain
// passed them), then replayed on fresh run tracers, each flushed into a consumer that encodes the
// batch to OTLP protobuf as the server's span intake does for its journal. With `--base DIR` (a
// checkout of another commit, built or not, with `node_modules`) the tracer of that checkout is
// replayed too, the two alternated in rounds; CPU time from `process.cpuUsage()`, medians.
//
//   node --import tsx bench/agent/tracer-replay.ts [--base DIR] [--rounds 41] [--runs 300]

import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { MemorySaver } from '@langchain/langgraph';
import type { Consumer, SpanBatch } from 'tracepipe/plugin';
import { graph as chatGraph } from '../../examples/graphs/chat.ts';
import { graph as toolsGraph } from '../../examples/graphs/tools.ts';
import { encodeTraceRequestProtobuf } from '../../src/otlp/encode.ts';
import type { RunTracerOptions, RunTracer } from '../../plugins/receivers/agent_api/internal/tracing/tracer.ts';

// The example graphs switch to a real OpenAI model when a key is set; this bench always runs offline.
delete process.env.OPENAI_API_KEY;

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '41' },
    runs: { type: 'string', default: '300' },
  },
});
const rounds = Number(args.rounds);
const runs = Number(args.runs);
const TRACER_MODULE = 'plugins/receivers/agent_api/internal/tracing/tracer.ts';

type CreateRunTracer = (options: RunTracerOptions) => RunTracer;
const tracers: [string, CreateRunTracer][] = [
  ['this checkout', ((await import(`../../${TRACER_MODULE}`)) as { createRunTracer: CreateRunTracer }).createRunTracer],
];
if (args.base) {
  const base = (await import(resolve(args.base, TRACER_MODULE))) as { createRunTracer: CreateRunTracer };
  tracers.unshift(['base', base.createRunTracer]);
}

/** One callback as LangChain made it: the handler method and its arguments. */
type Call = [method: string, args: unknown[]];

const HANDLER_METHODS = [
  'handleChainStart',
  'handleChainEnd',
  'handleChainError',
  'handleChatModelStart',
  'handleLLMStart',
  'handleLLMEnd',
  'handleLLMError',
  'handleToolStart',
  'handleToolEnd',
  'handleToolError',
  'handleRetrieverStart',
  'handleRetrieverEnd',
  'handleRetrieverError',
];

/** A handler that records every callback the run tracer would get, awaited inline as the tracer is. */
class Recorder extends BaseCallbackHandler {
  readonly name = 'recorder';
  override awaitHandlers = true;
  readonly calls: Call[] = [];
  constructor() {
    super();
    for (const method of HANDLER_METHODS) {
      (this as unknown as Record<string, (...callArgs: unknown[]) => void>)[method] = (...callArgs) => {
        this.calls.push([method, callArgs]);
      };
    }
  }
}

type Invocable = {
  withConfig(config: Record<string, unknown>): Invocable;
  checkpointer?: unknown;
  invoke(input: unknown, config: unknown): Promise<unknown>;
};

async function record(graph: unknown): Promise<Call[]> {
  const bound = (graph as Invocable).withConfig({});
  bound.checkpointer = new MemorySaver();
  const recorder = new Recorder();
  const runId = randomUUID();
  const threadId = randomUUID();
  await bound.invoke(
    { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] },
    {
      configurable: { thread_id: threadId },
      runId,
      metadata: { run_id: runId, thread_id: threadId, graph_id: 'g', user_id: null, run_attempt: 1 },
      callbacks: [recorder],
    },
  );
  return recorder.calls;
}

/** As the span intake takes a batch: encoded for the journal, the batch itself handed on. */
let encodedBytes = 0;
const intake: Consumer<'spans'> = {
  mutatesData: false,
  consume: async (batch: SpanBatch) => {
    encodedBytes += encodeTraceRequestProtobuf(batch).byteLength;
  },
};

async function replay(create: CreateRunTracer, graphId: string, calls: Call[], count: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const tracer = create({
      next: intake,
      context: { project: 'default' },
      runId: randomUUID(),
      threadId: randomUUID(),
      assistantId: 'assistant',
      graphId,
    });
    const methods = tracer as unknown as Record<string, (...callArgs: unknown[]) => void>;
    for (const [method, callArgs] of calls) methods[method]!(...callArgs);
    await tracer.flush();
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const graphs = [
  ['chat', await record(chatGraph)],
  ['tools', await record(toolsGraph)],
] as const;
process.stdout.write(
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}, ` +
    `load average ${loadavg()[0]!.toFixed(1)}; ${runs} replays per round, ${rounds} rounds\n\n`,
);
for (const [graphId, calls] of graphs) {
  for (const [, create] of tracers) await replay(create, graphId, calls, runs);
}
const figures = new Map<string, number[]>();
for (let round = 0; round < rounds; round++) {
  for (const [graphId, calls] of graphs) {
    // Alternate which tracer goes first, so neither always follows the other.
    const order = round % 2 === 0 ? tracers : [...tracers].reverse();
    for (const [name, create] of order) {
      const key = `${graphId}\u0000${name}`;
      figures.set(key, [...(figures.get(key) ?? []), await replay(create, graphId, calls, runs)]);
    }
  }
}
process.stdout.write(
  '| graph | callbacks | tracer | µs per run (median) | quartiles | ÷ first (median of rounds) |\n|:--|--:|:--|--:|:--|--:|\n',
);
const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * q)]!;
for (const [graphId, calls] of graphs) {
  const first = figures.get(`${graphId}\u0000${tracers[0]![0]}`)!;
  for (const [name] of tracers) {
    const values = figures.get(`${graphId}\u0000${name}`)!;
    const ratio = median(values.map((value, round) => value / first[round]!));
    process.stdout.write(
      `| ${graphId} | ${calls.length} | ${name} | ${median(values).toFixed(1)} | ${quantile(values, 0.25).toFixed(1)}-${quantile(values, 0.75).toFixed(1)} | ${ratio.toFixed(3)} |\n`,
    );
  }
}
process.stdout.write(`\nload average ${loadavg()[0]!.toFixed(1)} at the end; ${encodedBytes} bytes encoded\n`);
