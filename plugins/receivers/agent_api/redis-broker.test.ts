// The Redis side of several server instances: two brokers and two signal endpoints on one Redis
// (as two instances would have) — events appended on one are replayed after `Last-Event-ID` and
// followed live on the other, a cancel sent through one stops the run on the other, wake-ups reach
// the other instance, and a killed connection mid-stream either resumes or fails clearly; then one
// real server on Redis end to end, and one whose Redis is unreachable (503, runs still execute).
// Needs a server: TEST_REDIS_URI (default redis://127.0.0.1:6379); skipped when none answers.
// Every test uses a key prefix of its own and deletes its keys.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { BrokerUnavailableError, metadataEvent } from './internal/runs/broker.ts';
import type { StreamEvent } from './internal/runs/broker.ts';
import { RunCoordinator } from './internal/runs/coordinator.ts';
import type { GraphRunner } from './internal/runs/graph-runner.ts';
import { RedisBus } from './internal/runs/redis.ts';
import { RedisStreamBroker } from './internal/runs/redis-broker.ts';
import { RedisRunSignals } from './internal/runs/redis-signals.ts';
import type { CancelAction } from './internal/runs/redis-signals.ts';
import type { WorkerPool } from './internal/runs/worker-pool.ts';
import type { Storage } from './internal/storage/storage.ts';
import { deleteKeys, killRedisClients, redisAvailable } from './testing/redis.ts';
import { readFrames } from './testing/sse-client.ts';
import { startTestServer } from './testing/test-server.ts';
import { eventually } from 'tracepipe/testing';

const REDIS_URI = process.env.TEST_REDIS_URI ?? 'redis://127.0.0.1:6379';
const silent = pino({ level: 'silent' });

const available = await redisAvailable(REDIS_URI);

/** Two instances' worth of connections on one prefix; `cleanup` closes them and deletes the keys. */
function instances(count = 2, pollMs = 100) {
  const prefix = `tracepipe-test:${randomUUID()}:`;
  const buses = Array.from({ length: count }, () => new RedisBus({ uri: REDIS_URI, prefix, logger: silent }));
  for (const bus of buses) bus.connect();
  const brokers = buses.map((bus) => new RedisStreamBroker(bus, { maxEvents: 100, logger: silent, pollMs }));
  return {
    prefix,
    buses,
    brokers,
    async ready() {
      await until(() => buses.every((bus) => bus.ready()));
    },
    async cleanup() {
      for (const broker of brokers) await broker.close(Date.now() + 1000);
      await Promise.all(buses.map((bus) => bus.close()));
      await deleteKeys(REDIS_URI, prefix);
    },
  };
}

/** Kills the server side of an instance's connections (as a Redis failover or network cut would). */
async function killConnections(bus: RedisBus): Promise<number> {
  return (await killRedisClients(REDIS_URI, (client) => client.name?.includes(bus.instanceId) ?? false)).length;
}

async function within<T>(promise: Promise<T>, ms = 3000, what = 'a result'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Waits for a condition of the Redis state or the runs, `ms` at most (a bound on a hang). */
const until = async (check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> => {
  await eventually(check, { timeoutMs: ms, message: 'the condition awaited' });
};

describe('Redis stream broker across instances', { skip: available ? false : `no Redis at ${REDIS_URI}` }, () => {
  it('replays after Last-Event-ID on another instance, then follows live until the end marker', async () => {
    const env = instances();
    try {
      await env.ready();
      const [a, b] = env.brokers;
      const run = randomUUID();
      a.open(run);
      a.publish(run, 'metadata', { run_id: run });
      a.publish(run, 'values', { n: 1 });
      a.publish(run, 'values', { n: 2 });
      const following = b.subscribe(run, 0)[Symbol.asyncIterator]();
      // Replayed: the events after id 0, with the ids the in-process broker would give.
      assert.deepEqual((await within(following.next())).value, { id: 1, event: 'values', data: { n: 1 } });
      assert.deepEqual((await within(following.next())).value, { id: 2, event: 'values', data: { n: 2 } });
      // Live: appended on A while B waits.
      const next = following.next();
      a.publish(run, 'custom', 'three');
      assert.deepEqual((await within(next)).value, { id: 3, event: 'custom', data: 'three' });
      a.finish(run);
      assert.equal((await within(following.next())).done, true, 'the end marker ends the stream');
      // A late joiner from the start gets everything; one past the end returns at once.
      assert.deepEqual(
        (await within(collect(b.subscribe(run, -1)))).map((event) => event.id),
        [0, 1, 2, 3],
      );
      assert.deepEqual(await within(collect(b.subscribe(run, 3))), []);
      assert.deepEqual(await within(collect(b.subscribe(run, Number.MAX_SAFE_INTEGER))), []);
      assert.deepEqual(await b.last(run, 'values'), { id: 2, event: 'values', data: { n: 2 } });
      assert.ok((await env.buses[1].command.pttl(`${env.prefix}run:{${run}}:events`)) > 0, 'an ended log expires');
    } finally {
      await env.cleanup();
    }
  });

  it('waits on an opened run with no events yet, ends readers of a discarded run, returns at once on an unknown one', async () => {
    const env = instances();
    try {
      await env.ready();
      const [a, b] = env.brokers;
      assert.deepEqual(await within(collect(b.subscribe(randomUUID(), -1))), [], 'no log: nothing to wait for');
      const run = randomUUID();
      a.open(run);
      await until(async () => (await env.buses[1].command.exists(`${env.prefix}run:{${run}}:open`)) === 1);
      const reading = collect(b.subscribe(run, -1));
      await new Promise((resolve) => setTimeout(resolve, 150));
      a.publish(run, 'metadata', { run_id: run });
      a.discard(run);
      assert.deepEqual(
        (await within(reading)).map((event) => event.event),
        ['metadata'],
      );
      assert.equal(await b.wasDiscarded(run), true);
      assert.equal(await b.wasDiscarded(randomUUID()), false);
    } finally {
      await env.cleanup();
    }
  });

  it('a wait for the end of a run executing elsewhere reads its last entry once and ends when the end is announced', async () => {
    // No poll within the test: only announcements make the waiting instance read.
    const env = instances(2, 600_000);
    try {
      await env.ready();
      const [a, b] = env.brokers;
      const command = env.buses[1].command;
      const multi = command.multi.bind(command);
      let reads = 0;
      command.multi = ((...args: Parameters<typeof multi>) => {
        reads++;
        return multi(...args);
      }) as typeof command.multi;
      assert.equal(
        await within(b.untilEnded(randomUUID()).then(() => 'ended')),
        'ended',
        'no log: nothing to wait for',
      );
      assert.equal(reads, 1);

      const run = randomUUID();
      a.open(run, { event: 'metadata', data: { run_id: run } });
      await until(async () => (await command.exists(`${env.prefix}run:{${run}}:open`)) === 1);
      let ended = false;
      const waiting = b.untilEnded(run).then(() => (ended = true));
      await until(() => reads === 2);
      for (let n = 0; n < 20; n++) a.publish(run, 'values', { n });
      await until(async () => (await command.xlen(`${env.prefix}run:{${run}}:events`)) === 21);
      assert.equal(ended, false);
      assert.equal(reads, 2, 'the events cost the wait no reads');
      a.finish(run);
      await within(waiting);
      assert.equal(reads, 2, 'the announced end needs no read');

      const discarded = randomUUID();
      a.open(discarded);
      await until(async () => (await command.exists(`${env.prefix}run:{${discarded}}:open`)) === 1);
      const waitingDiscarded = b.untilEnded(discarded);
      a.discard(discarded);
      await within(waitingDiscarded);
    } finally {
      await env.cleanup();
    }
  });

  it("announces a thread's new runs to the thread's watchers on every instance, and only to them", async () => {
    const env = instances();
    try {
      await env.ready();
      const [a, b] = env.brokers;
      const thread = randomUUID();
      const heard: string[] = [];
      const elsewhere: string[] = [];
      const stop = await b.watchThread(thread, (runId) => heard.push(runId));
      const stopOther = await b.watchThread(randomUUID(), (runId) => elsewhere.push(runId));
      a.announce(thread, 'run-1');
      a.announce(thread, 'run-2');
      await until(() => heard.length === 2);
      assert.deepEqual(heard, ['run-1', 'run-2']);
      stop();
      a.announce(thread, 'run-3');
      // A watcher on another thread hears nothing; one that stopped hears nothing more.
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(heard, ['run-1', 'run-2']);
      assert.deepEqual(elsewhere, []);
      stopOther();
    } finally {
      await env.cleanup();
    }
  });

  it('puts the metadata first once: the creating instance appends it, the executing one adds none', async () => {
    const env = instances();
    try {
      await env.ready();
      const [a, b] = env.brokers;
      const run = randomUUID();
      // Created on A (its stream gets the metadata at once), executed on B.
      a.open(run, metadataEvent(run));
      const head = await within(b.subscribe(run, -1)[Symbol.asyncIterator]().next());
      assert.deepEqual(head.value, { id: 0, event: 'metadata', data: { run_id: run, attempt: 1 } });
      b.open(run, metadataEvent(run));
      b.publish(run, 'values', { n: 1 });
      b.finish(run);
      // Reopened for a later execution: the stream continues after its end, with no second metadata.
      a.open(run, metadataEvent(run), { reopen: true });
      a.publish(run, 'values', { n: 2 });
      a.finish(run);
      const events = await within(collect(b.subscribe(run, -1)));
      assert.deepEqual(
        events.map((event) => event.event),
        ['metadata', 'values', 'values'],
      );
      // A log with no event yet (an opener that sent no first event) gets it from the next opener.
      const resumed = randomUUID();
      a.open(resumed);
      // As when a run is created on A and executed on B: A's open has reached Redis first.
      await until(async () => (await env.buses[1].command.exists(`${env.prefix}run:{${resumed}}:open`)) === 1);
      b.open(resumed, metadataEvent(resumed));
      b.finish(resumed);
      assert.deepEqual(
        (await within(collect(a.subscribe(resumed, -1)))).map((event) => [event.id, event.event]),
        [[0, 'metadata']],
      );
    } finally {
      await env.cleanup();
    }
  });

  it('yields what another instance appended, end marker included, between a reader’s empty read and its completeness check', async () => {
    const env = instances();
    try {
      await env.ready();
      const [a, b] = env.brokers;
      const run = randomUUID();
      b.open(run);
      await until(async () => (await env.buses[0].command.exists(`${env.prefix}run:{${run}}:open`)) === 1);
      // A's first read finds the stream empty; before A looks whether the run has ended, B writes the
      // run's only event and its end (which also clears the open marker).
      const command = env.buses[0].command;
      const xrange = command.xrange.bind(command) as (...args: unknown[]) => Promise<unknown>;
      let overtaken = false;
      Object.assign(command, {
        async xrange(...args: unknown[]) {
          const entries = await xrange(...args);
          if (!overtaken) {
            overtaken = true;
            b.publish(run, 'values', { n: 1 });
            b.finish(run);
            await until(async () => (await env.buses[1].command.xlen(`${env.prefix}run:{${run}}:events`)) === 2);
          }
          return entries;
        },
      });
      const events = await within(collect(a.subscribe(run, -1)));
      assert.equal(overtaken, true);
      assert.deepEqual(
        events.map((event) => [event.id, event.event]),
        [[0, 'values']],
      );
    } finally {
      await env.cleanup();
    }
  });

  it('keeps a run ended when its creator’s open reaches Redis after another instance executed it', async () => {
    const env = instances();
    try {
      await env.ready();
      const [a, b] = env.brokers;
      const run = randomUUID();
      // Created on A, whose open is still buffered while B takes the run, executes and ends it.
      b.open(run, metadataEvent(run), { reopen: true });
      b.publish(run, 'values', { n: 1 });
      b.finish(run);
      const key = `${env.prefix}run:{${run}}:events`;
      await until(async () => (await env.buses[0].command.xlen(key)) === 3);
      a.open(run, metadataEvent(run));
      // The late open neither appends an entry nor marks the ended log live: waits end (A's own wait
      // first writes what A has buffered, the open included), and readers read to the end.
      await within(a.untilEnded(run));
      await within(b.untilEnded(run));
      assert.deepEqual(
        (await within(collect(b.subscribe(run, -1)))).map((event) => event.event),
        ['metadata', 'values'],
      );
      assert.equal(await env.buses[1].command.exists(`${env.prefix}run:{${run}}:open`), 0);
      assert.equal(await env.buses[1].command.xlen(key), 3);
    } finally {
      await env.cleanup();
    }
  });

  it('continues a retried run after the events already sent', async () => {
    const env = instances();
    try {
      await env.ready();
      const [a, b] = env.brokers;
      const run = randomUUID();
      a.publish(run, 'metadata', { attempt: 1 });
      a.finish(run);
      const key = `${env.prefix}run:{${run}}:events`;
      await until(async () => (await env.buses[1].command.xlen(key)) === 2);
      // The retry runs on the other instance.
      b.open(run, undefined, { reopen: true });
      b.publish(run, 'metadata', { attempt: 2 });
      b.finish(run);
      const events = await within(collect(a.subscribe(run, -1)));
      assert.deepEqual(
        events.map((event) => [event.id, event.data]),
        [
          [0, { attempt: 1 }],
          [3, { attempt: 2 }],
        ],
      );
    } finally {
      await env.cleanup();
    }
  });

  it('follows a stream across killed connections without losing or repeating events', async () => {
    const env = instances();
    try {
      await env.ready();
      const [a, b] = env.brokers;
      const run = randomUUID();
      a.open(run);
      a.publish(run, 'metadata', {});
      const reading = collect(b.subscribe(run, -1));
      for (let n = 1; n <= 20; n++) {
        a.publish(run, 'values', { n });
        if (n === 5) assert.ok((await killConnections(env.buses[1])) >= 2, 'killed the reader instance connections');
        if (n === 12) assert.ok((await killConnections(env.buses[0])) >= 1, 'killed the writer instance connections');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      a.finish(run);
      const events = await within(reading, 8000, 'end of stream');
      assert.deepEqual(
        events.map((event) => event.id),
        Array.from({ length: 21 }, (_, index) => index),
      );
    } finally {
      await env.cleanup();
    }
  });

  it('keeps appends buffered while Redis is unreachable and refuses reads with BrokerUnavailableError', async () => {
    const bus = new RedisBus({ uri: 'redis://127.0.0.1:1', prefix: 'unreachable:', logger: silent });
    bus.connect();
    const broker = new RedisStreamBroker(bus, { maxEvents: 3, logger: silent, graceMs: 200 });
    const dropped: number[] = [];
    const bounded = new RedisStreamBroker(bus, {
      maxEvents: 2,
      logger: silent,
      onDrop: (_, count) => dropped.push(count),
    });
    try {
      assert.equal(broker.available(), false);
      broker.publish('r', 'metadata', {}); // does not throw: buffered
      for (let n = 0; n < 4; n++) bounded.publish('r', 'values', { n });
      assert.ok(dropped.length >= 1, 'the local buffer is bounded (oldest events dropped and counted)');
      await assert.rejects(collect(broker.subscribe('r', -1)), BrokerUnavailableError);
      await assert.rejects(broker.last('r', 'error'), BrokerUnavailableError);
    } finally {
      await broker.close(Date.now());
      await bounded.close(Date.now());
      await bus.close();
    }
  });
});

describe('Redis run signals across instances', { skip: available ? false : `no Redis at ${REDIS_URI}` }, () => {
  function fakeRunner(active: Set<string>) {
    const aborted: [string, CancelAction][] = [];
    return {
      aborted,
      abort(runId: string, action: CancelAction) {
        if (!active.has(runId)) return false;
        aborted.push([runId, action]);
        active.delete(runId);
        return true;
      },
      activeIds: () => new Set(active),
    };
  }

  it('a cancel sent through B stops the run executing on A, with its action', async () => {
    const env = instances();
    const activeOnA = new Set<string>();
    const runnerA = fakeRunner(activeOnA);
    const runnerB = fakeRunner(new Set());
    const signalsA = new RedisRunSignals(env.buses[0], {
      runner: runnerA,
      wakeWorkers: () => undefined,
      logger: silent,
    });
    const signalsB = new RedisRunSignals(env.buses[1], {
      runner: runnerB,
      wakeWorkers: () => undefined,
      logger: silent,
    });
    try {
      await env.ready();
      await signalsA.start();
      await signalsB.start();
      const run = randomUUID();
      activeOnA.add(run);
      signalsA.started(run);
      await until(async () => (await env.buses[1].command.exists(`${env.prefix}run:{${run}}:owner`)) === 1);
      // Through the coordinator, as the cancel route reaches it: not local, so it goes to A.
      const coordinatorB = new RunCoordinator(
        {} as Storage,
        env.brokers[1],
        runnerB as unknown as GraphRunner,
        () => ({ notify: () => undefined }) as unknown as WorkerPool,
        signalsB,
      );
      assert.equal(await coordinatorB.abort(run, 'rollback'), true, 'an instance holds the run');
      await until(() => runnerA.aborted.length === 1);
      assert.deepEqual(runnerA.aborted, [[run, 'rollback']]);
      // Nobody holds this one: the caller settles it itself.
      assert.equal(await coordinatorB.abort(randomUUID(), 'interrupt'), false);
    } finally {
      await signalsA.stop();
      await signalsB.stop();
      await env.cleanup();
    }
  });

  it('a cancel whose message was missed is picked up from its key', async () => {
    const env = instances();
    const activeOnA = new Set<string>();
    const runnerA = fakeRunner(activeOnA);
    const signalsA = new RedisRunSignals(env.buses[0], {
      runner: runnerA,
      wakeWorkers: () => undefined,
      logger: silent,
      pollMs: 100,
    });
    const signalsB = new RedisRunSignals(env.buses[1], {
      runner: fakeRunner(new Set()),
      wakeWorkers: () => undefined,
      logger: silent,
    });
    try {
      await env.ready();
      // A is not listening yet (the message is lost), and the run has not started there.
      const run = randomUUID();
      assert.equal(await signalsB.cancel(run, 'interrupt'), false);
      await signalsA.start();
      activeOnA.add(run);
      await until(() => runnerA.aborted.length === 1);
      assert.deepEqual(runnerA.aborted, [[run, 'interrupt']]);
    } finally {
      await signalsA.stop();
      await signalsB.stop();
      await env.cleanup();
    }
  });

  it('a wake-up from A reaches idle workers on B (and A does not wake itself twice)', async () => {
    const env = instances();
    let wokenA = 0;
    let wokenB = 0;
    const signalsA = new RedisRunSignals(env.buses[0], {
      runner: fakeRunner(new Set()),
      wakeWorkers: () => wokenA++,
      logger: silent,
    });
    const signalsB = new RedisRunSignals(env.buses[1], {
      runner: fakeRunner(new Set()),
      wakeWorkers: () => wokenB++,
      logger: silent,
    });
    try {
      await env.ready();
      await signalsA.start();
      await signalsB.start();
      signalsA.wake();
      await until(() => wokenB === 1);
      assert.equal(wokenA, 0);
    } finally {
      await signalsA.stop();
      await signalsB.stop();
      await env.cleanup();
    }
  });
});

describe('agent server on Redis', { skip: available ? false : `no Redis at ${REDIS_URI}` }, () => {
  const prefix = `tracepipe-test:${randomUUID()}:`;
  let server: Awaited<ReturnType<typeof startTestServer>>;
  before(async () => {
    server = await startTestServer({ broker: { redis_uri: REDIS_URI, key_prefix: prefix } });
  });
  after(async () => {
    await server?.stop();
    await deleteKeys(REDIS_URI, prefix);
  });

  it('streams a run, replays it after Last-Event-ID, and joins its result', async () => {
    const thread = await server.client.threads.create();
    const events: { event: string; id?: string }[] = [];
    let runId = '';
    for await (const chunk of server.client.runs.stream(thread.thread_id, 'chat', {
      input: { messages: [{ role: 'user', content: 'hello' }] },
      streamMode: ['values'],
    })) {
      events.push({ event: chunk.event });
      if (chunk.event === 'metadata') runId = (chunk.data as { run_id: string }).run_id;
    }
    assert.equal(events[0].event, 'metadata');
    assert.ok(events.length >= 2);
    const response = await fetch(`${server.url}/threads/${thread.thread_id}/runs/${runId}/stream`, {
      headers: { 'last-event-id': '0' },
    });
    const frames = await readFrames(response);
    assert.deepEqual(
      frames.map((frame) => frame.id),
      events.slice(1).map((_, index) => String(index + 1)),
    );
    const result = (await server.client.runs.join(thread.thread_id, runId)) as { messages?: unknown[] };
    assert.ok(Array.isArray(result.messages));
    const admin = new Redis(REDIS_URI);
    try {
      assert.equal(await admin.exists(`${prefix}run:{${runId}}:events`), 1, 'the events went through Redis');
    } finally {
      admin.disconnect();
    }
  });

  it('cancels a running run', async () => {
    const thread = await server.client.threads.create();
    const run = await server.client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 30_000, steps: 300 } });
    await until(async () => (await server.client.runs.get(thread.thread_id, run.run_id)).status === 'running', 5000);
    await server.client.runs.cancel(thread.thread_id, run.run_id, true);
    assert.equal((await server.client.runs.get(thread.thread_id, run.run_id)).status, 'interrupted');
  });
});

describe('agent server with Redis unreachable', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  before(async () => {
    server = await startTestServer({ broker: { redis_uri: 'redis://127.0.0.1:1', key_prefix: 'unreachable:' } });
  });
  after(async () => {
    await server?.stop({ deadlineMs: 2000 });
  });

  it('answers streams with 503 and Retry-After, and still executes runs', async () => {
    const thread = await server.client.threads.create();
    const refused = await fetch(`${server.url}/threads/${thread.thread_id}/runs/stream`, {
      method: 'POST',
      // The error as coded JSON (docs/errors.md) rather than the SDK's plain text.
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ assistant_id: 'chat', input: { messages: [{ role: 'user', content: 'hi' }] } }),
    });
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.match(((await refused.json()) as { message: string }).message, /Redis/);
    assert.deepEqual(await server.client.runs.list(thread.thread_id), [], 'a refused stream creates no run');
    const run = await server.client.runs.create(thread.thread_id, 'chat', {
      input: { messages: [{ role: 'user', content: 'hi' }] },
    });
    await until(async () => (await server.client.runs.get(thread.thread_id, run.run_id)).status === 'success', 8000);
    const joined = await fetch(`${server.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`);
    assert.equal(joined.status, 503);
  });
});
