// Runs through the real SDK against a real server: background runs and join, wait, streaming in
// every mode, threadless runs, cancel, replay after Last-Event-ID on the wire, client disconnects,
// the thread stream, and the spans every run sends into the pipeline. Failures, enqueue, rollback
// and live joins are in test/agent-api/{runs,streaming}.acceptance.test.ts.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Client, Message } from '@langchain/langgraph-sdk';
import { ThrottleError } from 'tracepipe/plugin';
import { newGate } from './testing/gates.ts';
import { parseFrames, readFirstFrames, readFrames } from './testing/sse-client.ts';
import { useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import type { JsonObject, MessagesValues } from './testing/types.ts';
import { asObject, asObjects, kwargsOf, messagesOf } from './testing/types.ts';
import { runReaches } from './testing/waits.ts';

const hello = (content = 'hello') => ({ messages: [{ role: 'user', content }] });

async function collect(stream: AsyncIterable<{ event: string; data: unknown }>) {
  const events: { event: string; data: unknown }[] = [];
  for await (const chunk of stream) events.push(chunk);
  return events;
}

/** The `[chunk, metadata]` pair of a `messages` (tuple) event. */
function tuple(data: unknown): [JsonObject, JsonObject] {
  assert.ok(Array.isArray(data) && data.length === 2, 'messages-tuple is [chunk, metadata]');
  return [asObject(data[0], 'chunk'), asObject(data[1], 'metadata')];
}

describe('agent_api runs', () => {
  let server: TestServer;
  let client: Client;
  useTestServer((started) => {
    server = started;
    client = started.client;
  });

  it('a background run is pending when created, joins to success, and leaves the messages in the thread state', async () => {
    const thread = await client.threads.create();
    assert.equal(thread.status, 'idle');
    // A run held at a gate keeps the next one in the queue until the gate opens.
    const gate = newGate();
    const blocker = await client.runs.create(thread.thread_id, 'gate', { input: { gate: gate.name } });
    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: hello(),
      multitaskStrategy: 'enqueue',
      metadata: { purpose: 'test' },
    });
    assert.equal(run.status, 'pending');
    assert.equal(run.multitask_strategy, 'enqueue');
    const kwargs = kwargsOf(run);
    assert.deepEqual(kwargs.input, hello());
    assert.deepEqual(kwargs.stream_mode, ['values']);
    assert.equal(kwargs.temporary, false);
    assert.equal(kwargs.webhook, null);
    assert.equal(kwargs.config.configurable.thread_id, thread.thread_id);
    assert.equal(kwargs.config.configurable.run_id, run.run_id);
    assert.equal(kwargs.config.configurable.graph_id, 'agent');
    assert.equal(kwargs.config.configurable.checkpoint_id, null);
    assert.equal(asObject(kwargs.config.metadata).purpose, 'test');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'busy');

    gate.open();
    const joined = messagesOf(await client.runs.join(thread.thread_id, run.run_id));
    // The gate run answered first on this thread; then the human message and the agent's answer.
    assert.equal(joined.length, 3);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'success');
    assert.equal((await client.runs.get(thread.thread_id, blocker.run_id)).status, 'success');

    const state = await client.threads.getState<MessagesValues>(thread.thread_id);
    const [human, ai] = state.values.messages.slice(-2) as [Message, Message];
    for (const message of [human, ai]) {
      for (const key of ['type', 'content', 'additional_kwargs', 'response_metadata', 'id'])
        assert.ok(key in message, `message field ${key}`);
    }
    assert.equal(human.type, 'human');
    assert.equal(human.content, 'hello');
    assert.equal(ai.type, 'ai');
    assert.equal(ai.content, 'You said: hello');
    assert.ok(ai.type === 'ai');
    assert.deepEqual(ai.tool_calls, []);
    assert.deepEqual(ai.invalid_tool_calls, []);
    assert.equal(typeof ai.usage_metadata?.total_tokens, 'number');
    assert.deepEqual(state.next, []);
    assert.equal(typeof state.checkpoint.checkpoint_id, 'string');
    assert.equal(state.metadata?.run_id, run.run_id);
    const after = await client.threads.get<MessagesValues>(thread.thread_id);
    assert.equal(after.status, 'idle');
    assert.equal(after.values.messages.length, 3);

    const listed = await client.runs.list(thread.thread_id);
    assert.deepEqual(
      listed.map((r) => r.run_id),
      [blocker.run_id, run.run_id],
    );
    assert.deepEqual(
      (await client.runs.list(thread.thread_id, { status: 'success', limit: 1, offset: 1 })).map((r) => r.run_id),
      [run.run_id],
    );
  });

  it('wait returns the final values, on a thread and threadless, and reports Content-Location', async () => {
    const thread = await client.threads.create();
    let created: { run_id: string; thread_id?: string } | undefined;
    const values = await client.runs.wait(thread.thread_id, 'agent', {
      input: hello('wait'),
      onRunCreated: (meta) => (created = meta),
    });
    assert.equal(messagesOf(values).at(-1)?.content, 'You said: wait');
    assert.equal(created?.thread_id, thread.thread_id);
    const threadless = await client.runs.wait(null, 'agent', { input: hello('no thread') });
    assert.equal(messagesOf(threadless).at(-1)?.content, 'You said: no thread');
  });

  it("a run's metadata names its own graph and assistant, not those of the thread's previous run", async () => {
    const thread = await client.threads.create({ metadata: { owner: 'team-a' } });
    await client.runs.wait(thread.thread_id, 'agent', { input: hello('first') });
    const agent = (await client.threads.get(thread.thread_id)).metadata;
    const second = await client.runs.create(thread.thread_id, 'chat', { input: hello('second') });
    await client.runs.join(thread.thread_id, second.run_id);
    const chat = await client.assistants.search({ graphId: 'chat', limit: 1 });
    const stored = await client.runs.get(thread.thread_id, second.run_id);
    for (const metadata of [second.metadata, stored.metadata]) {
      assert.equal(metadata?.graph_id, 'chat');
      assert.equal(metadata?.assistant_id, chat[0]!.assistant_id);
      assert.equal(metadata?.owner, 'team-a');
    }
    assert.notEqual(agent?.assistant_id, chat[0]!.assistant_id);
    const thread2 = (await client.threads.get(thread.thread_id)).metadata;
    assert.equal(thread2?.graph_id, 'chat');
    assert.deepEqual(
      (await client.runs.list(thread.thread_id))
        .filter((run) => run.metadata?.graph_id === 'chat')
        .map((run) => run.run_id),
      [second.run_id],
    );
  });

  it('streams every mode, several at once, and subgraph namespaces', async () => {
    const thread = await client.threads.create();
    const events = await collect(
      client.runs.stream(thread.thread_id, 'tools', {
        input: hello('weather in Paris'),
        streamMode: ['values', 'updates', 'messages-tuple', 'debug', 'tasks', 'checkpoints', 'custom', 'events'],
      }),
    );
    const names = new Set(events.map((e) => e.event));
    assert.equal(events[0].event, 'metadata');
    assert.equal(typeof asObject(events[0].data).run_id, 'string');
    for (const name of ['values', 'updates', 'messages', 'debug', 'tasks', 'checkpoints', 'events'])
      assert.ok(names.has(name), `missing ${name}`);
    const updates = events.filter((e) => e.event === 'updates').map((e) => Object.keys(asObject(e.data))[0]);
    assert.deepEqual(updates, ['agent', 'tools', 'agent']);
    const tokens = events.filter((e) => e.event === 'messages');
    for (const token of tokens) assert.equal(typeof tuple(token.data)[1].langgraph_node, 'string');
    assert.ok(tokens.filter((t) => tuple(t.data)[1].langgraph_node === 'agent').length > 2, 'token by token');
    const lastValues = events.filter((e) => e.event === 'values').at(-1)!.data;
    assert.equal(messagesOf(lastValues).at(-1)?.content, "The tool says: It's always sunny in Paris.");
    const checkpoint = asObject(events.find((e) => e.event === 'checkpoints')!.data);
    assert.ok('values' in checkpoint && 'next' in checkpoint && 'metadata' in checkpoint);
    const kinds = new Set(events.filter((e) => e.event === 'events').map((e) => asObject(e.data).event));
    for (const kind of [
      'on_chain_start',
      'on_chain_end',
      'on_chat_model_start',
      'on_chat_model_stream',
      'on_chat_model_end',
    ])
      assert.ok(kinds.has(kind), kind);
    assert.ok(events.filter((e) => e.event === 'debug').some((e) => asObject(e.data).type === 'checkpoint'));
    assert.ok(events.filter((e) => e.event === 'tasks').some((e) => asObject(e.data).name === 'tools'));
  });

  it('streams the legacy messages mode as metadata, partial and complete events', async () => {
    const events = await collect(client.runs.stream(null, 'agent', { input: hello('legacy'), streamMode: 'messages' }));
    const names = events.map((e) => e.event);
    assert.ok(names.includes('messages/metadata'));
    const partials = events.filter((e) => e.event === 'messages/partial');
    assert.ok(partials.length > 1);
    assert.equal(asObjects(partials.at(-1)!.data)[0]?.content, 'You said: legacy');
    const complete = events.filter((e) => e.event === 'messages/complete').flatMap((e) => asObjects(e.data));
    assert.ok(complete.some((m) => m.type === 'ai' && m.content === 'You said: legacy'));
  });

  it('streams custom events and subgraph namespaces', async () => {
    const custom = await collect(
      client.runs.stream(null, 'sleep', { input: { delay_ms: 30, steps: 3 }, streamMode: ['custom'] }),
    );
    assert.deepEqual(
      custom.filter((e) => e.event === 'custom').map((e) => asObject(e.data).step),
      [1, 2, 3],
    );
    const nested = await collect(
      client.runs.stream(null, 'subgraph', { input: hello('nested'), streamMode: ['updates'], streamSubgraphs: true }),
    );
    const namespaced = nested.filter((e) => e.event.startsWith('updates|research:'));
    assert.deepEqual(
      namespaced.map((e) => Object.keys(asObject(e.data))[0]),
      ['make_plan', 'write'],
    );
    assert.deepEqual(
      nested.filter((e) => e.event === 'updates').map((e) => Object.keys(asObject(e.data))[0]),
      ['research', 'review'],
    );
    const flat = await collect(
      client.runs.stream(null, 'subgraph', { input: hello('nested'), streamMode: ['updates'] }),
    );
    assert.ok(flat.every((e) => !e.event.includes('|')));
  });

  it('a threadless streamed run sends metadata first, with Content-Location, and leaves no thread behind', async () => {
    const before = await client.threads.count();
    const response = await fetch(`${server.url}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', input: hello('stateless'), stream_mode: ['values'] }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
    const location = response.headers.get('content-location')!;
    assert.match(location, /^\/runs\/[0-9a-f-]{36}$/);
    const frames = await readFrames(response);
    assert.equal(frames[0].event, 'metadata');
    assert.equal(frames[0].id, '0');
    assert.equal(asObject(frames[0].data).run_id, location.split('/')[2]);
    assert.equal(messagesOf(frames.at(-1)!.data).at(-1)?.content, 'You said: stateless');
    assert.deepEqual(
      frames.map((f) => f.id),
      frames.map((_, i) => String(i)),
    );
    assert.equal(await client.threads.count(), before);
  });

  it('a streamed run sends its metadata when it is created, before a worker starts it, and only once', async () => {
    // A run held at a gate keeps the streamed one pending (runs of a thread execute one at a time),
    // so no worker has taken it while its first frame arrives.
    const thread = await client.threads.create();
    const blocking = newGate();
    const blocker = await client.runs.create(thread.thread_id, 'gate', { input: { gate: blocking.name } });
    await blocking.reached;
    const streamed = newGate();
    const response = await fetch(`${server.url}/threads/${thread.thread_id}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        assistant_id: 'gate',
        input: { gate: streamed.name },
        stream_mode: ['custom'],
        multitask_strategy: 'enqueue',
      }),
    });
    const runId = response.headers.get('content-location')!.split('/').at(-1)!;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('\n\n')) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream ended before its first frame');
      text += decoder.decode(value, { stream: true });
    }
    const [first] = parseFrames(text.slice(0, text.indexOf('\n\n') + 2));
    assert.deepEqual(first, { event: 'metadata', data: { run_id: runId, attempt: 1 }, id: '0' });
    assert.equal((await client.runs.get(thread.thread_id, runId)).status, 'pending', 'no worker has taken it yet');
    // A join from the start sees the same head while the run waits.
    const joined = await readFirstFrames(
      await fetch(`${server.url}/threads/${thread.thread_id}/runs/${runId}/stream`),
      1,
    );
    assert.deepEqual(joined, [first]);

    streamed.open();
    blocking.open();
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const frames = parseFrames(text);
    assert.deepEqual(
      frames.map((f) => f.event),
      ['metadata', 'custom', 'custom'],
      'one metadata, then the run as the worker executes it',
    );
    assert.deepEqual(
      frames.map((f) => f.id),
      frames.map((_, i) => String(i)),
    );
    assert.equal((await client.runs.get(thread.thread_id, blocker.run_id)).status, 'success');
    assert.equal((await client.runs.get(thread.thread_id, runId)).status, 'success');
  });

  it('cancel interrupts a running run; with rollback a pending run is deleted', async () => {
    const thread = await client.threads.create();
    const gate = newGate();
    const run = await client.runs.create(thread.thread_id, 'gate', { input: { gate: gate.name } });
    await gate.reached;
    await client.runs.cancel(thread.thread_id, run.run_id, true);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'interrupted');
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');

    const delayed = await client.runs.create(thread.thread_id, 'agent', { input: hello(), afterSeconds: 60 });
    const response = await fetch(
      `${server.url}/threads/${thread.thread_id}/runs/${delayed.run_id}/cancel?action=rollback`,
      { method: 'POST' },
    );
    assert.equal(response.status, 202);
    await assert.rejects(client.runs.get(thread.thread_id, delayed.run_id), /HTTP 404/);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  it('joining a run stream replays what was missed after Last-Event-ID, then ends', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'sleep', {
      input: { delay_ms: 60, steps: 3 },
      streamMode: ['custom', 'values'],
    });
    await client.runs.join(thread.thread_id, run.run_id);
    const all = await readFrames(await fetch(`${server.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`));
    assert.equal(all[0].event, 'metadata');
    assert.deepEqual(
      all.map((f) => f.id),
      all.map((_, i) => String(i)),
    );
    const resumed = await readFrames(
      await fetch(`${server.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, {
        headers: { 'last-event-id': '2' },
      }),
    );
    assert.deepEqual(resumed, all.slice(3));
    const viaSdk = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '2' }));
    assert.deepEqual(
      viaSdk.map((e) => e.event),
      all.slice(3).map((f) => f.event),
    );
    const threadless = await readFrames(
      await fetch(`${server.url}/runs/${run.run_id}/stream`, { headers: { 'last-event-id': String(all.length - 2) } }),
    );
    assert.deepEqual(threadless, all.slice(-1));
  });

  it('joining a run stream with stream_mode sends only those modes, with metadata, and keeps the event ids', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'sleep', {
      input: { delay_ms: 20, steps: 2 },
      streamMode: ['custom', 'values'],
    });
    await client.runs.join(thread.thread_id, run.run_id);
    const all = await readFrames(await fetch(`${server.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`));
    assert.ok(all.some((f) => f.event === 'custom') && all.some((f) => f.event === 'values'));

    const viaSdk = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: 'values' }));
    assert.deepEqual(
      viaSdk.map((e) => e.event),
      all.filter((f) => f.event !== 'custom').map((f) => f.event),
    );
    const several = await readFrames(
      await fetch(`${server.url}/runs/${run.run_id}/stream?stream_mode=custom&stream_mode=values`),
    );
    assert.deepEqual(several, all);
    const customOnly = await readFrames(
      await fetch(`${server.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream?stream_mode=custom`),
    );
    assert.deepEqual(
      customOnly,
      all.filter((f) => f.event === 'metadata' || f.event === 'custom'),
    );
  });

  it('a client that disconnects cancels its run with on_disconnect=cancel, and not by default', async () => {
    // Two runs held at gates, streamed to two clients: one with on_disconnect=cancel, one without.
    const stream = async (gateName: string, onDisconnect: 'cancel' | undefined, signal: AbortSignal) => {
      const thread = await client.threads.create();
      const response = await fetch(`${server.url}/threads/${thread.thread_id}/runs/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          assistant_id: 'gate',
          input: { gate: gateName },
          stream_mode: ['custom'],
          ...(onDisconnect ? { on_disconnect: onDisconnect } : {}),
        }),
        signal,
      });
      const runId = response.headers.get('content-location')!.split('/').at(-1)!;
      const first = await readFirstFrames(response, 2);
      assert.deepEqual(
        first.map((f) => f.event),
        ['metadata', 'custom'],
      );
      return { threadId: thread.thread_id, runId };
    };
    const cancelGate = newGate();
    const keptGate = newGate();
    const cancelClient = new AbortController();
    const keptClient = new AbortController();
    const cancelled = await stream(cancelGate.name, 'cancel', cancelClient.signal);
    const kept = await stream(keptGate.name, undefined, keptClient.signal);
    // The default client leaves first; once the server has stopped the other client's run, it has
    // seen both leave, and the default client's run must still be going.
    keptClient.abort();
    cancelClient.abort();
    await runReaches(client, cancelled.threadId, cancelled.runId, 'interrupted');
    assert.equal((await client.runs.get(kept.threadId, kept.runId)).status, 'running');
    keptGate.open();
    await runReaches(client, kept.threadId, kept.runId, 'success');
  });

  it('every run sends its spans into the pipeline with the run and thread ids', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', { input: hello('traced') });
    await client.runs.join(thread.thread_id, run.run_id);
    await server.sink.waitFor(() =>
      server.sink.batches.some((b) =>
        JSON.stringify(b.data, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)).includes(run.run_id),
      ),
    );
    const batch = server.sink.batches.find((b) =>
      JSON.stringify(b.data, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)).includes(run.run_id),
    )!;
    assert.equal(batch.context.project, 'default');
    assert.ok(
      JSON.stringify(batch.data, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)).includes(thread.thread_id),
    );
  });

  it('a run succeeds even when the pipeline refuses its spans; the failure is counted', async () => {
    server.sink.fail = () => new ThrottleError('pipeline full', 1000);
    try {
      const values = await client.runs.wait(null, 'agent', { input: hello('untraced') });
      assert.equal(messagesOf(values).at(-1)?.content, 'You said: untraced');
      const metric = await server.metrics.getSingleMetric('tracepipe_agent_tracing_failures_total')!.get();
      assert.ok(metric.values.reduce((sum, v) => sum + v.value, 0) >= 1);
    } finally {
      server.sink.fail = undefined;
    }
  });

  it('deleting a thread stops its running run first', async () => {
    const thread = await client.threads.create();
    const gate = newGate();
    const run = await client.runs.create(thread.thread_id, 'gate', { input: { gate: gate.name } });
    await gate.reached;
    await client.threads.delete(thread.thread_id);
    await assert.rejects(client.runs.get(thread.thread_id, run.run_id), /HTTP 404/);
    await assert.rejects(client.threads.get(thread.thread_id), /HTTP 404/);
  });

  it("a thread's stream follows every run on the thread, and resumes after Last-Event-ID", async () => {
    const thread = await client.threads.create();
    const controller = new AbortController();
    const seen: { event: string; data: unknown; id?: string }[] = [];
    const reading = (async () => {
      try {
        for await (const chunk of client.threads.joinStream(thread.thread_id, {
          signal: controller.signal,
          streamMode: ['values'],
        } as never)) {
          seen.push(chunk as never);
          if (
            seen.filter((e) => e.event === 'metadata').length === 2 &&
            seen.at(-1)!.event === 'values' &&
            messagesOf(seen.at(-1)!.data).length === 4
          )
            controller.abort();
        }
      } catch (error) {
        if (!controller.signal.aborted) throw error;
      }
    })();
    await client.runs.wait(thread.thread_id, 'agent', { input: hello('first') });
    await client.runs.wait(thread.thread_id, 'agent', { input: hello('second') });
    await reading;
    assert.equal(seen.filter((e) => e.event === 'metadata').length, 2);
    assert.ok(seen.every((e) => e.event === 'metadata' || e.event === 'values'));
    const [first, second] = await client.runs.list(thread.thread_id);
    // After the first run's metadata: the rest of the first run (two values events), then the second.
    const resumed = await readFirstFrames(
      await fetch(`${server.url}/threads/${thread.thread_id}/stream`, {
        headers: { 'last-event-id': `${first.run_id}:0` },
      }),
      4,
    );
    assert.deepEqual(
      resumed.map((f) => f.id),
      [`${first.run_id}:1`, `${first.run_id}:2`, `${second.run_id}:0`, `${second.run_id}:1`],
    );
    assert.equal(resumed[2].event, 'metadata');
  });
});
