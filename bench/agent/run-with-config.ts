// What the server's `runWithConfig` (plugins/receivers/agent_api/internal/runtime/run-with-config.ts)
// saves against `@langchain/core`'s, in one process, the two alternated: first the calls of one
// traced run of the offline chat graph (their configs captured from a real run, each called with a
// callback that does nothing), then whole traced runs invoked in-process (in-memory checkpointer,
// the run tracer to a sink), CPU time from `process.cpuUsage()`, medians of `--rounds` passes.
//
//   node --import tsx bench/agent/run-with-config.ts [--rounds 9] [--runs 400] [--base DIR]

import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
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
  options: {
    rounds: { type: 'string', default: '9' },
    runs: { type: 'string', default: '400' },
    base: { type: 'string' },
  },
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
// `--base DIR`: the replacement of another checkout (with its `node_modules`), set against this one's.
let base: RunWithConfig | undefined;
if (args.base) {
  provider.runWithConfig = library;
  const module = (await import(
    resolve(args.base, 'plugins/receivers/agent_api/internal/runtime/run-with-config.ts')
  )) as {
    installRunWithConfig(): void;
  };
  module.installRunWithConfig();
  base = provider.runWithConfig;
  provider.runWithConfig = replacement;
}

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

// The configs one traced run enters runWithConfig with, and the run tree each was nested in (none
// for the outermost runnables).
const storage = AsyncLocalStorageProviderSingleton.getInstance();
const calls: [config: unknown, avoid: boolean | undefined, parent: unknown][] = [];
provider.runWithConfig = function (this: unknown, config, callback, avoid) {
  calls.push([config, avoid, storage.getStore()]);
  return library.call(this, config, callback, avoid);
};
await tracedRuns(1);
const nothing = () => undefined;
/** CPU µs for the calls of one run, each in the store it was made in, averaged over `repeats`. */
function oneRunsCalls(fn: RunWithConfig, repeats: number): number {
  const start = cpuMs();
  for (let r = 0; r < repeats; r++) {
    for (const [config, avoid, parent] of calls) {
      if (parent === undefined) fn.call(AsyncLocalStorageProviderSingleton, config, nothing, avoid);
      else storage.run(parent, () => fn.call(AsyncLocalStorageProviderSingleton, config, nothing, avoid));
    }
  }
  return ((cpuMs() - start) * 1000) / repeats;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const show = (values: number[], digits: number) =>
  `${values.map((value) => value.toFixed(digits)).join(' ')} (median ${median(values).toFixed(digits)})`;

console.log(
  `${cpus().length} cores (${cpus()[0]?.model.trim()}), node ${process.version}, ${new Date().toISOString()}`,
);
console.log(`load average ${loadavg()[0]!.toFixed(1)}`);
const variants: [string, RunWithConfig][] = [
  ['library', library],
  ...(base ? [['base', base] as [string, RunWithConfig]] : []),
  ['replacement', replacement],
];
const outermost = calls.filter(([, , parent]) => parent === undefined).length;
for (const [, fn] of variants) oneRunsCalls(fn, 20_000);
const callFigures = variants.map((): number[] => []);
for (let round = 0; round < rounds; round++) {
  variants.forEach(([, fn], index) => callFigures[index]!.push(oneRunsCalls(fn, 10_000)));
}
console.log(`runWithConfig, the ${calls.length} calls of one traced run (${outermost} outermost), CPU µs:`);
variants.forEach(([name], index) => console.log(`  ${name.padEnd(12)} ${show(callFigures[index]!, 0)}`));

for (const [, fn] of variants) {
  provider.runWithConfig = fn;
  await tracedRuns(300);
}
const runFigures = variants.map((): number[] => []);
for (let round = 0; round < rounds; round++) {
  for (const [index, [, fn]] of variants.entries()) {
    provider.runWithConfig = fn;
    runFigures[index]!.push(await tracedRuns(runs));
  }
}
console.log(`a traced chat run in-process, CPU ms:`);
variants.forEach(([name], index) => console.log(`  ${name.padEnd(12)} ${show(runFigures[index]!, 2)}`));
console.log(`load average ${loadavg()[0]!.toFixed(1)}`);
