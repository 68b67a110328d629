// The thread protocol over a WebSocket (`GET /threads/{thread_id}/stream/events`), spoken by a
// real WebSocket client to a real server: a subscription narrowed to a subgraph's namespace gets
// that subgraph's events only, answered before anything it replays; a model's messages arrive as
// message lifecycle events; a late subscription gets the buffered events replayed; `agent.getTree` shows the subgraph; bad frames get error frames; the
// upgrade passes the API's guards (cross-site origins, API keys, the custom auth handler).

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import WebSocket from 'ws';
import { useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

type Frame = Record<string, unknown> & { type: string; id?: number | null; method?: string };

/** A socket whose frames are read in order; `next` waits for the first frame that matches. */
async function open(url: string, headers: Record<string, string> = {}) {
  const socket = new WebSocket(url, { headers });
  const frames: Frame[] = [];
  const waiters: (() => void)[] = [];
  socket.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as Frame);
    for (const wake of waiters.splice(0)) wake();
  });
  await once(socket, 'open');
  return {
    socket,
    frames,
    send: (frame: unknown) => socket.send(JSON.stringify(frame)),
    async next(match: (frame: Frame) => boolean): Promise<Frame> {
      for (;;) {
        const found = frames.find(match);
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

/** The status of a refused upgrade. */
async function refusedStatus(url: string, headers: Record<string, string>): Promise<number> {
  const socket = new WebSocket(url, { headers });
  // Closing a socket that never opened reports an error: it is the expected end here.
  socket.on('error', () => undefined);
  const [, response] = (await once(socket, 'unexpected-response')) as [unknown, { statusCode: number }];
  socket.terminate();
  return response.statusCode;
}

const isRootEnd = (frame: Frame) =>
  frame.method === 'lifecycle' &&
  (frame.params as { namespace: string[]; data: { event: string } }).namespace.length === 0 &&
  (frame.params as { data: { event: string } }).data.event !== 'running';

describe('thread protocol over a WebSocket', () => {
  let server: TestServer;
  useTestServer((started) => (server = started));
  const socketUrl = (threadId: string) => `${server.url.replace('http', 'ws')}/threads/${threadId}/stream/events`;

  it('narrows events to a subscribed namespace and answers the subscription first', async () => {
    const thread = await server.client.threads.create();
    const client = await open(socketUrl(thread.thread_id));
    client.send({
      id: 1,
      method: 'subscription.subscribe',
      params: { channels: ['values', 'updates', 'lifecycle'], namespaces: [['research']] },
    });
    client.send({
      id: 2,
      method: 'run.start',
      params: { assistant_id: 'subgraph', input: { messages: [{ type: 'human', content: 'tides' }] } },
    });
    const started = await client.next((frame) => frame.type === 'success' && frame.id === 2);
    const runId = (started.result as { run_id: string }).run_id;
    await server.client.runs.join(thread.thread_id, runId);
    // The run's last research event: its values after `write`.
    await client.next((frame) => frame.method === 'lifecycle' && JSON.stringify(frame.params).includes('"completed"'));

    const answer = client.frames.findIndex((frame) => frame.type === 'success' && frame.id === 1);
    assert.equal(answer, 0, 'the subscription is answered before any event');
    const events = client.frames.filter((frame) => frame.type === 'event');
    assert.ok(events.some((event) => event.method === 'values'));
    assert.ok(events.some((event) => event.method === 'updates'));
    for (const event of events) {
      const { namespace } = event.params as { namespace: string[] };
      assert.match(namespace[0] ?? '', /^research:/, `${event.method} in ${JSON.stringify(namespace)}`);
    }
    const seqs = events.map((event) => event.seq as number);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      'events arrive in sequence order',
    );

    client.send({ id: 3, method: 'agent.getTree', params: {} });
    const tree = await client.next((frame) => frame.type === 'success' && frame.id === 3);
    const root = (tree.result as { tree: { graph_name: string; status: string; children: { namespace: string[] }[] } })
      .tree;
    assert.equal(root.graph_name, 'subgraph');
    assert.equal(root.status, 'completed');
    // The subgraph, and the `review` node whose model's messages had a namespace of their own.
    assert.deepEqual(root.children.map((child) => child.namespace[0]!.split(':')[0]).sort(), ['research', 'review']);
    client.socket.close();
  });

  it('streams a model answer as message lifecycle events, under the node that called the model', async () => {
    const thread = await server.client.threads.create();
    const client = await open(socketUrl(thread.thread_id));
    client.send({ id: 1, method: 'subscription.subscribe', params: { channels: ['messages', 'lifecycle'] } });
    client.send({
      id: 2,
      method: 'run.start',
      params: { assistant_id: 'agent', input: { messages: [{ type: 'human', content: 'hello' }] } },
    });
    await client.next(isRootEnd);
    const messages = client.frames.filter((frame) => frame.method === 'messages');
    const data = messages.map((frame) => (frame.params as { data: Record<string, unknown> }).data);
    assert.deepEqual(
      [data[0]?.event, data.at(-1)?.event],
      ['message-start', 'message-finish'],
      data.map((event) => event.event).join(', '),
    );
    for (const frame of messages) {
      const params = frame.params as { node: string; namespace: string[]; data: { run_id: string } };
      assert.equal(params.node, 'call_model');
      assert.match(params.namespace[0] ?? '', /^call_model:/);
      assert.equal(params.data.run_id, data[0]?.run_id, 'one model call');
    }
    const text = data
      .filter((event) => event.event === 'content-block-delta')
      .map((event) => (event.delta as { text: string }).text)
      .join('');
    const state = await server.client.threads.getState<{ messages: { id: string; content: unknown }[] }>(
      thread.thread_id,
    );
    const answer = state.values.messages.at(-1)!;
    assert.equal(answer.id, data[0]?.id, 'message-start names the message the state keeps');
    const answerText =
      typeof answer.content === 'string'
        ? answer.content
        : (answer.content as { text?: string }[]).map((block) => block.text ?? '').join('');
    assert.equal(text, answerText, 'the text deltas spell the answer');
    client.socket.close();
  });

  it('replays the buffered events to a subscription made after the run', async () => {
    const thread = await server.client.threads.create();
    const client = await open(socketUrl(thread.thread_id));
    client.send({
      id: 1,
      method: 'run.start',
      params: { assistant_id: 'agent', input: { messages: [{ type: 'human', content: 'hi' }] } },
    });
    const started = await client.next((frame) => frame.type === 'success' && frame.id === 1);
    await server.client.runs.join(thread.thread_id, (started.result as { run_id: string }).run_id);
    assert.equal(client.frames.filter((frame) => frame.type === 'event').length, 0, 'nothing before a subscription');

    client.send({ id: 2, method: 'subscription.subscribe', params: { channels: ['lifecycle'] } });
    const answer = await client.next((frame) => frame.id === 2);
    const replayed = (answer.result as { replayed_events: number }).replayed_events;
    await client.next(isRootEnd);
    const lifecycle = client.frames.filter((frame) => frame.method === 'lifecycle');
    assert.ok(replayed >= 1);
    assert.equal(lifecycle.length, replayed);
    assert.equal((lifecycle.at(-1)!.params as { data: { event: string } }).data.event, 'completed');
    client.socket.close();
  });

  it('answers bad frames and unknown commands with error frames', async () => {
    const thread = await server.client.threads.create();
    const client = await open(socketUrl(thread.thread_id));
    client.socket.send('not json');
    assert.equal((await client.next((frame) => frame.type === 'error')).error, 'invalid_argument');
    client.send({ id: 7, method: 'subscription.subscribe', params: { channels: ['weather'] } });
    assert.equal((await client.next((frame) => frame.id === 7)).error, 'invalid_argument');
    client.send({ id: 8, method: 'agent.dance' });
    assert.equal((await client.next((frame) => frame.id === 8)).error, 'unknown_command');
    client.send({ id: 9, method: 'run.start', params: { assistant_id: '5a2f1f0c-7b8e-4f43-9b8a-0d6f4c1f2e3a' } });
    const missing = await client.next((frame) => frame.id === 9);
    assert.equal(missing.error, 'no_such_run');
    assert.match(String(missing.message), /not found/i);
    client.socket.close();
  });

  it('answers a plain GET with 426 and a JSON body', async () => {
    const thread = await server.client.threads.create();
    const response = await fetch(`${server.url}/threads/${thread.thread_id}/stream/events`, {
      headers: { accept: 'application/json' },
    });
    assert.equal(response.status, 426);
    assert.equal(((await response.json()) as { code: string }).code, 'TP_ERR_API_UPGRADE_REQUIRED');
  });

  it('refuses an upgrade from another site', async () => {
    const thread = await server.client.threads.create();
    const status = await refusedStatus(socketUrl(thread.thread_id), { origin: 'https://evil.example' });
    assert.equal(status, 403);
  });
});

describe('thread protocol over a WebSocket, with API keys', () => {
  let server: TestServer;
  useTestServer((started) => (server = started), { auth: { api_keys: 'socket-key' } });

  it('needs the key on the upgrade', async () => {
    const url = `${server.url.replace('http', 'ws')}/threads/5a2f1f0c-7b8e-4f43-9b8a-0d6f4c1f2e3a/stream/events`;
    assert.equal(await refusedStatus(url, {}), 401);
    const client = await open(url, { 'x-api-key': 'socket-key' });
    client.socket.close();
  });
});

describe('thread protocol over a WebSocket, with a custom auth handler', () => {
  let server: TestServer;
  useTestServer((started) => (server = started), {
    langgraph_config: fileURLToPath(new URL('./testdata/auth/langgraph-owner.json', import.meta.url)),
  });

  it('opens only on threads the user may read', async () => {
    const created = await fetch(`${server.url}/threads`, {
      method: 'POST',
      headers: { authorization: 'Bearer user-a', 'content-type': 'application/json' },
      body: '{}',
    });
    const thread = (await created.json()) as { thread_id: string };
    const url = `${server.url.replace('http', 'ws')}/threads/${thread.thread_id}/stream/events`;
    assert.equal(await refusedStatus(url, { authorization: 'Bearer user-b' }), 404);
    assert.equal(await refusedStatus(url, {}), 401);
    const owner = await open(url, { authorization: 'Bearer user-a' });
    owner.send({ id: 1, method: 'state.get', params: {} });
    assert.equal((await owner.next((frame) => frame.id === 1)).type, 'success');
    owner.socket.close();
  });
});
