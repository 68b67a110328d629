// The thread protocol, in the reference server's two forms. Over a WebSocket,
// `GET /threads/{thread_id}/stream/events`: the client sends commands (`run.start`,
// `input.respond`, `subscription.subscribe` / `unsubscribe`, `agent.getTree`, `state.get`), each
// `{id, method, params}`, and gets one `success` or `error` frame per command; the events of the
// runs it starts arrive as `event` frames, filtered by its subscriptions (protocol/session.ts).
// Over HTTP, each command is a `POST /threads/{thread_id}/commands` answered with that frame, and
// events are read from `POST /threads/{thread_id}/stream/events` (SSE, one `event: <method>` per
// event, its `event_id` as the SSE id), whose body is the filter a subscription would carry, plus
// `since`; any number of such streams share the thread's runs (protocol/thread-streams.ts).
//
// Every request passes the guards every request passes (request-guard.ts: host, cross-site
// — a browser's WebSocket is never stopped by CORS, so a cross-site upgrade is refused like a
// state-changing request —, JSON-only bodies, API key, custom authentication); an existing thread
// must be one the user may read. Each command is then authorized as its HTTP counterpart is:
// `run.start` and `input.respond` as a run's creation, `state.get` as a read of the thread.

import websocket from '@fastify/websocket';
import type { WebSocket } from '@fastify/websocket';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isSupportedChannel } from '@langchain/langgraph/stream';
import { ApiInvalidError, ApiUpgradeRequiredError } from '../../errors.ts';
import { failure, isRecord, parseCommand, success } from '../protocol/events.ts';
import type { ProtocolCommand, ProtocolError, ProtocolSuccess } from '../protocol/events.ts';
import { ThreadStreamSession } from '../protocol/session.ts';
import type { RunEvents } from '../protocol/session.ts';
import { SharedThreadStream, ThreadStreams } from '../protocol/thread-streams.ts';
import type { EventFilter } from '../protocol/thread-streams.ts';
import { authorizeThread, createRun } from './access.ts';
import { errorBody } from './app.ts';
import type { RunCreate } from '../domain/runs.ts';
import { threadIdParams } from '../api/schemas.ts';
import type { AgentApp, AgentServices } from './services.ts';
import { CodedError } from 'tracepipe/plugin';
import { AuthRefusal } from '../auth/custom.ts';
import { openEventStream, writeSSE } from './sse.ts';

/** Events a connection (or a thread's SSE streams) keep for subscriptions made after they happened. */
const MAX_BUFFERED_EVENTS = 10_000;

/** How long a thread's SSE streams are remembered with none open and no run in progress. */
const SSE_THREAD_IDLE_MS = 10 * 60_000;

/**
 * What the protocol's runs stream: every mode the session has a channel for, subgraphs included;
 * `messages-tuple` is LangGraph's `messages` mode, which a protocol run streams as message
 * lifecycle events (`RunKwargs.protocol`).
 */
const PROTOCOL_STREAM_MODES = ['values', 'updates', 'messages-tuple', 'custom', 'tasks', 'tools'] as const;

const MULTITASK_STRATEGIES = new Set(['reject', 'interrupt', 'rollback', 'enqueue']);

/** How a failed command reads on the wire: the HTTP API's message, under the protocol's code. */
function commandFailure(id: number, error: unknown): ProtocolError {
  const message = error instanceof Error ? error.message : String(error);
  const status = error instanceof CodedError || error instanceof AuthRefusal ? error.statusCode : 500;
  if (status === 401 || status === 403) return failure(id, 'permission_denied', message);
  if (status === 404) return failure(id, 'no_such_run', message);
  if (status >= 400 && status < 500) return failure(id, 'invalid_argument', message);
  return failure(id, 'unknown_error', message);
}

/** A frame's bytes (one buffer, or the fragments of one message) as text. */
type RawData = Buffer | ArrayBuffer | Buffer[];
function text(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

/** What a thread's protocol commands act on: its session and the assistant its runs use. */
interface ProtocolThread {
  readonly threadId: string;
  readonly session: ThreadStreamSession;
  assistantId: string | undefined;
}

/** The commands of the thread protocol, for one transport; each is authorized for its request. */
class ProtocolCommands {
  constructor(
    private readonly services: AgentServices,
    private readonly transport: 'websocket' | 'sse',
  ) {}

  /**
   * The command's answer; `undefined` when the session answered by itself (a subscription over
   * a WebSocket is answered ahead of the events it replays).
   */
  async handle(
    thread: ProtocolThread,
    request: FastifyRequest,
    command: ProtocolCommand,
  ): Promise<ProtocolSuccess | ProtocolError | undefined> {
    const params = command.params ?? {};
    switch (command.method) {
      case 'subscription.subscribe':
      case 'subscription.unsubscribe':
        if (this.transport === 'sse')
          return failure(
            command.id,
            'not_supported',
            `Over HTTP, events are read with POST /threads/${thread.threadId}/stream/events, whose body is the subscription's filter.`,
          );
        if (command.method === 'subscription.unsubscribe') return thread.session.unsubscribe(command.id, params);
        thread.session.subscribe(command.id, params);
        return undefined;
      case 'agent.getTree':
        return success(command.id, { tree: thread.session.tree() }, this.meta(thread));
      case 'run.start':
        return this.runStart(thread, request, command, params);
      case 'input.respond':
        return this.inputRespond(thread, request, command, params);
      case 'state.get':
        return this.stateGet(thread, request, command, params);
      case 'subscription.reconnect':
        return failure(command.id, 'not_supported', 'subscription.reconnect is not supported by this server.');
      default:
        return failure(command.id, 'unknown_command', `Unknown protocol command: ${command.method}`);
    }
  }

  private meta(thread: ProtocolThread) {
    return { thread_id: thread.threadId, applied_through_seq: thread.session.lastSeq };
  }

  private async startRun(
    thread: ProtocolThread,
    request: FastifyRequest,
    command: ProtocolCommand,
    body: Omit<RunCreate, 'assistant_id'> & { assistant_id?: string },
  ): Promise<ProtocolSuccess> {
    const assistant = await this.services.assistants.get(body.assistant_id ?? thread.assistantId ?? '');
    thread.assistantId = body.assistant_id ?? thread.assistantId;
    const run = await createRun(
      this.services,
      request,
      thread.threadId,
      {
        ...body,
        assistant_id: assistant.assistant_id,
        stream_mode: [...PROTOCOL_STREAM_MODES],
        stream_subgraphs: true,
        if_not_exists: 'create',
        multitask_strategy: body.multitask_strategy ?? 'enqueue',
      } as RunCreate,
      { protocol: true },
    );
    thread.session.follow(run.run_id, assistant.graph_id);
    return success(command.id, { run_id: run.run_id }, this.meta(thread));
  }

  private async runStart(
    thread: ProtocolThread,
    request: FastifyRequest,
    command: ProtocolCommand,
    params: Record<string, unknown>,
  ) {
    if (typeof params.assistant_id !== 'string' || params.assistant_id === '')
      return failure(command.id, 'invalid_argument', 'run.start requires an assistant_id.');
    if (thread.assistantId !== undefined && params.assistant_id !== thread.assistantId)
      return failure(
        command.id,
        'invalid_argument',
        `Thread ${thread.threadId} is bound to assistant ${thread.assistantId}; cannot run ${params.assistant_id}.`,
      );
    const strategy = params.multitaskStrategy ?? params.multitask_strategy;
    // Input to a thread waiting on an interrupt answers it, as the reference server does.
    const stored = await this.services.threads.find(thread.threadId);
    const resume = params.input !== undefined && params.input !== null && stored?.status === 'interrupted';
    return this.startRun(thread, request, command, {
      assistant_id: params.assistant_id,
      ...(resume ? { command: { resume: params.input } } : { input: params.input }),
      ...(isRecord(params.config) ? { config: params.config } : {}),
      ...(isRecord(params.context) ? { context: params.context } : {}),
      ...(isRecord(params.metadata) ? { metadata: params.metadata } : {}),
      ...(typeof strategy === 'string' && MULTITASK_STRATEGIES.has(strategy)
        ? { multitask_strategy: strategy as RunCreate['multitask_strategy'] }
        : {}),
    } as RunCreate);
  }

  private async inputRespond(
    thread: ProtocolThread,
    request: FastifyRequest,
    command: ProtocolCommand,
    params: Record<string, unknown>,
  ) {
    const answers: Record<string, unknown> = {};
    const entries = Array.isArray(params.responses) ? params.responses : [params];
    for (const entry of entries) {
      if (!isRecord(entry) || typeof entry.interrupt_id !== 'string')
        return failure(command.id, 'invalid_argument', 'input.respond requires an interrupt_id for each response.');
      answers[entry.interrupt_id] = entry.response;
    }
    if (thread.assistantId === undefined) {
      const stored = await this.services.threads.find(thread.threadId);
      const fromThread = stored?.metadata?.assistant_id;
      if (typeof fromThread !== 'string')
        return failure(command.id, 'no_such_run', `Thread ${thread.threadId} has no run to resume.`);
      thread.assistantId = fromThread;
    }
    await this.startRun(thread, request, command, { command: { resume: answers } } as RunCreate);
    return success(command.id, {}, this.meta(thread));
  }

  private async stateGet(
    thread: ProtocolThread,
    request: FastifyRequest,
    command: ProtocolCommand,
    params: Record<string, unknown>,
  ) {
    await authorizeThread(this.services, request, 'threads:read', thread.threadId);
    const state = await this.services.threads.state(thread.threadId, { subgraphs: true });
    const keys = Array.isArray(params.keys) ? params.keys.filter((key) => typeof key === 'string') : undefined;
    const values =
      keys && isRecord(state.values)
        ? Object.fromEntries(Object.entries(state.values).filter(([name]) => keys.includes(name)))
        : state.values;
    const checkpoint = state.checkpoint as { checkpoint_id?: string; checkpoint_ns?: string } | null | undefined;
    return success(
      command.id,
      {
        values,
        ...(checkpoint?.checkpoint_id
          ? { checkpoint: { id: checkpoint.checkpoint_id, ns: checkpoint.checkpoint_ns ?? '' } }
          : {}),
      },
      this.meta(thread),
    );
  }
}

/** A command's answer, or its failure as an error frame (logged when it was not the client's fault). */
async function answer(
  services: AgentServices,
  threadId: string,
  command: ProtocolCommand,
  handle: () => Promise<ProtocolSuccess | ProtocolError | undefined>,
): Promise<ProtocolSuccess | ProtocolError | undefined> {
  try {
    return await handle();
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === undefined)
      services.logger.warn({ err: error, thread_id: threadId }, 'A protocol command failed.');
    return commandFailure(command.id, error);
  }
}

/** The protocol's command frame as an HTTP body (`POST /threads/{id}/commands`). */
const commandBody = {
  type: 'object',
  required: ['id', 'method'],
  properties: {
    id: { type: 'integer', minimum: 0 },
    method: { type: 'string' },
    params: { type: 'object' },
  },
} as const;

/** The filter of an SSE event stream (`POST /threads/{id}/stream/events`). */
const eventFilterBody = {
  type: 'object',
  required: ['channels'],
  properties: {
    channels: { type: 'array', minItems: 1, items: { type: 'string' } },
    namespaces: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
    depth: { type: 'integer', minimum: 0 },
    since: { type: 'integer', minimum: 0 },
  },
} as const;

export async function registerProtocolRoutes(app: AgentApp, services: AgentServices): Promise<void> {
  await app.register(websocket, { options: { maxPayload: services.maxBodyBytes } });
  const runEvents: RunEvents = {
    events: (runId, signal) => services.broker.subscribe(runId, -1, signal),
    status: async (runId) => (await services.runs.find(runId))?.status,
  };
  const socketCommands = new ProtocolCommands(services, 'websocket');
  const httpCommands = new ProtocolCommands(services, 'sse');
  const threadStreams = new ThreadStreams(runEvents, {
    maxBufferedEvents: MAX_BUFFERED_EVENTS,
    idleMs: SSE_THREAD_IDLE_MS,
  });
  /** The SSE answers open now, ended when the server stops (they would keep it waiting). */
  const openStreams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...openStreams]) end();
    threadStreams.close();
  });

  /** Before anything else: an existing thread must be one the user may read. A thread that does
   * not exist yet is created by the first `run.start`, as on the reference server. */
  const threadReadable = async (request: FastifyRequest) => {
    const threadId = (request.params as { thread_id: string }).thread_id;
    if (!services.access.enabled) return;
    if (!(await services.threads.exists(threadId))) return;
    await authorizeThread(services, request, 'threads:read', threadId);
  };
  /** Whose shared SSE streams a request reaches: its user's (one user when there are no users). */
  const userOf = (request: FastifyRequest) => services.access.user(request)?.user.identity ?? '';

  /** One WebSocket connection: its own session, and the commands that reach the rest of the API. */
  function connect(socket: WebSocket, request: FastifyRequest<{ Params: { thread_id: string } }>): void {
    const thread: ProtocolThread = {
      threadId: request.params.thread_id,
      session: new ThreadStreamSession(
        (frame) => {
          if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
        },
        runEvents,
        { maxBufferedEvents: MAX_BUFFERED_EVENTS },
      ),
      assistantId: undefined,
    };
    socket.on('message', (data: RawData) => {
      const parsed = parseCommand(text(data));
      if ('refusal' in parsed) {
        socket.send(JSON.stringify(parsed.refusal));
        return;
      }
      const { command } = parsed;
      void answer(services, thread.threadId, command, () => socketCommands.handle(thread, request, command)).then(
        (response) => {
          if (response && socket.readyState === socket.OPEN) socket.send(JSON.stringify(response));
        },
      );
    });
    // A quiet connection is pinged, as SSE streams get heartbeats, so that proxies keep it open.
    const heartbeat = setInterval(() => socket.ping(), services.heartbeatMs);
    heartbeat.unref();
    socket.on('close', () => {
      clearInterval(heartbeat);
      thread.session.close();
    });
  }

  app.route({
    method: 'GET',
    url: '/threads/:thread_id/stream/events',
    schema: { params: threadIdParams, hide: true },
    // Before the upgrade, so a refusal is an HTTP answer.
    preHandler: threadReadable,
    handler: async (_request, reply) => {
      const failure = new ApiUpgradeRequiredError([
        'This route is a WebSocket: open it with a WebSocket client (Upgrade: websocket); over plain HTTP, send commands to POST /threads/{thread_id}/commands and read events from POST /threads/{thread_id}/stream/events',
      ]);
      return reply
        .code(426)
        .header('upgrade', 'websocket')
        .send(errorBody(426, failure.code, failure.message));
    },
    wsHandler: (socket, request) => connect(socket, request as FastifyRequest<{ Params: { thread_id: string } }>),
  });

  app.post(
    '/threads/:thread_id/commands',
    { schema: { params: threadIdParams, body: commandBody, hide: true }, preHandler: threadReadable },
    async (request) => {
      const { thread_id: threadId } = request.params;
      const command = request.body as ProtocolCommand;
      const thread = threadStreams.get(threadId, userOf(request));
      return answer(services, threadId, command, () => httpCommands.handle(thread, request, command));
    },
  );

  app.post(
    '/threads/:thread_id/stream/events',
    {
      schema: { params: threadIdParams, body: eventFilterBody, hide: true },
      // A field the filter does not have is refused, not ignored: a misspelt `namespace` would
      // otherwise widen the stream to every namespace.
      preValidation: async (request) => {
        const body = request.body;
        if (body === null || typeof body !== 'object') return;
        const unknown = Object.keys(body).filter((key) => !(key in eventFilterBody.properties));
        if (unknown.length > 0)
          throw new ApiInvalidError([
            `body: unknown fields ${unknown.join(', ')}; a filter has channels, namespaces, depth and since`,
          ]);
      },
      preHandler: threadReadable,
    },
    async (request, reply) => {
      const { thread_id: threadId } = request.params;
      const filter = request.body as EventFilter;
      const unknown = filter.channels.filter((channel) => !isSupportedChannel(channel));
      if (unknown.length > 0)
        throw new ApiInvalidError([`body.channels: unsupported channels ${JSON.stringify(unknown)}`]);
      streamEvents(reply, threadStreams.get(threadId, userOf(request)), filter);
    },
  );

  /** Answers with the thread's events that pass the filter, as SSE, until the client goes. */
  function streamEvents(reply: FastifyReply, thread: SharedThreadStream, filter: EventFilter): void {
    const { raw, stopHeartbeat } = openEventStream(reply, services.heartbeatMs);
    const detach = thread.attach(filter, (event) => {
      void writeSSE(raw, { event: event.method, data: event, id: event.event_id });
    });
    const end = () => {
      if (!openStreams.delete(end)) return;
      stopHeartbeat();
      detach();
      if (!raw.destroyed && !raw.writableEnded) raw.end(() => raw.socket?.destroy());
    };
    openStreams.add(end);
    raw.on('close', end);
  }
}
