// The thread protocol over plain HTTP, as the reference server serves it: commands are
// `POST /threads/{thread_id}/commands` answered with their frame, events are read from
// `POST /threads/{thread_id}/stream/events` (SSE, `event: <method>`, `id: <event_id>`), each
// stream with its own filter. Real server, real HTTP: a stream opened before the run gets its
// events live and filtered, one opened after replays them (from `since` on); bad filters and
// commands get clear errors; the API's guards apply (cross-site requests, the custom auth
// handler), and one user's stream never carries another user's runs.

import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import { parseFrames } from './testing/sse-client.ts';
import type { RawFrame } from './testing/sse-client.ts';

type ProtocolEvent = {
  type: 'event';
  event_id: string;
  seq: number;
  method: string;
  params: { namespace: string[]; node?: string; data: Record<string, unknown> };
};

/** An open SSE answer whose frames are read as they come; `next` waits for the first that matches. */
async function openStream(url: string, body: unknown, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const frames: RawFrame[] = [];
  const waiters: (() => void)[] = [];
  if (response.ok) {
    void (async () => {
      const decoder = new TextDecoder();
      let text = '';
      try {
        for await (const chunk of response.body!) {
          text += decoder.decode(chunk as Uint8Array, { stream: true });
          const end = text.lastIndexOf('\n\n');
          if (end === -1) continue;
          frames.push(...parseFrames(text.slice(0, end + 2)));
          text = text.slice(end + 2);
          for (const wake of waiters.splice(0)) wake();
        }
      } catch {
        // Aborted by `close`.
      }
    })();
  }
  return {
    response,
    frames,
    events: () => frames.map((frame) => frame.data as ProtocolEvent),
    async next(match: (event: ProtocolEvent) => boolean): Promise<ProtocolEvent> {
      for (;;) {
        const found = frames.map((frame) => frame.data as ProtocolEvent).find(match);
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    close: () => controller.abort(),
  };
}

const isRootEnd = (event: ProtocolEvent) =>
  event.method === 'lifecycle' && event.params.namespace.length === 0 && event.params.data.event !== 'running';

describe('thread protocol over HTTP and SSE', () => {
  let server: TestServer;
  useTestServer((started) => (server = started));
  const command = async (threadId: string, frame: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}/threads/${threadId}/commands`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(frame),
    });
    const text = await response.text();
    // Refusals by the API's guards are plain text unless JSON is asked for; command answers are JSON.
    return {
      status: response.status,
      body: (response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : { text }) as Record<
        string,
        unknown
      >,
    };
  };
  const streamUrl = (threadId: string) => `${server.url}/threads/${threadId}/stream/events`;

  it('streams the events of the runs its commands start, filtered, live and replayed', async () => {
    const thread = await server.client.threads.create();
    const live = await openStream(streamUrl(thread.thread_id), { channels: ['messages', 'lifecycle'] });
    assert.equal(live.response.status, 200);
    assert.match(live.response.headers.get('content-type') ?? '', /^text\/event-stream/);

    const started = await command(thread.thread_id, {
      id: 1,
      method: 'run.start',
      params: { assistant_id: 'subgraph', input: { messages: [{ type: 'human', content: 'tides' }] } },
    });
    assert.equal(started.status, 200);
    assert.equal(started.body.type, 'success');
    assert.equal(started.body.id, 1);
    const runId = (started.body.result as { run_id: string }).run_id;
    await server.client.runs.join(thread.thread_id, runId);
    await live.next(isRootEnd);

    // SSE framing: the event's method names the SSE event, its event_id is the SSE id.
    for (const frame of live.frames) {
      const event = frame.data as ProtocolEvent;
      assert.equal(frame.event, event.method);
      assert.equal(frame.id, event.event_id);
    }
    const events = live.events();
    assert.deepEqual([...new Set(events.map((event) => event.method))].sort(), ['lifecycle', 'messages']);
    const seqs = events.map((event) => event.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
    );
    // The model in the subgraph's `write` node and the one in `review` each stream a message.
    const starts = events.filter((event) => event.params.data.event === 'message-start');
    assert.deepEqual(
      starts.map((event) => event.params.node),
      ['write', 'review'],
    );
    live.close();

    // Opened after the run: the kept events it matches, from `since` on, then nothing more.
    const since = starts[1]!.seq - 1;
    const late = await openStream(streamUrl(thread.thread_id), {
      channels: ['messages'],
      namespaces: [['review']],
      since,
    });
    const replayed = await late.next((event) => event.params.data.event === 'message-finish');
    assert.ok(late.events().every((event) => event.seq > since && event.params.namespace[0]!.startsWith('review:')));
    assert.equal(late.events()[0]!.params.data.event, 'message-start');
    assert.equal(replayed.params.node, 'review');
    late.close();

    const tree = await command(thread.thread_id, { id: 2, method: 'agent.getTree', params: {} });
    assert.equal((tree.body.result as { tree: { status: string } }).tree.status, 'completed');
    const state = await command(thread.thread_id, { id: 3, method: 'state.get', params: { keys: ['messages'] } });
    const values = (state.body.result as { values: { messages: unknown[] } }).values;
    assert.deepEqual(Object.keys(values), ['messages']);
    assert.equal(values.messages.length, 3);
  });

  it('answers bad filters and commands with clear errors', async () => {
    const thread = await server.client.threads.create();
    const unknown = await openStream(streamUrl(thread.thread_id), { channels: ['weather'] });
    assert.equal(unknown.response.status, 422);
    assert.match(await unknown.response.text(), /unsupported channels.*weather/);
    const extra = await openStream(streamUrl(thread.thread_id), { channels: ['values'], limit: 3 });
    assert.ok([400, 422].includes(extra.response.status), `status ${extra.response.status}`);
    assert.match(await extra.response.text(), /unknown fields limit/);

    const malformed = await command(thread.thread_id, { method: 'run.start' });
    assert.ok([400, 422].includes(malformed.status));
    assert.match(JSON.stringify(malformed.body), /id/);
    const subscribe = await command(thread.thread_id, {
      id: 4,
      method: 'subscription.subscribe',
      params: { channels: ['values'] },
    });
    assert.equal(subscribe.body.error, 'not_supported');
    assert.match(String(subscribe.body.message), /stream\/events/);
    assert.equal((await command(thread.thread_id, { id: 5, method: 'agent.dance' })).body.error, 'unknown_command');
    const noAssistant = await command(thread.thread_id, { id: 6, method: 'run.start', params: {} });
    assert.equal(noAssistant.body.error, 'invalid_argument');
  });

  it('refuses requests from another site', async () => {
    const thread = await server.client.threads.create();
    const crossSite = { origin: 'https://evil.example' };
    assert.equal(
      (await openStream(streamUrl(thread.thread_id), { channels: ['values'] }, crossSite)).response.status,
      403,
    );
    const refused = await command(thread.thread_id, { id: 1, method: 'agent.getTree' }, crossSite);
    assert.equal(refused.status, 403);
  });
});

describe('thread protocol over HTTP, with a custom auth handler', () => {
  let server: TestServer;
  useTestServer((started) => (server = started), {
    langgraph_config: fileURLToPath(new URL('./testdata/auth/langgraph-owner.json', import.meta.url)),
  });
  const as = (user: string) => ({ authorization: `Bearer ${user}`, 'content-type': 'application/json' });

  it("opens only on threads the user may read, and never carries another user's runs", async () => {
    const created = await fetch(`${server.url}/threads`, { method: 'POST', headers: as('user-a'), body: '{}' });
    const thread = (await created.json()) as { thread_id: string };
    const url = `${server.url}/threads/${thread.thread_id}/stream/events`;
    assert.equal((await openStream(url, { channels: ['values'] }, as('user-b'))).response.status, 404);
    assert.equal((await openStream(url, { channels: ['values'] })).response.status, 401);
    const otherCommand = await fetch(`${server.url}/threads/${thread.thread_id}/commands`, {
      method: 'POST',
      headers: as('user-b'),
      body: JSON.stringify({ id: 1, method: 'state.get' }),
    });
    assert.equal(otherCommand.status, 404);

    // A thread id no one has used yet: user B listens, user A runs on it; B sees nothing of it.
    const fresh = crypto.randomUUID();
    const freshUrl = `${server.url}/threads/${fresh}/stream/events`;
    const listener = await openStream(freshUrl, { channels: ['values', 'lifecycle'] }, as('user-b'));
    const owner = await openStream(freshUrl, { channels: ['values', 'lifecycle'] }, as('user-a'));
    const started = await fetch(`${server.url}/threads/${fresh}/commands`, {
      method: 'POST',
      headers: as('user-a'),
      body: JSON.stringify({
        id: 1,
        method: 'run.start',
        params: { assistant_id: 'agent', input: { messages: [{ type: 'human', content: 'secret' }] } },
      }),
    });
    assert.equal(((await started.json()) as { type: string }).type, 'success');
    await owner.next(isRootEnd);
    assert.ok(owner.events().some((event) => event.method === 'values'));
    assert.deepEqual(listener.events(), []);
    listener.close();
    owner.close();
  });
});
