// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// the Agent Deployment API as plugins/receivers/agent_api/README.md describes it and the reference
// server's (LangGraph.js's `langgraph-api`) wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).
//
// Runs: wait, list, threadless runs, cancel, multitask strategies, interrupts and commands, failures, concurrency.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { join } from 'node:path';
import type { Client } from '@langchain/langgraph-sdk';
import { eventually } from '../../src/testkit/eventually.ts';
import { collect, failureOf, request, requestStream } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import { newGate } from '../../plugins/receivers/agent_api/testing/gates.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import { runReaches } from '../../plugins/receivers/agent_api/testing/waits.ts';
import { anyString, assertMatches } from '../support/match-object.ts';
import {
  asObject,
  asObjects,
  firstActionRequest,
  asString,
  messagesOf,
  runErrorOf,
} from '../../plugins/receivers/agent_api/testing/types.ts';
import type { Json } from './support.ts';
import { hello, lastAiText, useSharedServer, UUID } from './support.ts';

let server: TestServer;
let client: Client;
let url: string;
useSharedServer((started) => {
  server = started;
  client = started.client;
  url = started.url;
});

describe('runs', () => {
  test('wait returns the final values; the thread goes back to idle', async () => {
    const thread = await client.threads.create();
    const values = await client.runs.wait(thread.thread_id, 'chat', { input: hello() });
    assert.equal(messagesOf(values).length, 2);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
    const raw = await request(url, 'POST', `/threads/${thread.thread_id}/runs/wait`, {
      body: { assistant_id: 'chat', input: hello() },
    });
    assert.equal(raw.status, 200);
    assert.equal(messagesOf(raw.json).length, 4);
    assert.match(
      raw.headers.get('content-location') ?? '',
      new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]{36}$`),
    );
  });

  test('list, filter by status, page with limit/offset; get; delete (204) then 404', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'chat', { input: hello('a') });
    await client.runs.join(thread.thread_id, first.run_id);
    const second = await client.runs.create(thread.thread_id, 'chat', { input: hello('b') });
    await client.runs.join(thread.thread_id, second.run_id);
    const listed = await client.runs.list(thread.thread_id);
    assert.deepEqual(new Set(listed.map((r) => r.run_id)), new Set([first.run_id, second.run_id]));
    assert.equal((await client.runs.list(thread.thread_id, { status: 'success' })).length, 2);
    assert.equal((await client.runs.list(thread.thread_id, { status: 'pending' })).length, 0);
    assert.equal((await client.runs.list(thread.thread_id, { limit: 1, offset: 1 })).length, 1);
    assert.equal((await client.runs.list(thread.thread_id, { limit: 1 })).length, 1);

    const deleted = await request(url, 'DELETE', `/threads/${thread.thread_id}/runs/${first.run_id}`);
    assert.equal(deleted.status, 204);
    const gone = await failureOf(() => client.runs.get(thread.thread_id, first.run_id));
    assert.match(gone, /^HTTP 404: .*not found/i);
    assert.match(await failureOf(() => client.runs.delete(thread.thread_id, first.run_id)), /^HTTP 404/);
    assert.match(await failureOf(() => client.runs.list(crypto.randomUUID())), /^HTTP 404/);
  });

  test('threadless wait and stream; onRunCreated fires from Content-Location', async () => {
    const values = (await client.runs.wait(null, 'chat', { input: hello('solo') })) as Json;
    assert.equal(lastAiText(values), 'You said: solo');

    const announced: Json[] = [];
    const parts = await collect(
      client.runs.stream(null, 'chat', {
        input: hello('solo'),
        streamMode: 'values',
        onRunCreated: (meta) => announced.push(meta),
      }),
    );
    assert.equal(parts[0]!.event, 'metadata');
    assert.equal(announced.length, 1);
    assert.equal(announced[0]!.run_id, (parts[0]!.data as Json).run_id);
    assert.equal(lastAiText(parts[parts.length - 1]!.data as Json), 'You said: solo');

    const raw = await requestStream(url, 'POST', '/runs/stream', { body: { assistant_id: 'chat', input: hello() } });
    assert.equal(raw.status, 200);
    assert.match(raw.headers.get('content-location') ?? '', /^\/runs\/[0-9a-f-]{36}$/);

    const created = await request(url, 'POST', '/runs', { body: { assistant_id: 'chat', input: hello() } });
    assert.equal(created.status, 200);
    const run = created.json as Json;
    assert.equal(created.headers.get('content-location'), `/runs/${run.run_id}`);
  });

  test('onRunCreated on thread runs: create, stream and wait', async () => {
    const thread = await client.threads.create();
    for (const call of ['create', 'stream', 'wait'] as const) {
      const announced: Json[] = [];
      const onRunCreated = (meta: Json) => announced.push(meta);
      if (call === 'create')
        await client.runs.create(thread.thread_id, 'chat', {
          input: hello(),
          onRunCreated,
          multitaskStrategy: 'enqueue',
        });
      if (call === 'stream')
        await collect(
          client.runs.stream(thread.thread_id, 'chat', { input: hello(), onRunCreated, multitaskStrategy: 'enqueue' }),
        );
      if (call === 'wait')
        await client.runs.wait(thread.thread_id, 'chat', {
          input: hello(),
          onRunCreated,
          multitaskStrategy: 'enqueue',
        });
      assert.equal(announced.length, 1, `${call} announces the run once`);
      assert.equal(announced[0]!.thread_id, thread.thread_id);
      assert.match(asString(announced[0]!.run_id), UUID);
    }
  });

  test('cancel: wait=1 → 204 and `interrupted`; without waiting → 202', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'gate', { input: { gate: newGate().name } });
    await runReaches(client, thread.thread_id, run.run_id, 'running');
    const waited = await request(
      url,
      'POST',
      `/threads/${thread.thread_id}/runs/${run.run_id}/cancel?wait=1&action=interrupt`,
    );
    assert.equal(waited.status, 204);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'interrupted');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');

    const second = await client.runs.create(thread.thread_id, 'gate', { input: { gate: newGate().name } });
    const accepted = await request(url, 'POST', `/threads/${thread.thread_id}/runs/${second.run_id}/cancel`);
    assert.equal(accepted.status, 202);
    await runReaches(client, thread.thread_id, second.run_id, 'interrupted');
    assert.match(await failureOf(() => client.runs.cancel(thread.thread_id, crypto.randomUUID())), /^HTTP 404/);
  });

  test('multitask reject: a second run on a busy thread is a 409 with a readable message', async () => {
    const thread = await client.threads.create();
    const gate = newGate();
    const first = await client.runs.create(thread.thread_id, 'gate', { input: { gate: gate.name } });
    const rejected = await failureOf(() => client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 1 } }));
    assert.match(rejected, /^HTTP 409: .*[a-z]{4,}/i);
    const rejectedStream = await request(url, 'POST', `/threads/${thread.thread_id}/runs/stream`, {
      body: { assistant_id: 'sleep', input: {} },
    });
    assert.equal(rejectedStream.status, 409);
    gate.open();
    await client.runs.join(thread.thread_id, first.run_id);
    assert.equal((await client.runs.get(thread.thread_id, first.run_id)).status, 'success');
    assert.equal((await client.runs.list(thread.thread_id)).length, 1, 'no run was created for the rejected requests');
  });

  test('multitask interrupt: the first run ends `interrupted`, the second succeeds', async () => {
    const thread = await client.threads.create();
    const gate = newGate();
    const first = await client.runs.create(thread.thread_id, 'gate', { input: { gate: gate.name } });
    await gate.reached;
    const second = await client.runs.create(thread.thread_id, 'sleep', {
      input: { delay_ms: 10 },
      multitaskStrategy: 'interrupt',
    });
    await client.runs.join(thread.thread_id, second.run_id);
    assert.equal((await client.runs.get(thread.thread_id, first.run_id)).status, 'interrupted');
    assert.equal((await client.runs.get(thread.thread_id, second.run_id)).status, 'success');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('multitask rollback: the first run is deleted with its state, the second succeeds', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'chat', { input: hello('first'), afterSeconds: 30 });
    const second = await client.runs.create(thread.thread_id, 'chat', {
      input: hello('second'),
      multitaskStrategy: 'rollback',
    });
    await client.runs.join(thread.thread_id, second.run_id);
    assert.match(await failureOf(() => client.runs.get(thread.thread_id, first.run_id)), /^HTTP 404/);
    const messages = (await client.threads.getState<Json>(thread.thread_id)).values.messages as Json[];
    assert.deepEqual(
      messages.map((m) => m.content),
      ['second', 'You said: second'],
    );

    // A running first run is rolled back too, with the checkpoints it had written, and so is a
    // run queued behind it.
    const opened = () => {
      const gate = newGate();
      gate.open();
      return { gate: gate.name };
    };
    const thread2 = await client.threads.create();
    await client.runs.wait(thread2.thread_id, 'gate', { input: opened() });
    const historyBefore = await client.threads.getHistory(thread2.thread_id, { limit: 100 });
    const held = newGate();
    const running = await client.runs.create(thread2.thread_id, 'gate', { input: { gate: held.name } });
    await held.reached;
    const queued = await client.runs.create(thread2.thread_id, 'gate', {
      input: { gate: held.name },
      multitaskStrategy: 'enqueue',
    });
    const replacement = await client.runs.create(thread2.thread_id, 'gate', {
      input: opened(),
      multitaskStrategy: 'rollback',
    });
    await client.runs.join(thread2.thread_id, replacement.run_id);
    assert.match(await failureOf(() => client.runs.get(thread2.thread_id, running.run_id)), /^HTTP 404/);
    assert.match(await failureOf(() => client.runs.get(thread2.thread_id, queued.run_id)), /^HTTP 404/);
    assert.equal((await client.runs.get(thread2.thread_id, replacement.run_id)).status, 'success');
    const historyAfter = await client.threads.getHistory<Json>(thread2.thread_id, { limit: 100 });
    assert.equal(historyAfter.length, historyBefore.length * 2, 'only the two finished runs left checkpoints');
    assert.ok(
      historyAfter.every((state) => state.values.gate !== held.name),
      'nothing of the rolled-back input remains',
    );
  });

  test('a client waiting on a run that is rolled back or cancelled gets an error, not values or null', async () => {
    for (const [strategy, expected] of [
      ['rollback', /RunDeleted/],
      ['interrupt', /RunCancelled/],
    ] as const) {
      const thread = await client.threads.create();
      const waiting = failureOf(() =>
        client.runs.wait(thread.thread_id, 'sleep', { input: { delay_ms: 5 }, afterSeconds: 30 }),
      );
      await eventually(async () => {
        const runs = await client.runs.list(thread.thread_id);
        assert.ok(runs.length === 1, `not yet: ${JSON.stringify(runs)}`);
        return runs;
      });
      const next = await client.runs.create(thread.thread_id, 'sleep', {
        input: { delay_ms: 5 },
        multitaskStrategy: strategy,
      });
      assert.match(await waiting, expected);
      await client.runs.join(thread.thread_id, next.run_id);
    }
    const thread = await client.threads.create();
    const gate = newGate();
    const waiting = failureOf(() => client.runs.wait(thread.thread_id, 'gate', { input: { gate: gate.name } }));
    await gate.reached;
    const [running] = await client.runs.list(thread.thread_id);
    assert.equal(running?.status, 'running');
    await client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 5 }, multitaskStrategy: 'rollback' });
    assert.match(await waiting, new RegExp(`RunDeleted: Run ${running.run_id}`));
  });

  test('multitask enqueue: both runs succeed, one after the other', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'chat', { input: hello('one') });
    const second = await client.runs.create(thread.thread_id, 'chat', {
      input: hello('two'),
      multitaskStrategy: 'enqueue',
    });
    await client.runs.join(thread.thread_id, second.run_id);
    assert.equal((await client.runs.get(thread.thread_id, first.run_id)).status, 'success');
    assert.equal((await client.runs.get(thread.thread_id, second.run_id)).status, 'success');
    const messages = (await client.threads.getState<Json>(thread.thread_id)).values.messages as Json[];
    assert.deepEqual(
      messages.map((m) => m.content),
      ['one', 'You said: one', 'two', 'You said: two'],
    );
  });

  test('interrupt_before pauses the thread (`interrupted`, next node); input null resumes', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello(), interruptBefore: ['call_model'] });
    assert.equal((await client.threads.get(thread.thread_id)).status, 'interrupted');
    const paused = await client.threads.getState<Json>(thread.thread_id);
    assert.deepEqual(paused.next, ['call_model']);
    assert.equal(paused.tasks.length, 1);
    assert.equal(paused.tasks[0]!.name, 'call_model');
    const resumed = (await client.runs.wait(thread.thread_id, 'chat', { input: null })) as Json;
    assert.equal(lastAiText(resumed), 'You said: hello');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('interrupt() inside a node: task interrupts in state, resumed with command', async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'interrupt', { input: hello('ship it'), streamMode: 'values' }),
    );
    const lastValues = parts.filter((p) => p.event === 'values').pop()!.data as Json;
    assert.ok(Array.isArray(lastValues.__interrupt__), 'the last values event carries __interrupt__');
    assert.equal(firstActionRequest(asObjects(lastValues.__interrupt__)[0]?.value).description, 'Approve this draft?');
    const thread1 = await client.threads.get(thread.thread_id);
    assert.equal(thread1.status, 'interrupted');
    const state = await client.threads.getState<Json>(thread.thread_id);
    assert.deepEqual(state.next, ['review']);
    assert.equal(state.tasks[0]!.name, 'review');
    assert.equal(
      asObject(firstActionRequest(state.tasks[0]!.interrupts[0]!.value).args).reply,
      'Draft answer to: ship it',
    );
    const taskInterrupts = Object.values(thread1.interrupts ?? {}).flat();
    assert.ok(
      taskInterrupts.some((i) => firstActionRequest(i.value).description === 'Approve this draft?'),
      'thread.interrupts lists the pending interrupt',
    );

    assertMatches(asObject(state).interrupts, [
      {
        value: {
          action_requests: [
            {
              name: 'send_reply',
              args: { reply: 'Draft answer to: ship it' },
              arguments: { reply: 'Draft answer to: ship it' },
              description: 'Approve this draft?',
            },
          ],
          review_configs: [{ action_name: 'send_reply', allowed_decisions: ['approve', 'edit', 'reject'] }],
        },
        id: anyString,
      },
    ]);

    // wait on a run that pauses answers what graph.invoke() does: the values and the interrupts.
    const other = await client.threads.create();
    const paused = asObject(await client.runs.wait(other.thread_id, 'interrupt', { input: hello('wait for me') }));
    assert.equal(messagesOf(paused)[0]?.content, 'wait for me');
    assert.equal(paused.draft, 'Draft answer to: wait for me');
    assertMatches(paused.__interrupt__, [
      {
        value: {
          action_requests: [
            {
              name: 'send_reply',
              args: { reply: 'Draft answer to: wait for me' },
              arguments: { reply: 'Draft answer to: wait for me' },
              description: 'Approve this draft?',
            },
          ],
          review_configs: [{ action_name: 'send_reply', allowed_decisions: ['approve', 'edit', 'reject'] }],
        },
        id: anyString,
      },
    ]);

    const resumed = (await client.runs.wait(thread.thread_id, 'interrupt', { command: { resume: 'approve' } })) as Json;
    assert.equal(lastAiText(resumed), 'Draft answer to: ship it');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('command update writes state before the run continues', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello() });
    await client.runs.wait(thread.thread_id, 'chat', {
      command: { update: { messages: [{ role: 'user', content: 'via command' }] }, goto: 'call_model' },
    });
    const messages = (await client.threads.getState<Json>(thread.thread_id)).values.messages as Json[];
    assert.deepEqual(
      messages.slice(-2).map((m) => m.content),
      ['via command', 'You said: via command'],
    );
  });

  test('a run that exceeds its recursion limit fails with GraphRecursionError; the thread is `error`', async () => {
    const thread = await client.threads.create();
    const failure = await failureOf(() =>
      client.runs.wait(thread.thread_id, 'tools', {
        input: hello('Weather in Paris?'),
        config: { recursion_limit: 1 },
      }),
    );
    assert.match(failure, /GraphRecursionError/);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'error');
    const [run] = await client.runs.list(thread.thread_id);
    assert.equal(run!.status, 'error');
  });

  test('a failing graph: wait raises, join reports, stream ends with an error event', async () => {
    assert.match(await failureOf(() => client.runs.wait(null, 'error', { input: {} })), /CustomError|Boo!/);

    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'error', { input: {}, streamMode: ['debug', 'events'] }),
    );
    const last = parts[parts.length - 1]!;
    assert.equal(last.event, 'error');
    assert.deepEqual(last.data, { error: 'CustomError', message: 'Boo!' });
    assert.equal((await client.threads.get(thread.thread_id)).status, 'error');
    const [failed] = await client.runs.list(thread.thread_id);
    assert.equal(failed?.status, 'error');
    assert.deepEqual(runErrorOf(await client.runs.join(thread.thread_id, failed.run_id)), {
      error: 'CustomError',
      message: 'Boo!',
    });
    assert.match(
      await failureOf(() => client.runs.wait(thread.thread_id, 'error', { input: { message: 'again' } })),
      /CustomError: again/,
    );

    const thread2 = await client.threads.create();
    const run = await client.runs.create(thread2.thread_id, 'error', { input: {} });
    await client.runs.join(thread2.thread_id, run.run_id).catch(() => undefined);
    assert.equal((await client.runs.get(thread2.thread_id, run.run_id)).status, 'error');
    const replay = await collect(client.runs.joinStream(thread2.thread_id, run.run_id));
    assert.equal(replay[replay.length - 1]!.event, 'error');
    assert.deepEqual(replay[replay.length - 1]!.data, { error: 'CustomError', message: 'Boo!' });
  });

  test('many runs at once (more than the workers): each thread gets its own answer', async () => {
    const threads = await Promise.all(Array.from({ length: 12 }, () => client.threads.create()));
    const streamed = await Promise.all(
      threads.map((thread, i) =>
        collect(client.runs.stream(thread.thread_id, 'chat', { input: hello(`stream ${i}`), streamMode: 'values' })),
      ),
    );
    streamed.forEach((parts, i) =>
      assert.equal(lastAiText(parts[parts.length - 1]!.data as Json), `You said: stream ${i}`),
    );
    const waited = await Promise.all(
      Array.from({ length: 12 }, (_, i) => client.runs.wait(null, 'chat', { input: hello(`wait ${i}`) })),
    );
    waited.forEach((values, i) => assert.equal(lastAiText(values as Json), `You said: wait ${i}`));
    for (const thread of threads) assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('a failing run does not harm a run alongside it', async () => {
    // A run held at a gate is in flight for as long as the other one takes to fail.
    const gate = newGate();
    const healthy = client.runs.wait(null, 'gate', { input: { gate: gate.name } });
    await gate.reached;
    assert.match(await failureOf(() => client.runs.wait(null, 'error', { input: {} })), /CustomError|Boo!/);
    gate.open();
    assert.equal(lastAiText(await healthy), `passed ${gate.name}`);
    assert.equal(lastAiText(await client.runs.wait(null, 'chat', { input: hello('fine') })), 'You said: fine');
  });
});
