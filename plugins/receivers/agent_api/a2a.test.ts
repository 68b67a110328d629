// `/a2a/{assistant_id}` with a plain JSON-RPC client: the agent card, `message/send` (a new
// context, a follow-up turn, an interrupt answered through its task), `message/stream` over SSE,
// `tasks/get`, `tasks/cancel`, a v1.0 method name, the errors (file parts, graphs without
// `messages`, unknown tasks, assistants and methods, terminal tasks), the HTTP rules (Accept per
// method, parse errors, `A2A-Version`, 405s, streams refused before their first event), API keys
// (declared on the card), `a2a.enabled: false` and langgraph.json's `http.disable_a2a`; and
// `@a2a-js/sdk`'s own client (v1.0 and v0.3 transports) built from the card.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { AgentCard, Role, TaskState } from '@a2a-js/sdk';
import type { Message, Part, SendMessageRequest, SendMessageResult, Task } from '@a2a-js/sdk';
import {
  Client as A2AClient,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { EXAMPLES_LANGGRAPH_JSON, startTestServer, useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import { collect } from './testing/agent-wire.ts';
import {
  asObject,
  asObjects,
  asRpcAnswer,
  asString,
  firstActionRequest,
  rpcErrorOf,
  rpcResultOf,
} from './testing/types.ts';
import type { ErrorBody, JsonObject, RpcAnswer } from './testing/types.ts';

const CRONS_AUTH = fileURLToPath(new URL('./testdata/auth/langgraph-crons.json', import.meta.url));
const SYSTEM_AGENT = 'fe096781-5601-53d2-b2f6-0d3403f7e9ca';
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

// What the endpoint sends in A2A v0.3's wire shape (`@a2a-js/sdk` types only its v1.0 core), as far
// as these tests read it. v1.0 method names answer the same fields, without `kind` and with
// `TASK_STATE_*` states.

/** The agent card as served: v0.3 (`url`, `preferredTransport`) with v1.0's `supportedInterfaces`. */
interface ServedCard {
  protocolVersion: string;
  name: string;
  url: string;
  preferredTransport: string;
  supportedInterfaces: { url: string; protocolBinding: string; protocolVersion: string }[];
  capabilities: { streaming: boolean; pushNotifications: boolean; stateTransitionHistory?: boolean };
  defaultInputModes: string[];
  skills: { id: string; metadata: { inputFields: string[] } }[];
  securitySchemes?: JsonObject;
  security?: JsonObject[];
}

interface WirePart {
  kind: 'text' | 'data' | 'file';
  text?: string;
  data?: JsonObject;
}

interface WireMessage {
  kind: 'message';
  messageId: string;
  role: 'user' | 'agent';
  parts: WirePart[];
}

interface WireStatus {
  state: string;
  message?: WireMessage;
}

interface WireArtifact {
  artifactId: string;
  name?: string;
  parts: WirePart[];
}

interface WireTask {
  kind?: 'task';
  id: string;
  contextId: string;
  status: WireStatus;
  artifacts?: WireArtifact[];
  history?: WireMessage[];
}

interface WireStatusUpdate {
  kind: 'status-update';
  taskId: string;
  contextId: string;
  status: WireStatus;
  final: boolean;
}

interface WireArtifactUpdate {
  kind: 'artifact-update';
  taskId: string;
  contextId: string;
  artifact: WireArtifact;
}

/** What one `message/stream` event carries: the task, then its status and artifact updates. */
type WireEvent = WireTask | WireStatusUpdate | WireArtifactUpdate;

/** The text of a task's answer (its first artifact's first part); fails the test when there is none. */
function answerOf(task: WireTask): string {
  return asString(task.artifacts?.[0]?.parts[0]?.text, `the answer of task ${JSON.stringify(task)}`);
}

/** A user message in `@a2a-js/sdk`'s core (v1.0) types, as its client takes them. */
function coreMessage(text: string): Message {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A `SendMessage` request for `@a2a-js/sdk`'s client carrying `message` alone. */
function sendRequest(message: Message): SendMessageRequest {
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}

/** The task `sendMessage` answered (the SDK types it `Message | Task`); fails the test on a bare message. */
function taskOf(result: SendMessageResult): Task {
  assert.ok('status' in result, `expected a task: ${JSON.stringify(result)}`);
  return result;
}

/** The text of a core (v1.0) part; fails the test when it is not a text part. */
function coreText(part: Part | undefined): string {
  assert.ok(part?.content?.$case === 'text', `not a text part: ${JSON.stringify(part)}`);
  return part.content.value;
}

/**
 * `@a2a-js/sdk`'s client for an assistant, from its card: the v1.0 JSON-RPC transport the SDK picks
 * from `supportedInterfaces`, or (`legacy`) its v0.3 one at the card's `url`, as v0.3 clients use it.
 */
async function sdkClient(url: string, assistant: string, headers: Record<string, string>, legacy: boolean) {
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), ...headers } });
  const cardUrl = `${url}/a2a/${assistant}/.well-known/agent-card.json`;
  if (legacy) {
    const card = (await (await fetchImpl(cardUrl)).json()) as ServedCard;
    assert.equal(card.preferredTransport, 'JSONRPC');
    return new A2AClient(new LegacyJsonRpcTransport({ endpoint: card.url, fetchImpl }), AgentCard.fromJSON(card));
  }
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(cardUrl, '');
}

function userMessage(text: string, extra: Record<string, unknown> = {}) {
  return { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra };
}

describe('agent_api A2A endpoint', () => {
  let server: TestServer;
  useTestServer((started) => {
    server = started;
  });

  let nextId = 1;
  async function rpc(assistant: string, method: string, params: unknown, headers: Record<string, string> = {}) {
    const id = nextId++;
    const response = await fetch(`${server.url}/a2a/${assistant}`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const body = asRpcAnswer<WireTask>(await response.json());
    return {
      status: response.status,
      id,
      body,
      get result(): WireTask {
        return rpcResultOf(body);
      },
      get error() {
        return rpcErrorOf(body);
      },
    };
  }

  async function stream(assistant: string, params: unknown): Promise<RpcAnswer<WireEvent>[]> {
    const response = await fetch(`${server.url}/a2a/${assistant}`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 'stream-1', method: 'message/stream', params }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
    const text = await response.text();
    return text
      .split('\n\n')
      .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
      .filter((line): line is string => line !== undefined)
      .map((line) => asRpcAnswer<WireEvent>(JSON.parse(line.slice(6)), 'event'));
  }

  it('serves an agent card per assistant', async () => {
    const card = (await (
      await fetch(`${server.url}/.well-known/agent-card.json?assistant_id=agent`)
    ).json()) as ServedCard;
    assert.equal(card.protocolVersion, '0.3.0');
    assert.equal(card.name, 'agent');
    assert.equal(card.url, `${server.url}/a2a/${SYSTEM_AGENT}`);
    assert.equal(card.preferredTransport, 'JSONRPC');
    assert.equal(card.capabilities.streaming, true);
    assert.equal(card.capabilities.pushNotifications, false);
    assert.deepEqual(card.defaultInputModes, ['text/plain', 'application/json']);
    assert.equal(card.skills[0].id, `${SYSTEM_AGENT}-main`);
    assert.ok(card.skills[0].metadata.inputFields.includes('messages'));
    const nested = (await (await fetch(`${server.url}/a2a/agent/.well-known/agent-card.json`)).json()) as ServedCard;
    assert.deepEqual(nested, card);
    const proxied = (await (
      await fetch(`${server.url}/.well-known/agent-card.json?assistant_id=agent`, {
        headers: { 'x-forwarded-proto': 'https' },
      })
    ).json()) as ServedCard;
    assert.match(proxied.url, /^https:\/\//);

    const missing = await fetch(`${server.url}/.well-known/agent-card.json`);
    assert.equal(missing.status, 422);
    assert.match(((await missing.json()) as ErrorBody).message, /assistant_id: is required/);
    const unknown = await fetch(`${server.url}/.well-known/agent-card.json?assistant_id=nope`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('x-error-code'), 'TP_ERR_API_NOT_FOUND');
    assert.match(await unknown.text(), /Assistant 'nope' not found/);
    const notMessages = await fetch(`${server.url}/.well-known/agent-card.json?assistant_id=error`);
    assert.equal(notMessages.status, 422);
    assert.match(((await notMessages.json()) as ErrorBody).message, /take a 'messages' input.*delay_ms/);
  });

  it('message/send answers a completed task; a follow-up with the contextId continues the thread', async () => {
    const first = await rpc('agent', 'message/send', { message: userMessage('hello a2a') });
    assert.equal(first.status, 200);
    assert.equal(first.body.id, first.id);
    const task = first.result;
    assert.equal(task.kind, 'task');
    assert.equal(task.status.state, 'completed');
    assert.match(task.contextId, /^[0-9a-f-]{36}$/);
    assert.equal(task.artifacts?.[0].name, 'Assistant Response');
    assert.match(answerOf(task), /hello a2a/);
    assert.deepEqual(
      task.history?.map((message) => message.role),
      ['user', 'agent'],
    );
    // The task is the run, the context the thread.
    const run = await server.client.runs.get(task.contextId, task.id);
    assert.equal(run.status, 'success');

    const second = await rpc('agent', 'message/send', { message: userMessage('again', { contextId: task.contextId }) });
    assert.equal(second.result.contextId, task.contextId);
    assert.equal(second.result.history?.length, 4);

    const got = await rpc('agent', 'tasks/get', { id: task.id });
    assert.equal(got.result.id, task.id);
    assert.equal(got.result.status.state, 'completed');
    const short = await rpc('agent', 'tasks/get', { id: second.result.id, historyLength: 1 });
    assert.equal(short.result.history?.length, 1);
    // v1.0 method names work too, with the v1.0 wire format.
    const v1 = await rpc('agent', 'GetTask', { id: task.id }, { 'a2a-version': '1.0' });
    assert.equal(v1.result.status.state, 'TASK_STATE_COMPLETED');

    const terminal = await rpc('agent', 'message/send', {
      message: userMessage('more', { contextId: task.contextId, taskId: task.id }),
    });
    assert.equal(terminal.error.code, -32004);
    assert.match(terminal.error.message, /terminal state/);
  });

  it('an interrupt is input-required, and a message naming the task resumes it', async () => {
    const asked = await rpc('interrupt', 'message/send', { message: userMessage('write something') });
    assert.equal(asked.result.status.state, 'input-required');
    const question = asked.result.status.message;
    assert.ok(question, `an input-required status carries a message: ${JSON.stringify(asked.result.status)}`);
    const parts = question.parts;
    assert.equal(parts[1].kind, 'data');
    const [interrupt] = asObjects(asObject(parts[1].data, 'data part').interrupts, 'interrupts');
    assert.equal(firstActionRequest(interrupt.value).description, 'Approve this draft?');
    const resumed = await rpc('interrupt', 'message/send', {
      message: userMessage('approve', { contextId: asked.result.contextId, taskId: asked.result.id }),
    });
    assert.equal(resumed.result.status.state, 'completed');
    assert.match(answerOf(resumed.result), /Draft answer to: write something/);
  });

  it('message/stream sends the task, working updates, the answer in chunks and a final status', async () => {
    const events = await stream('agent', { message: userMessage('stream me') });
    assert.ok(events.every((event) => event.jsonrpc === '2.0' && event.id === 'stream-1'));
    const results = events.map((event) => rpcResultOf(event));
    const first = results[0];
    assert.ok(first.kind === 'task', `the first event is the task: ${JSON.stringify(first)}`);
    assert.equal(first.status.state, 'submitted');
    assert.equal(first.history?.[0].parts[0].text, 'stream me');
    assert.ok(results.some((result) => result.kind === 'status-update' && result.status.state === 'working'));
    const chunks = results.filter((result): result is WireArtifactUpdate => result.kind === 'artifact-update');
    assert.ok(chunks.length > 0);
    const streamed = chunks.map((chunk) => asString(chunk.artifact.parts[0].text, 'chunk text')).join('');
    const last = results.at(-1);
    assert.ok(last?.kind === 'status-update', `the last event is a status update: ${JSON.stringify(last)}`);
    assert.equal(last.status.state, 'completed');
    assert.equal(last.final, true);
    assert.equal(last.status.message?.parts[0].text, streamed);
    assert.match(streamed, /stream me/);
  });

  it('tasks/cancel cancels a task that has not ended, and refuses one that has', async () => {
    const thread = await server.client.threads.create();
    await server.client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 1500 } });
    const queued = await rpc('agent', 'message/send', {
      message: userMessage('wait your turn', { contextId: thread.thread_id }),
      configuration: { blocking: false },
    });
    assert.equal(queued.result.status.state, 'submitted');
    const cancelled = await rpc('agent', 'tasks/cancel', { id: queued.result.id });
    assert.equal(cancelled.result.status.state, 'canceled');
    assert.equal((await rpc('agent', 'tasks/get', { id: queued.result.id })).result.status.state, 'canceled');
    const again = await rpc('agent', 'tasks/cancel', { id: queued.result.id });
    assert.equal(again.error.code, -32002);
  });

  it('answers errors as JSON-RPC errors, and bad requests with HTTP statuses', async () => {
    const file = await rpc('agent', 'message/send', {
      message: {
        kind: 'message',
        messageId: randomUUID(),
        role: 'user',
        parts: [{ kind: 'file', file: { uri: 'https://example.com/x.png' } }],
      },
    });
    assert.equal(file.error.code, -32005);
    assert.match(file.error.message, /'text' and 'data' parts only/);
    const noParts = await rpc('agent', 'message/send', {
      message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [] },
    });
    assert.equal(noParts.error.code, -32602);
    const badContext = await rpc('agent', 'message/send', { message: userMessage('x', { contextId: 'not-a-uuid' }) });
    assert.equal(badContext.error.code, -32602);
    assert.match(badContext.error.message, /contextId/);
    const unknownTask = await rpc('agent', 'tasks/get', { id: randomUUID() });
    assert.equal(unknownTask.error.code, -32001);
    const unknownMethod = await rpc('agent', 'tasks/fly', {});
    assert.equal(unknownMethod.error.code, -32601);
    const push = await rpc('agent', 'tasks/pushNotificationConfig/get', { id: randomUUID() });
    assert.ok([-32003, -32602].includes(push.error.code));
    const notMessages = await rpc('error', 'message/send', { message: userMessage('x') });
    assert.equal(notMessages.status, 200);
    assert.equal(notMessages.error.code, -32602);
    assert.match(notMessages.error.message, /cannot be used over A2A/);
    const unknownAssistant = await rpc('nope', 'message/send', { message: userMessage('x') });
    assert.equal(unknownAssistant.status, 404);
    assert.equal(unknownAssistant.error.code, -32602);
    // Another assistant's task is not this one's.
    const foreign = await rpc('agent', 'message/send', { message: userMessage('mine') });
    const other = await server.client.assistants.create({ graphId: 'agent', name: 'other' });
    const cross = await rpc(other.assistant_id, 'tasks/get', { id: foreign.result.id });
    assert.equal(cross.error.code, -32001);

    const post = (body: string) => fetch(`${server.url}/a2a/agent`, { method: 'POST', headers: JSON_HEADERS, body });
    assert.equal((await post('[1, 2]')).status, 400);
    assert.equal((await post(JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tasks/get' }))).status, 400);
    const notification = await post(JSON.stringify({ jsonrpc: '2.0', method: 'message/send', params: {} }));
    assert.equal(notification.status, 202);
    assert.equal((await fetch(`${server.url}/a2a/agent`)).status, 405);
  });

  it('checks Accept per method, A2A-Version, and answers HTTP mistakes as JSON-RPC errors', async () => {
    const send = { message: userMessage('accept me') };
    // message/stream answers SSE: an Accept that does not allow it is refused before any run starts.
    for (const accept of ['application/json', 'text/html, application/*']) {
      const refused = await rpc('agent', 'message/stream', send, { accept });
      assert.equal(refused.status, 400, accept);
      assert.equal(refused.body.id, refused.id);
      assert.equal(refused.error.code, -32600);
      assert.match(refused.error.message, /Accept header must include text\/event-stream for streaming/);
    }
    const streamed = await fetch(`${server.url}/a2a/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/*' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 's', method: 'message/stream', params: send }),
    });
    assert.match(streamed.headers.get('content-type') ?? '', /text\/event-stream/);
    await streamed.text();
    // The other methods answer JSON; no Accept at all allows anything.
    const jsonRefused = await rpc('agent', 'tasks/get', { id: randomUUID() }, { accept: 'text/event-stream' });
    assert.equal(jsonRefused.status, 400);
    assert.match(jsonRefused.error.message, /Accept header must include application\/json/);
    const noAccept = await fetch(`${server.url}/a2a/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: randomUUID() } }),
    });
    assert.equal(rpcErrorOf(asRpcAnswer(await noAccept.json())).code, -32001);

    // A stream refused before its first event is one JSON-RPC error, not an empty stream.
    const file = await fetch(`${server.url}/a2a/agent`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'f',
        method: 'message/stream',
        params: { message: { ...userMessage('x'), parts: [{ kind: 'file', file: { uri: 'https://example.com/x' } }] } },
      }),
    });
    assert.equal(file.status, 200);
    assert.match(file.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(rpcErrorOf(asRpcAnswer(await file.json())).code, -32005);
    const resubscribe = await rpc('agent', 'tasks/resubscribe', { id: randomUUID() });
    assert.equal(resubscribe.error.code, -32004);

    const unsupported = await rpc('agent', 'GetTask', { id: randomUUID() }, { 'a2a-version': '9.1' });
    assert.equal(unsupported.error.code, -32009);
    assert.match(unsupported.error.message, /'9\.1' is not supported/);
    assert.equal((await rpc('agent', 'GetTask', { id: randomUUID() }, { 'a2a-version': '1.0' })).error.code, -32001);

    const malformed = await fetch(`${server.url}/a2a/agent`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: '{"id": 1,',
    });
    assert.equal(malformed.status, 400);
    assert.equal(rpcErrorOf(asRpcAnswer(await malformed.json())).code, -32700);
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      const answer = await fetch(`${server.url}/a2a/agent`, {
        method,
        ...(method === 'PUT' || method === 'PATCH'
          ? { headers: { 'content-type': 'application/json' }, body: '{}' }
          : {}),
      });
      assert.equal(answer.status, 405, method);
      assert.equal(answer.headers.get('allow'), 'POST', method);
    }
  });

  it('works with @a2a-js/sdk’s client built from the card, over v1.0 and v0.3', async () => {
    for (const legacy of [false, true]) {
      const client = await sdkClient(server.url, 'agent', {}, legacy);
      assert.equal(client.protocolVersion, legacy ? '0.3' : '1.0');
      const task = taskOf(await client.sendMessage(sendRequest(coreMessage(`sent ${legacy}`))));
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.match(coreText(task.artifacts[0]?.parts[0]), new RegExp(`sent ${legacy}`));
      const events = await collect(client.sendMessageStream(sendRequest(coreMessage(`streamed ${legacy}`))));
      assert.equal(events[0]?.payload?.$case, 'task');
      const last = events.at(-1)?.payload;
      assert.ok(last?.$case === 'statusUpdate', `the stream ends with a status update: ${JSON.stringify(last)}`);
      assert.equal(last.value.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal((await client.getTask({ tenant: '', id: task.id })).id, task.id);
      // A refused stream reaches the client as the A2A error.
      const refused = async () => {
        const message = coreMessage('x');
        message.parts = [
          {
            content: { $case: 'url', value: 'https://example.com/x' },
            metadata: undefined,
            filename: 'x',
            mediaType: 'image/png',
          },
        ];
        for await (const _event of client.sendMessageStream(sendRequest(message))) void _event;
      };
      await assert.rejects(refused(), /part kind 'file'|ContentTypeNotSupported|-32005/);
    }
  });

  it('declares the API key on the card; the SDK client sends it and gets through', async () => {
    const keyed = await startTestServer({ auth: { api_keys: ['k1'] } });
    try {
      const card = (await (
        await fetch(`${keyed.url}/.well-known/agent-card.json?assistant_id=agent`, { headers: { 'x-api-key': 'k1' } })
      ).json()) as ServedCard;
      assert.deepEqual(card.securitySchemes, {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'One of the deployment’s API keys, in the X-Api-Key header.',
        },
      });
      assert.deepEqual(card.security, [{ apiKey: [] }]);
      assert.equal(card.url, `${keyed.url}/a2a/${SYSTEM_AGENT}`);
      assert.equal(card.preferredTransport, 'JSONRPC');
      assert.deepEqual(
        card.supportedInterfaces.map((entry) => [entry.url, entry.protocolBinding, entry.protocolVersion]),
        [
          [card.url, 'JSONRPC', '0.3'],
          [card.url, 'JSONRPC', '1.0'],
        ],
      );
      assert.deepEqual(card.capabilities, { streaming: true, pushNotifications: false, stateTransitionHistory: false });
      const client = await sdkClient(keyed.url, 'agent', { 'x-api-key': 'k1' }, true);
      const task = taskOf(await client.sendMessage(sendRequest(coreMessage('keyed'))));
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    } finally {
      await keyed.stop();
    }
    // Without keys, nothing is declared.
    const open = (await (
      await fetch(`${server.url}/.well-known/agent-card.json?assistant_id=agent`)
    ).json()) as ServedCard;
    assert.equal(open.securitySchemes, undefined);
    assert.equal(open.security, undefined);
  });

  it('is gone when langgraph.json says http.disable_a2a, whatever a2a.enabled says', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-api-a2a-'));
    const file = join(dir, 'langgraph.json');
    const chat = join(dirname(EXAMPLES_LANGGRAPH_JSON), 'chat.ts');
    writeFileSync(file, JSON.stringify({ graphs: { agent: `${chat}:graph` }, http: { disable_a2a: true } }));
    const off = await startTestServer({ langgraph_config: file, a2a: { enabled: true } });
    try {
      assert.equal((await fetch(`${off.url}/.well-known/agent-card.json?assistant_id=agent`)).status, 404);
      assert.equal((await fetch(`${off.url}/a2a/agent/.well-known/agent-card.json`)).status, 404);
      const gone = await fetch(`${off.url}/a2a/agent`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: userMessage('hi') } }),
      });
      assert.equal(gone.status, 404);
      const flags = asObject(asObject(await (await fetch(`${off.url}/info`)).json(), 'info').flags, 'flags');
      assert.equal(flags.a2a, false);
      assert.equal(flags.mcp, true, 'MCP has its own switch');
    } finally {
      await off.stop();
    }
    writeFileSync(file, JSON.stringify({ graphs: { agent: `${chat}:graph` }, http: { disable_a2a: 1 } }));
    try {
      await assert.rejects(startTestServer({ langgraph_config: file }), /http\.disable_a2a: must be true or false/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('needs the API key when keys are set, and is gone with a2a.enabled: false', async () => {
    const keyed = await startTestServer({ auth: { api_keys: ['k1'] } });
    try {
      const card = await fetch(`${keyed.url}/.well-known/agent-card.json?assistant_id=agent`);
      assert.equal(card.status, 401);
      const refused = await fetch(`${keyed.url}/a2a/agent`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: userMessage('hi') } }),
      });
      assert.equal(refused.status, 401);
      const allowed = await fetch(`${keyed.url}/a2a/agent`, {
        method: 'POST',
        headers: { ...JSON_HEADERS, 'x-api-key': 'k1' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: userMessage('hi') } }),
      });
      assert.equal(rpcResultOf(asRpcAnswer<WireTask>(await allowed.json())).status.state, 'completed');
    } finally {
      await keyed.stop();
    }
    const off = await startTestServer({ a2a: { enabled: false } });
    try {
      assert.equal((await fetch(`${off.url}/.well-known/agent-card.json?assistant_id=agent`)).status, 404);
      const gone = await fetch(`${off.url}/a2a/agent`, { method: 'POST', headers: JSON_HEADERS, body: '{}' });
      assert.equal(gone.status, 404);
    } finally {
      await off.stop();
    }
  });

  it('under a custom auth handler, reaches only the caller’s assistants and tasks', async () => {
    const authed = await startTestServer({ langgraph_config: CRONS_AUTH });
    try {
      const alice = new Client({ apiUrl: authed.url, apiKey: null, defaultHeaders: { Authorization: 'Bearer alice' } });
      const assistant = await alice.assistants.create({ graphId: 'agent', name: 'alice-agent' });
      const call = async (who: string, method: string, params: unknown) => {
        const response = await fetch(`${authed.url}/a2a/${assistant.assistant_id}`, {
          method: 'POST',
          headers: { ...JSON_HEADERS, authorization: `Bearer ${who}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
        return { status: response.status, body: asRpcAnswer<WireTask>(await response.json()) };
      };
      const sent = rpcResultOf((await call('alice', 'message/send', { message: userMessage('hi') })).body);
      assert.equal(sent.status.state, 'completed');
      const thread = await alice.threads.get(sent.contextId);
      assert.equal(thread.metadata?.owner, 'alice');
      const bob = await call('bob', 'tasks/get', { id: sent.id });
      assert.equal(bob.status, 404);
      assert.equal(rpcErrorOf(bob.body).code, -32602);
      const card = await fetch(`${authed.url}/.well-known/agent-card.json?assistant_id=${assistant.assistant_id}`, {
        headers: { authorization: 'Bearer bob' },
      });
      assert.equal(card.status, 404);
      const nobody = await fetch(`${authed.url}/.well-known/agent-card.json?assistant_id=${assistant.assistant_id}`);
      assert.equal(nobody.status, 401);
    } finally {
      await authed.stop();
    }
  });
});
