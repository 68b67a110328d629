// Where the SQLite files' WAL checkpoints run, measured in one process: the storage statements of
// the server's runs (a thread made, the run created, claimed, its `chat` graph streamed with the
// server's SQLite checkpointer, the state read, the run settled: as `graph-runner.ts` and
// `RunService.create` do, without HTTP and tracing) on two sets of files, one run at a time,
// alternating in rounds: checkpoints as SQLite runs them by default (the connection whose commit
// takes the log past 1,000 pages copies it back, on the event loop) against the server's worker
// thread (`wal-checkpoints.ts`). Per run: the event loop's time (the wall time of a run, one at a
// time: CPU and waits for the disk alike) and the process's CPU (the worker's included).
//
//   node --import tsx bench/agent/wal-checkpoints.ts [--rounds 9] [--runs 400]

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
import { settleThread } from '../../plugins/receivers/agent_api/internal/storage/settle-thread.ts';
import { openSqliteStorage } from '../../plugins/receivers/agent_api/internal/storage/sqlite.ts';
import type { RunRecord, Storage, Thread } from '../../plugins/receivers/agent_api/internal/storage/storage.ts';
import { backgroundCheckpoints } from '../../plugins/receivers/agent_api/internal/storage/wal-checkpoints.ts';

delete process.env.OPENAI_API_KEY;

const { values: args } = parseArgs({
  options: { rounds: { type: 'string', default: '9' }, runs: { type: 'string', default: '400' } },
});
const rounds = Number(args.rounds);
const runs = Number(args.runs);

installRandomPool();
installCallbackManagerCopy();
installRunWithConfig();

type Variant = 'inline' | 'worker';

interface Files {
  storage: Storage;
  checkpoints: SqliteCheckpointDatabase;
  graph: {
    stream(input: unknown, options: unknown): Promise<AsyncIterable<unknown>>;
    getState(config: unknown): Promise<unknown>;
  };
}

function open(dir: string, variant: Variant): Files {
  const attach = backgroundCheckpoints.attach;
  // SQLite's default: no worker, each connection checkpoints past 1,000 pages.
  if (variant === 'inline') backgroundCheckpoints.attach = () => () => {};
  try {
    const storage = openSqliteStorage(join(dir, 'agent.sqlite'));
    const checkpoints = new SqliteCheckpointDatabase(join(dir, 'checkpoints.sqlite'));
    const graph = (
      chatGraph as unknown as { withConfig(config: object): Files['graph'] & { checkpointer: unknown } }
    ).withConfig({});
    graph.checkpointer = checkpoints.saver;
    return { storage, checkpoints, graph };
  } finally {
    backgroundCheckpoints.attach = attach;
  }
}

const input = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };

async function oneRun({ storage, graph }: Files): Promise<void> {
  const now = new Date().toISOString();
  const threadId = randomUUID();
  const thread: Thread = {
    thread_id: threadId,
    created_at: now,
    updated_at: now,
    metadata: { owner: 'bench' },
    status: 'idle',
    config: {},
    values: null,
    interrupts: null,
  };
  await storage.threads.insert(thread);
  const run: RunRecord = {
    run_id: randomUUID(),
    thread_id: threadId,
    assistant_id: 'chat',
    created_at: now,
    updated_at: now,
    status: 'pending',
    metadata: {},
    kwargs: {
      input,
      command: null,
      config: { configurable: { thread_id: threadId }, metadata: {} },
      context: null,
      stream_mode: ['values'],
      interrupt_before: null,
      interrupt_after: null,
      webhook: null,
      feedback_keys: null,
      temporary: false,
      subgraphs: false,
      resumable: false,
    },
    multitask_strategy: 'reject',
    error: null,
    attempt: 0,
    temporary: false,
  };
  await storage.transaction(async (tx) => {
    const current = (await tx.threads.get(threadId))!;
    await tx.runs.insert(run);
    await tx.runs.inflight(threadId);
    await tx.threads.update({ ...current, status: 'busy', updated_at: now });
  });
  const claimed = await storage.runs.claimNext('bench', 60_000, new Date().toISOString(), new Set());
  if (claimed?.run_id !== run.run_id) throw new Error('claimed another run');
  const config = { configurable: { thread_id: threadId }, metadata: { run_id: run.run_id, thread_id: threadId } };
  for await (const chunk of await graph.stream(input, { ...config, streamMode: ['values'], runId: run.run_id }))
    void chunk;
  const snapshot = (await graph.getState({ configurable: { thread_id: threadId, checkpoint_ns: '' } })) as {
    values: Thread['values'];
  };
  await storage.transaction(async (tx) => {
    const read = (await tx.threads.get(threadId)) ?? null;
    const current = (await tx.runs.get(run.run_id))!;
    await tx.runs.update({ ...current, status: 'success', updated_at: new Date().toISOString() });
    await settleThread(tx, threadId, { values: snapshot.values, interrupts: null }, read);
  });
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

const dirs = { inline: mkdtempSync(join(tmpdir(), 'wal-inline-')), worker: mkdtempSync(join(tmpdir(), 'wal-worker-')) };
const files = { inline: open(dirs.inline, 'inline'), worker: open(dirs.worker, 'worker') };
const results: Record<Variant, { wall: number[]; cpu: number[] }> = {
  inline: { wall: [], cpu: [] },
  worker: { wall: [], cpu: [] },
};
try {
  // Warm-up, both ways: V8 settles, and each set of files is past its first log.
  for (const variant of ['inline', 'worker'] as const) for (let i = 0; i < 600; i++) await oneRun(files[variant]);
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? (['inline', 'worker'] as const) : (['worker', 'inline'] as const)) {
      const wallStart = performance.now();
      const cpuStart = cpuMs();
      for (let i = 0; i < runs; i++) await oneRun(files[variant]);
      results[variant].wall.push((performance.now() - wallStart) / runs);
      results[variant].cpu.push((cpuMs() - cpuStart) / runs);
    }
  }
} finally {
  for (const variant of ['inline', 'worker'] as const) {
    await files[variant].storage.close();
    await files[variant].checkpoints.close();
    rmSync(dirs[variant], { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const cpu = cpus()[0]?.model ?? 'unknown';
console.log(
  `${cpus().length} cores (${cpu}), node ${process.version}, ${new Date().toISOString()}, load average ${loadavg()[0]!.toFixed(1)}`,
);
console.log(`${rounds} rounds of ${runs} runs each way, ms per run (median; every round)`);
for (const variant of ['inline', 'worker'] as const) {
  const { wall, cpu: used } = results[variant];
  console.log(
    `${variant.padEnd(7)} event loop ${median(wall).toFixed(3)} (${wall.map((v) => v.toFixed(2)).join(' ')})  ` +
      `process CPU ${median(used).toFixed(3)} (${used.map((v) => v.toFixed(2)).join(' ')})`,
  );
}
