// What committing the SQLite checkpointer's writes together saves (`commit-batch.ts`), in one
// process: runs of the offline `chat` graph, `--concurrency` (16) in flight on fresh threads, with
// the server's SQLite checkpointer on two files, alternating in rounds: each write committed alone
// (as LangGraph's `SqliteSaver` commits it) against the writes of each turn of the event loop
// committed together. CPU ms per run, medians of the rounds.
//
//   node --import tsx bench/agent/checkpoint-commits.ts [--rounds 11] [--runs 400] [--concurrency 16]

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { graph as chatGraph } from '../../examples/graphs/chat.ts';
import { installCallbackManagerCopy } from '../../plugins/receivers/agent_api/internal/runtime/callback-manager-copy.ts';
import { installRandomPool } from '../../plugins/receivers/agent_api/internal/runtime/random-pool.ts';
import { installRunWithConfig } from '../../plugins/receivers/agent_api/internal/runtime/run-with-config.ts';
import { SqliteCheckpointDatabase } from '../../plugins/receivers/agent_api/internal/storage/checkpoints.ts';
import type { CommitBatch } from '../../plugins/receivers/agent_api/internal/storage/commit-batch.ts';

delete process.env.OPENAI_API_KEY;

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '11' },
    runs: { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '16' },
  },
});
const rounds = Number(args.rounds);
const runs = Number(args.runs);
const concurrency = Number(args.concurrency);

installRandomPool();
installCallbackManagerCopy();
installRunWithConfig();

type Way = 'alone' | 'together';
interface Bound {
  checkpointer?: unknown;
  stream(input: unknown, options: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
}

const dir = mkdtempSync(join(tmpdir(), 'checkpoint-commits-'));
function open(way: Way): { db: SqliteCheckpointDatabase; graph: Bound } {
  const db = new SqliteCheckpointDatabase(join(dir, `${way}.sqlite`));
  if (way === 'alone') {
    // Each write in a transaction of its own, at once, as the library's saver commits it.
    const { db: connection } = db.saver;
    (db.saver as unknown as { batch: CommitBatch }).batch.commit = (write) => {
      connection.transaction(write)();
      return Promise.resolve();
    };
  }
  const graph = (chatGraph as unknown as { withConfig(config: object): Bound }).withConfig({});
  graph.checkpointer = db.saver;
  return { db, graph };
}
const setups = { alone: open('alone'), together: open('together') };
const input = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };

async function oneRun(graph: Bound): Promise<void> {
  const threadId = randomUUID();
  const runId = randomUUID();
  const options = { configurable: { thread_id: threadId }, metadata: { run_id: runId }, runId, streamMode: ['values'] };
  for await (const chunk of await graph.stream(input, options)) void chunk;
}

async function pass(graph: Bound, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        await oneRun(graph);
      }
    }),
  );
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

const results: Record<Way, number[]> = { alone: [], together: [] };
try {
  for (const way of ['alone', 'together'] as const) await pass(setups[way].graph, 600);
  for (let round = 0; round < rounds; round++) {
    for (const way of round % 2 === 0 ? (['alone', 'together'] as const) : (['together', 'alone'] as const)) {
      const start = cpuMs();
      await pass(setups[way].graph, runs);
      results[way].push((cpuMs() - start) / runs);
    }
  }
} finally {
  for (const way of ['alone', 'together'] as const) await setups[way].db.close();
  rmSync(dir, { recursive: true, force: true });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}, ${new Date().toISOString()}, load average ${loadavg()[0]!.toFixed(1)}`,
);
console.log(
  `chat, ${concurrency} in flight: ${rounds} rounds of ${runs} runs each way, CPU ms per run (median; every round)`,
);
for (const way of ['alone', 'together'] as const)
  console.log(
    `${way.padEnd(8)} ${median(results[way]).toFixed(3)} (${results[way].map((v) => v.toFixed(2)).join(' ')})`,
  );
