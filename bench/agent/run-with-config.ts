// What the server's `runWithConfig` (plugins/receivers/agent_api/internal/runtime/run-with-config.ts)
// saves against `@langchain/core`'s, in one process, the two alternated: first the calls of one
// traced run of the offline chat graph (their configs captured from a real run, each called with a
// callback that does nothing), then whole traced runs invoked in-process (in-memory checkpointer,
// the run tracer to a sink), CPU time from `process.cpuUsage()`, medians of `--rounds` passes.
//
//   node --import tsx bench/agent/run-with-config.ts [--rounds 9] [--runs 400]

import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { MemorySaver } from '@langchain/langgraph';
import { graph } from '../../examples/graphs/chat.ts';
import { installCallbackManagerCopy } from '../../plugins/receivers/agent_api/internal/runtime/callback-manager-copy.ts';
import { installRandomPool } from '../../plugins/receivers/agent_api/internal/runtime/random-pool.ts';
import { installRunWithConfig } from '../../plugins/receivers/agent_api/internal/runtime/run-with-config.ts';
import { createRunTracer } from '../../plugins/receivers/agent_api/internal/tracing/tracer.ts';
import { Sink } from '../../src/pipeline/testing.ts';

const { values: args } = parseArgs({
  options: { rounds: { type: 'string', default: '9' }, runs: { type: 'string', default: '400' } },
});
const rounds = Number(args.rounds);
const runs = Number(args.runs);

// As the server starts: the random pool and the one-pass copy are in place for both.
installRandomPool();
installCallbackManagerCopy();
type RunWithConfig = (config: unknown, callback: () => unknown, avoidCreatingRootRunTree?: boolean) => unknown;
const provider = Object.getPrototypeOf(AsyncLocalStorageProviderSingleton) as { runWithConfig: RunWithConfig };
const library = provider.runWithConfig;
installRunWithConfig();
const replacement = provider.runWithConfig;

const bound = (graph as unknown as { withConfig(config: object): object }).withConfig({}) as {
  checkpointer?: unknown;
  invoke(input: unknown, config: unknown): Promise<unknown>;
};
bound.checkpointer = new MemorySaver();
const input = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** CPU ms per traced run over `count` runs. */
async function tracedRuns(count: number): Promise<number> {
  const start = cpuMs();
  for (let i = 0; i < count; i++) {
    const runId = randomUUID();
    const threadId = randomUUID();
    const tracer = createRunTracer({
      next: new Sink<'spans'>(),
      context: { project: 'default' },
      runId,
      threadId,
      assistantId: 'assistant',
      graphId: 'chat',
    });
    await bound.invoke(input, {
      configurable: { thread_id: threadId },
      runId,
      callbacks: [tracer],
      metadata: { run_id: runId, thread_id: threadId, graph_id: 'chat', assistant_id: 'assistant' },
    });
    await tracer.flush();
  }
  return (cpuMs() - start) / count;
}

// The configs one traced run enters runWithConfig with.
const calls: [unknown, boolean | undefined][] = [];
provider.runWithConfig = function (this: unknown, config, callback, avoid) {
  calls.push([config, avoid]);
  return library.call(this, config, callback, avoid);
};
await tracedRuns(1);
const nothing = () => undefined;
/** CPU µs for the calls of one run, averaged over `repeats`. */
function oneRunsCalls(fn: RunWithConfig, repeats: number): number {
  const start = cpuMs();
  for (let r = 0; r < repeats; r++)
    for (const [config, avoid] of calls) fn.call(AsyncLocalStorageProviderSingleton, config, nothing, avoid);
  return ((cpuMs() - start) * 1000) / repeats;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const show = (values: number[], digits: number) =>
  `${values.map((value) => value.toFixed(digits)).join(' ')} (median ${median(values).toFixed(digits)})`;

console.log(
  `${cpus().length} cores (${cpus()[0]?.model.trim()}), node ${process.version}, ${new Date().toISOString()}`,
);
console.log(`load average ${loadavg()[0]!.toFixed(1)}`);
oneRunsCalls(library, 20_000);
oneRunsCalls(replacement, 20_000);
const callsLibrary: number[] = [];
const callsReplacement: number[] = [];
for (let round = 0; round < rounds; round++) {
  callsLibrary.push(oneRunsCalls(library, 10_000));
  callsReplacement.push(oneRunsCalls(replacement, 10_000));
}
console.log(`runWithConfig, the ${calls.length} calls of one traced run, CPU µs:`);
console.log(`  library      ${show(callsLibrary, 0)}`);
console.log(`  replacement  ${show(callsReplacement, 0)}`);

provider.runWithConfig = replacement;
await tracedRuns(300);
provider.runWithConfig = library;
await tracedRuns(300);
const runsLibrary: number[] = [];
const runsReplacement: number[] = [];
for (let round = 0; round < rounds; round++) {
  provider.runWithConfig = library;
  runsLibrary.push(await tracedRuns(runs));
  provider.runWithConfig = replacement;
  runsReplacement.push(await tracedRuns(runs));
}
console.log(`a traced chat run in-process, CPU ms:`);
console.log(`  library      ${show(runsLibrary, 2)}`);
console.log(`  replacement  ${show(runsReplacement, 2)}`);
console.log(`load average ${loadavg()[0]!.toFixed(1)}`);
