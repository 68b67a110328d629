// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// the Agent Deployment API as plugins/receivers/agent_api/README.md describes it and the reference
// server's (LangGraph.js's `langgraph-api`) wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).
//
// Streaming: every stream mode, SSE framing on the wire, joins, thread streams, reconnects.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { connect, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { Client as SdkClient } from '@langchain/langgraph-sdk';
import type { Client, Run, StreamMode } from '@langchain/langgraph-sdk';
import { eventually } from '../../src/testkit/eventually.ts';
import { collect, failureOf, request, requestStream } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import { newGate } from '../../plugins/receivers/agent_api/testing/gates.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import { asObject, asObjects, asString, messagesOf } from '../../plugins/receivers/agent_api/testing/types.ts';
import type { Json } from './support.ts';
import { UUID, hello, lastAiText, useSharedServer } from './support.ts';

let server: TestServer;
let client: Client;
let url: string;
useSharedServer((started) => {
  server = started;
  client = started.client;
  url = started.url;
});

describe('streaming', () => {
  async function streamOn(
    graph: string,
    streamMode: StreamMode | StreamMode[],
    input: Json = hello('hello world'),
    extra: Json = {},
  ) {
    const thread = await client.threads.create();
    const parts = await collect(client.runs.stream(thread.thread_id, graph, { input, streamMode, ...extra }));
    assert.equal(parts[0]!.event, 'metadata', 'metadata comes first');
    const runId = asString(asObject(parts[0]!.data).run_id);
    assert.match(runId, UUID);
    assert.deepEqual(parts[0]!.data, { run_id: runId, attempt: 1 });
    return {
      thread,
      parts: parts.slice(1).map((part) => ({ event: part.event as string, data: part.data as unknown })),
    };
  }

  test('values: the full state after each step', async () => {
    const { parts } = await streamOn('chat', 'values');
    assert.ok(parts.every((p) => p.event === 'values'));
    assert.equal(messagesOf(parts[0]!.data).length, 1);
    assert.equal(lastAiText(parts[parts.length - 1]!.data), 'You said: hello world');
  });

  test('messages-tuple: `messages` events [chunk, metadata], token by token', async () => {
    const { parts } = await streamOn('chat', 'messages-tuple');
    const tuples = parts.filter((p) => p.event === 'messages');
    assert.equal(tuples.length, parts.length);
    assert.ok(tuples.length >= 3, 'one event per token');
    const [chunk, metadata] = asObjects(tuples[0]!.data);
    assert.equal(metadata?.langgraph_node, 'call_model');
    assert.match(asString(chunk?.type), /^AIMessageChunk$|^ai$/i);
    assert.equal(tuples.map((t) => asObjects(t.data)[0]?.content).join(''), 'You said: hello world');
  });

  test('messages (legacy): metadata, partial and complete events', async () => {
    const { parts } = await streamOn('chat', 'messages');
    const events = new Set(parts.map((p) => p.event));
    assert.deepEqual(events, new Set(['messages/metadata', 'messages/partial', 'messages/complete']));
    const partials = parts.filter((p) => p.event === 'messages/partial');
    assert.equal(asObjects(partials[partials.length - 1]!.data)[0]?.content, 'You said: hello world');
    const completes = parts.filter((p) => p.event === 'messages/complete').flatMap((p) => asObjects(p.data));
    assert.equal(completes[completes.length - 1]!.content, 'You said: hello world');
  });

  test('debug: checkpoint, task and task_result events', async () => {
    const { parts } = await streamOn('chat', 'debug');
    assert.ok(parts.every((p) => p.event === 'debug'));
    const types = new Set(parts.map((p) => asObject(p.data).type));
    for (const type of ['checkpoint', 'task', 'task_result']) assert.ok(types.has(type), `debug has ${type}`);
    for (const part of parts) assert.ok(Number.isInteger(asObject(part.data).step));
  });

  test('events: LangChain stream events including the chat model tokens', async () => {
    const { parts } = await streamOn('chat', 'events');
    assert.ok(parts.every((p) => p.event === 'events'));
    const names = new Set(parts.map((p) => asObject(p.data).event));
    for (const name of [
      'on_chain_start',
      'on_chain_end',
      'on_chat_model_start',
      'on_chat_model_stream',
      'on_chat_model_end',
    ]) {
      assert.ok(names.has(name), `events has ${name}`);
    }
  });

  test('custom: what a node writes', async () => {
    const { parts } = await streamOn('sleep', 'custom', { delay_ms: 30, steps: 3 });
    assert.deepEqual(
      parts.map((p) => [p.event, p.data]),
      [
        ['custom', { step: 1, of: 3 }],
        ['custom', { step: 2, of: 3 }],
        ['custom', { step: 3, of: 3 }],
      ],
    );
  });

  test('tasks: a start and a result per node', async () => {
    const { parts } = await streamOn('chat', 'tasks');
    assert.ok(parts.every((p) => p.event === 'tasks'));
    const tasks = parts.map((p) => asObject(p.data));
    const start = tasks.find((task) => task.name === 'call_model' && 'input' in task);
    const result = tasks.find((task) => task.name === 'call_model' && 'result' in task);
    assert.ok(start && result, 'start and result of call_model');
    assert.equal(start.id, result.id);
  });

  test('checkpoints: {values, metadata, next} from the input checkpoint on', async () => {
    const { parts } = await streamOn('chat', 'checkpoints');
    assert.ok(parts.length >= 2);
    const checkpoints = parts.map((part) => {
      assert.equal(part.event, 'checkpoints');
      const checkpoint = asObject(part.data);
      for (const key of ['values', 'metadata', 'next']) assert.ok(key in checkpoint, `checkpoints event has ${key}`);
      return checkpoint;
    });
    assert.deepEqual(checkpoints[0]!.next, ['__start__']);
    assert.equal(asObject(checkpoints[0]!.metadata).source, 'input');
    assert.deepEqual(checkpoints[checkpoints.length - 1]!.next, []);
  });

  test('several modes at once', async () => {
    const { parts } = await streamOn('chat', ['values', 'updates', 'messages-tuple', 'custom']);
    const events = new Set(parts.map((p) => p.event));
    assert.deepEqual(events, new Set(['values', 'updates', 'messages']));
  });

  test('subgraphs: inner events are namespaced `<mode>|<node>:<task id>`', async () => {
    const { parts } = await streamOn('subgraph', ['updates'], hello('cats'), { streamSubgraphs: true });
    const inner = parts.filter((p) => p.event.startsWith('updates|research:'));
    assert.ok(inner.length >= 2, `inner update events: ${parts.map((p) => p.event).join(', ')}`);
    assert.ok(inner.some((p) => 'make_plan' in asObject(p.data)));
    assert.ok(parts.some((p) => p.event === 'updates' && 'review' in asObject(p.data)));
    const { parts: rootOnly } = await streamOn('subgraph', ['updates'], hello('cats'));
    assert.ok(rootOnly.every((p) => p.event === 'updates'));
  });

  test('SSE framing on the wire: headers, `event:` / `data:` / `id:` lines, Content-Location', async () => {
    const thread = await client.threads.create();
    const stream = await requestStream(url, 'POST', `/threads/${thread.thread_id}/runs/stream`, {
      body: { assistant_id: 'chat', input: hello('a\nb'), stream_mode: ['values', 'updates'] },
    });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    const location = stream.headers.get('content-location') ?? '';
    assert.match(location, new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]{36}$`));
    assert.ok(stream.text.endsWith('\n\n'), 'the body ends with a complete frame');
    assert.ok(stream.frames.length >= 3);
    stream.frames.forEach((frame, index) => {
      assert.ok(frame.lines[0]!.startsWith('event: '), `frame ${index} opens with event:`);
      assert.ok(
        frame.lines.slice(1, -1).every((line) => line.startsWith('data: ')),
        `frame ${index} carries data: lines`,
      );
      assert.equal(frame.lines[frame.lines.length - 1], `id: ${index}`, `frame ${index} ends with its id`);
      JSON.parse(frame.data);
    });
    assert.equal(stream.frames[0]!.event, 'metadata');
    assert.equal(JSON.parse(stream.frames[0]!.data).run_id, location.split('/').pop());
    // A message with a newline still arrives intact.
    const values = stream.frames.filter((f) => f.event === 'values').map((f) => JSON.parse(f.data));
    assert.equal(values[values.length - 1].messages[0].content, 'a\nb');
  });

  test('joinStream replays a run and resumes after lastEventId', async () => {
    const thread = await client.threads.create();
    const gate = newGate();
    const run = await client.runs.create(thread.thread_id, 'gate', {
      input: { gate: gate.name },
      streamMode: ['values', 'custom'],
    });
    // Joined while the run waits at its gate; opened once the join has seen it get there.
    const full: { id?: string; event: string; data: unknown }[] = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id)) {
      full.push(part);
      if (part.event === 'custom' && asObject(part.data).at === 'reached') gate.open();
    }
    assert.equal(full[0]!.event, 'metadata');
    assert.deepEqual(
      full.filter((p) => p.event === 'custom').map((p) => asObject(p.data).at),
      ['reached', 'passed'],
    );
    assert.ok(
      full.every((p) => typeof p.id === 'string'),
      'every event has an id',
    );
    const resumed = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: full[1]!.id }));
    assert.deepEqual(
      resumed.map((p) => [p.id, p.event, p.data]),
      full.slice(2).map((p) => [p.id, p.event, p.data]),
    );
    const again = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' }));
    assert.deepEqual(
      again.map((p) => p.id),
      full.map((p) => p.id),
    );
  });

  test('a stream joined while the run is live sees the same events as the creating stream', async () => {
    const thread = await client.threads.create();
    const gate = newGate();
    let runId = '';
    const creating = collect(
      client.runs.stream(thread.thread_id, 'gate', {
        input: { gate: gate.name },
        streamMode: 'custom',
        streamResumable: true,
        onRunCreated: (meta) => {
          runId = meta.run_id;
        },
      }),
    );
    await gate.reached;
    await eventually(async () => assert.notEqual(runId, '', 'the run is announced'));
    // The join starts while the run waits at its gate, and opens it once it has replayed that far.
    const joined: { id?: string; event: string; data: unknown }[] = [];
    for await (const part of client.runs.joinStream(thread.thread_id, runId, { lastEventId: '-1' })) {
      joined.push(part);
      if (part.event === 'custom' && asObject(part.data).at === 'reached') gate.open();
    }
    const original = await creating;
    assert.deepEqual(joined, original);
    assert.deepEqual(
      joined.filter((p) => p.event === 'custom').map((p) => asObject(p.data).at),
      ['reached', 'passed'],
    );
  });

  test('raw HTTP: stream_mode as a plain string; input messages with role human', async () => {
    const thread = await client.threads.create();
    const stream = await requestStream(url, 'POST', `/threads/${thread.thread_id}/runs/stream`, {
      body: {
        assistant_id: 'chat',
        input: { messages: [{ role: 'human', content: 'plain' }] },
        stream_mode: 'updates',
      },
    });
    assert.equal(stream.status, 200);
    assert.deepEqual(
      stream.frames.map((f) => f.event),
      ['metadata', 'updates'],
    );
    assert.equal(JSON.parse(stream.frames[1]!.data).call_model.messages[0].content, 'You said: plain');
  });

  test('threadless background run: joinStream while it runs; on_completion keep leaves its thread', async () => {
    const gate = newGate();
    const run = await client.runs.create(null, 'gate', { input: { gate: gate.name }, streamMode: ['custom'] });
    const parts: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.joinStream(null, run.run_id)) {
      parts.push(part);
      if (part.event === 'custom' && asObject(part.data).at === 'reached') gate.open();
    }
    assert.deepEqual(
      parts.map((p) => p.event),
      ['metadata', 'custom', 'custom'],
    );

    const kept = await request(url, 'POST', '/runs', {
      body: { assistant_id: 'chat', input: hello('keep me'), on_completion: 'keep' },
    });
    const keptRun = kept.json as Run;
    await client.runs.join(keptRun.thread_id, keptRun.run_id);
    const state = await client.threads.getState(keptRun.thread_id);
    assert.equal(lastAiText(state.values), 'You said: keep me');
  });

  test('a thread stream follows every run on the thread', async () => {
    const thread = await client.threads.create();
    const controller = new AbortController();
    const seen: Array<{ event: string; data: unknown }> = [];
    const following = (async () => {
      try {
        for await (const part of client.threads.joinStream(thread.thread_id, { signal: controller.signal }))
          seen.push(part);
      } catch {
        // Aborted by the test once both runs were seen.
      }
    })();
    await client.runs.wait(thread.thread_id, 'chat', { input: hello('first') });
    await client.runs.wait(thread.thread_id, 'chat', { input: hello('second') });
    await eventually(async () => {
      const n = await seen.filter((p) => p.event === 'metadata').length;
      assert.ok(n >= 2, `not yet: ${JSON.stringify(n)}`);
      return n;
    });
    controller.abort();
    await following;
    const answers = seen.filter((p) => p.event === 'values').map((p) => lastAiText(p.data as Json));
    assert.ok(answers.includes('You said: first') && answers.includes('You said: second'), JSON.stringify(answers));
  });

  test('a dropped stream connection: the SDK reconnects through Location and misses nothing', async () => {
    // A TCP proxy in front of the server that cuts the first streaming connection once events flow
    // (the run has reached its gate); the gate opens when the SDK comes back to rejoin the run.
    const gate = newGate();
    let dropped = false;
    const requests: string[] = [];
    const proxy = createNetServer((downstream) => {
      const upstream = connect(Number(new URL(url).port), '127.0.0.1');
      downstream.on('data', (chunk: Buffer) => {
        const text = chunk.toString();
        requests.push(text);
        if (dropped && /^GET \/threads\/[0-9a-f-]+\/runs\/[0-9a-f-]+\/stream/.test(text)) gate.open();
      });
      downstream.pipe(upstream);
      let seen = '';
      upstream.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (!dropped && /event: custom/.test(seen)) {
          // Pass on what arrived (headers, metadata, the first event), then cut.
          dropped = true;
          downstream.write(chunk, () => {
            downstream.destroy();
            upstream.destroy();
          });
          return;
        }
        downstream.write(chunk);
      });
      upstream.on('end', () => downstream.end());
      upstream.on('error', () => downstream.destroy());
      downstream.on('error', () => upstream.destroy());
      downstream.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const viaProxy = new SdkClient({
        apiUrl: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`,
        apiKey: null,
      });
      const thread = await viaProxy.threads.create();
      const parts = await collect(
        viaProxy.runs.stream(thread.thread_id, 'gate', { input: { gate: gate.name }, streamMode: 'custom' }),
      );
      assert.ok(dropped, 'the proxy cut the stream');
      const rejoins = requests.filter((text) => /^GET \/threads\/[0-9a-f-]+\/runs\/[0-9a-f-]+\/stream/.test(text));
      assert.equal(rejoins.length, 1, 'the SDK rejoined the run once');
      assert.match(rejoins[0]!, /last-event-id: \d+/i);
      assert.equal(parts.filter((p) => p.event === 'metadata').length, 1);
      assert.deepEqual(
        parts.filter((p) => p.event === 'custom').map((p) => asObject(p.data).at),
        ['reached', 'passed'],
      );
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  test('stream with an unknown assistant is a 404 before any event', async () => {
    const thread = await client.threads.create();
    const failure = await failureOf(() =>
      collect(client.runs.stream(thread.thread_id, 'no_such_graph', { input: {} })),
    );
    assert.match(failure, /^HTTP 404: .*no_such_graph/);
    assert.match(await failureOf(() => collect(client.runs.stream(null, 'no_such_graph', { input: {} }))), /^HTTP 404/);
  });
});
