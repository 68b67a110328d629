// Crons through `@langchain/langgraph-sdk` against real servers whose cron clock the test moves
// (no waiting for minutes): create, read, update, search, count and delete; bad input; the runs a
// tick starts (ordinary runs, on a new thread or the cron's thread); the missed-tick rule; a
// restart while a tick is due (one SQLite file, two server lifetimes); two servers sharing one
// SQLite file; and the `crons:*` events of a custom auth handler. The one real-time check (a
// `* * * * *` cron fires within 65 s) is in crons-realtime.test.ts.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { validateAgainst, Sink, eventually, nopHost, nopSettings, spawnGroup } from 'tracepipe/testing';
import type { AgentApiConfig } from './config.ts';
import { configSchema } from './config.ts';
import type { Clock } from './internal/crons/schedule.ts';
import { AgentApiReceiver } from './receiver.ts';
import { asCron, asObject, messagesOf } from './testing/types.ts';
import type { ErrorBody } from './testing/types.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = resolve(here, '../../..');
const EXAMPLES = join(repoRoot, 'examples/graphs/langgraph.json');
const CRONS_AUTH = join(here, 'testdata/auth/langgraph-crons.json');
const MINUTE = 60_000;

class FakeClock implements Clock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  /** Moves to `iso` (or by `ms`). */
  set(iso: string): void {
    this.t = Date.parse(iso);
  }
}

interface CronServer {
  receiver: AgentApiReceiver;
  url: string;
  client: Client;
  dataDir: string;
  stop(keepData?: boolean): Promise<void>;
}

async function startServer(
  clock: Clock,
  options: { dataDir?: string; config?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<CronServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'agent-api-crons-'));
  const config = { langgraph_config: EXAMPLES, data_dir: dataDir, port: 0, workers: 2, ...options.config };
  const errors = validateAgainst(configSchema, config, 'agent_api');
  if (errors.length > 0) throw new Error(errors.join('\n'));
  const host = nopHost({ resolvePath: (path: string) => resolve(repoRoot, path) });
  const receiver = new AgentApiReceiver(
    nopSettings('receiver', 'agent_api', host),
    config as unknown as AgentApiConfig,
    new Sink<'spans'>(),
    { clock },
  );
  await receiver.start();
  const url = `http://127.0.0.1:${receiver.port}`;
  return {
    receiver,
    url,
    client: new Client({
      apiUrl: url,
      apiKey: null,
      callerOptions: { maxRetries: 0 },
      defaultHeaders: options.headers,
    }),
    dataDir,
    async stop(keepData = false) {
      await receiver.shutdown(Date.now() + 5000);
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function post(url: string, path: string, body: unknown, method = 'POST') {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json().catch(() => null)) as ErrorBody };
}

/** What the second server (testdata/cron-instance.ts) sends its parent process. */
type FromInstance = { type: 'ready'; port: number } | { type: 'ticked'; runs: string[] };

const hello = { messages: [{ role: 'user', content: 'hello from cron' }] };

describe('agent_api crons through the SDK', () => {
  const clock = new FakeClock(Date.parse('2030-01-01T10:00:30Z'));
  let server: CronServer;
  let client: Client;
  before(async () => {
    server = await startServer(clock);
    client = server.client;
  });
  after(() => server.stop());

  it('/info reports crons', async () => {
    const info = (await (await fetch(`${server.url}/info`)).json()) as { flags: { crons: boolean } };
    assert.equal(info.flags.crons, true);
  });

  it('creates, reads, updates, searches, counts and deletes crons', async () => {
    const cron = asCron(
      await client.crons.create('agent', {
        schedule: '*/5 * * * *',
        input: hello,
        metadata: { suite: 'crud' },
        onRunCompleted: 'keep',
      }),
    );
    assert.match(cron.cron_id, /^[0-9a-f-]{36}$/);
    assert.equal(cron.thread_id, null);
    assert.equal(cron.on_run_completed, 'keep');
    assert.equal(cron.schedule, '*/5 * * * *');
    assert.equal(cron.timezone, null);
    assert.equal(cron.enabled, true);
    assert.equal(cron.end_time, null);
    assert.equal(cron.next_run_date, '2030-01-01T10:05:00.000+00:00');
    assert.deepEqual(cron.metadata, { suite: 'crud' });
    assert.deepEqual(cron.payload.input, hello);
    const payloadConfig = asObject(cron.payload.config, 'payload.config');
    assert.equal(asObject(payloadConfig.configurable, 'payload.config.configurable').cron_id, cron.cron_id);
    const system = await client.assistants.get('agent').catch(() => undefined);
    assert.equal(cron.assistant_id, system?.assistant_id ?? cron.assistant_id);
    assert.equal('auth' in cron, false);

    const read = await fetch(`${server.url}/runs/crons/${cron.cron_id}`).then((r) => r.json());
    assert.deepEqual(read, cron);

    const thread = await client.threads.create();
    const threadCron = asCron(
      await client.crons.createForThread(thread.thread_id, 'agent', {
        schedule: '0 12 * * 1',
        input: hello,
        metadata: { suite: 'crud' },
      }),
    );
    assert.equal(threadCron.thread_id, thread.thread_id);
    assert.equal(threadCron.on_run_completed, null);
    assert.equal(threadCron.next_run_date, '2030-01-07T12:00:00.000+00:00'); // the next Monday

    assert.equal(await client.crons.count({ assistantId: 'agent' }), 2);
    assert.equal(await client.crons.count({ threadId: thread.thread_id }), 1);
    const all = await client.crons.search({
      assistantId: cron.assistant_id,
      sortBy: 'next_run_date',
      sortOrder: 'asc',
    });
    assert.deepEqual(
      all.map((c) => c.cron_id),
      [cron.cron_id, threadCron.cron_id],
    );
    const selected = await client.crons.search({ threadId: thread.thread_id, select: ['cron_id', 'schedule'] });
    assert.deepEqual(selected, [{ cron_id: threadCron.cron_id, schedule: '0 12 * * 1' }]);
    const page = await fetch(`${server.url}/runs/crons/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ limit: 1 }),
    });
    assert.equal(page.headers.get('x-pagination-total'), '2');
    assert.equal(page.headers.get('x-pagination-next'), '1');

    // Update: disable, change the schedule (next_run_date recomputed), merge metadata, set an end.
    const updated = await client.crons.update(cron.cron_id, {
      schedule: '0 * * * *',
      enabled: false,
      metadata: { extra: 1 },
      endTime: '2030-02-01T00:00:00Z',
    });
    assert.equal(updated.enabled, false);
    assert.equal(updated.schedule, '0 * * * *');
    assert.equal(updated.next_run_date, '2030-01-01T11:00:00.000+00:00');
    assert.deepEqual(updated.metadata, { suite: 'crud', extra: 1 });
    assert.equal(updated.end_time, '2030-02-01T00:00:00.000+00:00');
    assert.deepEqual(updated.payload.input, hello);
    assert.equal(await client.crons.count({ assistantId: 'agent' }), 2);
    const enabledOnly = await client.crons.search({ enabled: true, assistantId: 'agent' });
    assert.deepEqual(
      enabledOnly.map((c) => c.cron_id),
      [threadCron.cron_id],
    );
    const cleared = await client.crons.update(cron.cron_id, { endTime: null as unknown as string });
    assert.equal(cleared.end_time, null);

    await client.crons.delete(cron.cron_id);
    await client.crons.delete(threadCron.cron_id);
    assert.equal(await client.crons.count({ assistantId: 'agent' }), 0);
    await assert.rejects(client.crons.delete(cron.cron_id), /HTTP 404/);
  });

  it('answers bad input with 422 or 404 naming the problem', async () => {
    const bad = await post(server.url, '/runs/crons', { assistant_id: 'agent', schedule: 'every minute' });
    assert.equal(bad.status, 422);
    assert.match(bad.body.message, /Invalid cron schedule 'every minute'/);
    const sixFields = await post(server.url, '/runs/crons', { assistant_id: 'agent', schedule: '* * * * * *' });
    assert.equal(sixFields.status, 422);
    assert.match(sixFields.body.message, /5-field/);
    const outOfRange = await post(server.url, '/runs/crons', { assistant_id: 'agent', schedule: '61 * * * *' });
    assert.equal(outOfRange.status, 422);
    const zone = await post(server.url, '/runs/crons', {
      assistant_id: 'agent',
      schedule: '0 9 * * *',
      timezone: 'Mars/Base',
    });
    assert.equal(zone.status, 422);
    assert.match(zone.body.message, /Invalid timezone 'Mars\/Base'/);
    const missing = await post(server.url, '/runs/crons', { assistant_id: 'agent' });
    assert.equal(missing.status, 422);
    assert.match(missing.body.message, /body\.schedule: is required/);
    const types = await post(server.url, '/runs/crons', {
      assistant_id: 'agent',
      schedule: '* * * * *',
      enabled: 'yes',
      input: 3,
    });
    assert.equal(types.status, 422);
    assert.match(types.body.message, /body\.enabled|body\.input/);
    const unknownAssistant = await post(server.url, '/runs/crons', { assistant_id: 'nope', schedule: '* * * * *' });
    assert.equal(unknownAssistant.status, 404);
    assert.match(unknownAssistant.body.message, /No assistant found for 'nope'/);
    const unknownThread = await post(server.url, `/threads/${crypto.randomUUID()}/runs/crons`, {
      assistant_id: 'agent',
      schedule: '* * * * *',
    });
    assert.equal(unknownThread.status, 404);
    assert.match(unknownThread.body.message, /Thread with ID .* not found/);
    const badId = await post(server.url, '/runs/crons/not-a-uuid', { enabled: false }, 'PATCH');
    assert.equal(badId.status, 422);
    assert.match(badId.body.message, /params\.cron_id/);
    const unknownCron = await post(server.url, `/runs/crons/${crypto.randomUUID()}`, { enabled: false }, 'PATCH');
    assert.equal(unknownCron.status, 404);
    const created = await client.crons.create('agent', { schedule: '* * * * *' });
    const empty = await post(server.url, `/runs/crons/${created.cron_id}`, {}, 'PATCH');
    assert.equal(empty.status, 422);
    assert.match(empty.body.message, /cannot be empty/);
    const badSort = await post(server.url, '/runs/crons/search', { sort_by: 'schedule' });
    assert.equal(badSort.status, 422);
    assert.match(badSort.body.message, /body\.sort_by: must be one of/);
    await client.crons.delete(created.cron_id);
  });

  it('a due tick starts one ordinary run on a new thread, kept or deleted as on_run_completed says', async () => {
    clock.set('2030-01-01T10:00:30Z');
    const kept = await client.crons.create('agent', {
      schedule: '* * * * *',
      input: hello,
      metadata: { suite: 'fire' },
      onRunCompleted: 'keep',
    });
    const dropped = await client.crons.create('agent', {
      schedule: '* * * * *',
      input: hello,
      onRunCompleted: 'delete',
    });
    assert.deepEqual(await server.receiver.crons.tick(), [], 'nothing is due before 10:01');
    clock.set('2030-01-01T10:01:00.200Z');
    const started = await server.receiver.crons.tick();
    assert.equal(started.length, 2);
    assert.deepEqual(await server.receiver.crons.tick(), [], 'a tick fires once');
    const keptRun = started.find((run) => run.metadata.cron_id === kept.cron_id)!;
    const droppedRun = started.find((run) => run.metadata.cron_id === dropped.cron_id)!;
    assert.equal(keptRun.metadata.suite, 'fire');
    assert.equal(keptRun.kwargs.config.configurable.cron_id, kept.cron_id);
    // An ordinary run: joined through the SDK, its thread found by the cron id.
    const values = await client.runs.join(keptRun.thread_id, keptRun.run_id);
    assert.equal(messagesOf(values).at(-1)?.type, 'ai');
    const threads = await client.threads.search({ metadata: { cron_id: kept.cron_id } });
    assert.deepEqual(
      threads.map((t) => t.thread_id),
      [keptRun.thread_id],
    );
    assert.equal((await client.runs.get(keptRun.thread_id, keptRun.run_id)).status, 'success');
    // The deleted kind's thread goes when its run ends.
    await eventually(async () => (await client.threads.get(droppedRun.thread_id).catch(() => null)) === null, {
      message: 'the temporary thread is deleted',
    });
    const after = asCron(await fetch(`${server.url}/runs/crons/${kept.cron_id}`).then((r) => r.json()));
    assert.equal(after.next_run_date, '2030-01-01T10:02:00.000+00:00');
    await client.crons.delete(kept.cron_id);
    await client.crons.delete(dropped.cron_id);
  });

  it('a thread cron runs on its thread; disabled and ended crons start nothing', async () => {
    clock.set('2030-01-02T08:00:00Z');
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, 'agent', {
      schedule: '*/10 * * * *',
      input: hello,
    });
    const disabled = await client.crons.create('agent', { schedule: '*/10 * * * *', enabled: false });
    const ended = await client.crons.create('agent', { schedule: '*/10 * * * *' });
    await client.crons.update(ended.cron_id, { endTime: '2030-01-02T08:05:00Z' });
    clock.set('2030-01-02T08:10:01Z');
    const started = await server.receiver.crons.tick();
    assert.deepEqual(
      started.map((run) => run.metadata.cron_id),
      [cron.cron_id],
    );
    assert.equal(started[0]!.thread_id, thread.thread_id);
    await client.runs.join(thread.thread_id, started[0]!.run_id);
    clock.set('2030-01-02T08:20:00Z');
    const second = await server.receiver.crons.tick();
    assert.equal(second.length, 1);
    await client.runs.join(thread.thread_id, second[0]!.run_id);
    const runs = await client.runs.list(thread.thread_id);
    assert.equal(runs.length, 2);
    const state = await client.threads.getState(thread.thread_id);
    assert.equal(messagesOf(state.values).length, 4, 'both ticks ran on the same thread');
    // Deleting the thread deletes its cron.
    await client.threads.delete(thread.thread_id);
    await assert.rejects(client.crons.update(cron.cron_id, { enabled: false }), /HTTP 404/);
    await client.crons.delete(disabled.cron_id);
    await client.crons.delete(ended.cron_id);
  });

  it('missed ticks are not made up: one run, then the schedule continues from now', async () => {
    clock.set('2030-01-03T00:00:30Z');
    const cron = await client.crons.create('agent', { schedule: '*/15 * * * *', input: hello, onRunCompleted: 'keep' });
    clock.set('2030-01-03T03:07:00Z'); // 12 ticks were due meanwhile
    const started = await server.receiver.crons.tick();
    assert.equal(started.length, 1);
    const read = asCron(await fetch(`${server.url}/runs/crons/${cron.cron_id}`).then((r) => r.json()));
    assert.equal(read.next_run_date, '2030-01-03T03:15:00.000+00:00');
    await client.crons.delete(cron.cron_id);
  });

  it('a tick whose run cannot start is logged and skipped to the next time', async () => {
    clock.set('2030-01-04T00:00:30Z');
    const thread = await client.threads.create();
    // reject: a run in progress on the thread refuses the tick's run.
    const cron = await client.crons.createForThread(thread.thread_id, 'sleep', {
      schedule: '* * * * *',
      input: { delay_ms: 10 },
      multitaskStrategy: 'reject',
    });
    await client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 1500 } });
    clock.set('2030-01-04T00:01:00Z');
    assert.deepEqual(await server.receiver.crons.tick(), []);
    const read = asCron(await fetch(`${server.url}/runs/crons/${cron.cron_id}`).then((r) => r.json()));
    assert.equal(read.next_run_date, '2030-01-04T00:02:00.000+00:00');
    await client.crons.delete(cron.cron_id);
  });
});

describe('agent_api crons across restarts and instances', () => {
  it('a tick due while the server is down fires exactly once after the restart', async () => {
    const clock = new FakeClock(Date.parse('2030-02-01T09:59:10Z'));
    const first = await startServer(clock);
    const cron = await first.client.crons.create('agent', {
      schedule: '0 10 * * *',
      input: hello,
      onRunCompleted: 'keep',
    });
    await first.stop(true);
    clock.set('2030-02-01T10:00:00.500Z');
    // The restarted server's scheduler fires at start; a manual tick racing it must not fire again.
    const second = await startServer(clock, { dataDir: first.dataDir });
    await second.receiver.crons.tick();
    const threads = await eventually(
      async () => {
        const found = await second.client.threads.search({ metadata: { cron_id: cron.cron_id } });
        return found.length > 0 && found;
      },
      { message: 'the due tick ran' },
    );
    await second.stop(true);
    const third = await startServer(clock, { dataDir: first.dataDir });
    await third.receiver.crons.tick();
    const again = await third.client.threads.search({ metadata: { cron_id: cron.cron_id } });
    assert.equal(threads.length, 1);
    assert.equal(again.length, 1, 'no second run after another restart');
    const read = asCron(await fetch(`${third.url}/runs/crons/${cron.cron_id}`).then((r) => r.json()));
    assert.equal(read.next_run_date, '2030-02-02T10:00:00.000+00:00');
    await third.stop();
  });

  it('two servers on one SQLite file start each tick once', async () => {
    // The second server is another process, as deployments run them (SQLite's lock waits are
    // synchronous, so two servers in one process would wait on each other).
    const clock = new FakeClock(Date.parse('2030-03-01T00:00:10Z'));
    const a = await startServer(clock);
    const instance = spawnGroup(
      process.execPath,
      ['--import', 'tsx', join(here, 'testdata/cron-instance.ts'), a.dataDir, String(clock.t)],
      { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
    );
    const { child } = instance;
    const reply = <Type extends FromInstance['type']>(type: Type) =>
      new Promise<Extract<FromInstance, { type: Type }>>((resolveReply, reject) => {
        const onMessage = (message: unknown) => {
          const answer = message as FromInstance;
          if (answer.type !== type) return;
          child.off('message', onMessage);
          resolveReply(answer as Extract<FromInstance, { type: Type }>);
        };
        child.on('message', onMessage);
        child.once('exit', (code) => reject(new Error(`the second server exited (${code})`)));
      });
    try {
      await reply('ready');
      const crons = [];
      for (let i = 0; i < 3; i++)
        crons.push(
          await a.client.crons.create('agent', { schedule: '* * * * *', input: hello, onRunCompleted: 'keep' }),
        );
      for (let minute = 1; minute <= 4; minute++) {
        clock.t = Date.parse('2030-03-01T00:00:00Z') + minute * MINUTE + 100;
        const fromB = reply('ticked');
        child.send({ type: 'tick', t: clock.t });
        const [startedA, startedB] = await Promise.all([a.receiver.crons.tick(), fromB]);
        assert.equal(startedA.length + startedB.runs.length, 3, `minute ${minute}: each cron fired once`);
      }
      for (const cron of crons) {
        const threads = await eventually(
          async () => {
            const found = await a.client.threads.search({ metadata: { cron_id: cron.cron_id } });
            return found.length === 4 && found;
          },
          { message: 'four runs per cron' },
        );
        assert.equal(threads.length, 4);
      }
    } finally {
      // It shuts down by its own deadline (5 s) when asked; its group is killed if it does not.
      if (child.connected) child.send({ type: 'stop' });
      const kill = setTimeout(() => void instance.stop('SIGKILL'), 30_000);
      await instance.exited;
      clearTimeout(kill);
      await a.stop();
    }
  });
});

describe('agent_api crons under a custom auth handler', () => {
  const clock = new FakeClock(Date.parse('2030-04-01T00:00:10Z'));
  let server: CronServer;
  let alice: Client;
  let bob: Client;
  before(async () => {
    server = await startServer(clock, { config: { langgraph_config: CRONS_AUTH } });
    const as = (name: string) =>
      new Client({
        apiUrl: server.url,
        apiKey: null,
        callerOptions: { maxRetries: 0 },
        defaultHeaders: { Authorization: `Bearer ${name}` },
      });
    alice = as('alice');
    bob = as('bob');
  });
  after(() => server.stop());

  it('crons belong to their creator; runs they start are the creator’s', async () => {
    const unauthenticated = await post(server.url, '/runs/crons/search', {});
    assert.equal(unauthenticated.status, 401);
    const cron = asCron(
      await alice.crons.create('agent', {
        schedule: '* * * * *',
        input: hello,
        onRunCompleted: 'keep',
      }),
    );
    assert.equal(cron.metadata.owner, 'alice');
    assert.equal(cron.user_id, 'alice');
    assert.equal(await alice.crons.count({}), 1);
    assert.equal(await bob.crons.count({}), 0);
    assert.deepEqual(await bob.crons.search({}), []);
    await assert.rejects(bob.crons.update(cron.cron_id, { enabled: false }), /HTTP 404/);
    await assert.rejects(bob.crons.delete(cron.cron_id), /HTTP 404/);
    const bobGet = await fetch(`${server.url}/runs/crons/${cron.cron_id}`, {
      headers: { Authorization: 'Bearer bob' },
    });
    assert.equal(bobGet.status, 404);
    // Bob cannot put a cron on Alice's thread.
    const thread = await alice.threads.create();
    await assert.rejects(bob.crons.createForThread(thread.thread_id, 'agent', { schedule: '* * * * *' }), /HTTP 404/);

    clock.set('2030-04-01T00:01:00.100Z');
    const [run] = await server.receiver.crons.tick();
    assert.ok(run);
    assert.equal(run.kwargs.config.configurable.langgraph_auth_user_id, 'alice');
    const values = await alice.runs.join(run.thread_id, run.run_id);
    assert.equal(messagesOf(values).at(-1)?.type, 'ai');
    assert.equal((await alice.threads.search({ metadata: { cron_id: cron.cron_id } })).length, 1);
    assert.equal((await bob.threads.search({ metadata: { cron_id: cron.cron_id } })).length, 0);
    await assert.rejects(bob.runs.get(run.thread_id, run.run_id), /HTTP 404/);
    await alice.crons.delete(cron.cron_id);
  });
});
