// What reading a thread's state after a run costs (`graph-runner.ts`, `finish`), in one process:
// runs of the offline `chat` graph (or `--graph tools`) on fresh threads with the server's SQLite
// checkpointer, each followed by `graph.getState()` of its thread two ways, alternating in rounds:
// LangGraph's read (the latest checkpoint read back from the file and deserialised) and the
// checkpoint tuple the run wrote handed to it (`SqliteCheckpointDatabase.stateAfterRun`). CPU per
// run, the run and its state read together, and of the state read alone; medians of the rounds.
//
//   node --import tsx bench/agent/state-after-run.ts [--rounds 11] [--runs 300] [--graph chat|tools]

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { graph as chatGraph } from '../../examples/graphs/chat.ts';
import { graph as toolsGraph } from '../../examples/graphs/tools.ts';
import { installCallbackManagerCopy } from '../../plugins/receivers/agent_api/internal/runtime/callback-manager-copy.ts';
import { installRandomPool } from '../../plugins/receivers/agent_api/internal/runtime/random-pool.ts';
import { installRunWithConfig } from '../../plugins/receivers/agent_api/internal/runtime/run-with-config.ts';
import { SqliteCheckpointDatabase } from '../../plugins/receivers/agent_api/internal/storage/checkpoints.ts';
import { toWire } from '../../plugins/receivers/agent_api/internal/graphs/serialize.ts';

delete process.env.OPENAI_API_KEY;

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '11' },
    runs: { type: 'string', default: '300' },
    graph: { type: 'string', default: 'chat' },
  },
});
const rounds = Number(args.rounds);
const runs = Number(args.runs);

installRandomPool();
installCallbackManagerCopy();
installRunWithConfig();

type Way = 'read' | 'tuple';
interface Bound {
  checkpointer?: unknown;
  stream(input: unknown, options: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  getState(config: object): Promise<{ values: unknown }>;
}

const dir = mkdtempSync(join(tmpdir(), 'state-after-run-'));
const db = new SqliteCheckpointDatabase(join(dir, 'checkpoints.sqlite'));
const source = args.graph === 'tools' ? toolsGraph : chatGraph;
const graph = (source as unknown as { withConfig(config: object): Bound }).withConfig({});
graph.checkpointer = db.saver;
const question = args.graph === 'tools' ? 'What is 6 times 7?' : 'What is the weather in Paris?';
const input = { messages: [{ role: 'user', content: question }] };

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** One run and its state read; the CPU of the state read (with its wire form) alone. */
async function oneRun(way: Way): Promise<number> {
  const threadId = randomUUID();
  const runId = randomUUID();
  const options = {
    configurable: { thread_id: threadId },
    metadata: { run_id: runId, thread_id: threadId },
    runId,
    streamMode: ['values'],
  };
  for await (const chunk of await graph.stream(input, options)) void chunk;
  const start = cpuMs();
  const lent = db.stateAfterRun(threadId, runId);
  const snapshot = await graph.getState(
    way === 'tuple' ? lent : { configurable: { thread_id: threadId, checkpoint_ns: '' } },
  );
  toWire(snapshot.values);
  return cpuMs() - start;
}

const results: Record<Way, { run: number[]; state: number[] }> = {
  read: { run: [], state: [] },
  tuple: { run: [], state: [] },
};
try {
  for (let i = 0; i < 600; i++) await oneRun(i % 2 === 0 ? 'read' : 'tuple');
  for (let round = 0; round < rounds; round++) {
    for (const way of round % 2 === 0 ? (['read', 'tuple'] as const) : (['tuple', 'read'] as const)) {
      const start = cpuMs();
      let state = 0;
      for (let i = 0; i < runs; i++) state += await oneRun(way);
      results[way].run.push((cpuMs() - start) / runs);
      results[way].state.push(state / runs);
    }
  }
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}, load average ${loadavg()[0]!.toFixed(1)}`,
);
console.log(`${args.graph}: ${rounds} rounds of ${runs} runs each way, CPU ms per run (median; every round)`);
for (const way of ['read', 'tuple'] as const) {
  const { run, state } = results[way];
  console.log(
    `${way.padEnd(5)} run and state ${median(run).toFixed(3)} (${run.map((v) => v.toFixed(2)).join(' ')})  ` +
      `state read ${median(state).toFixed(3)} (${state.map((v) => v.toFixed(3)).join(' ')})`,
  );
}
