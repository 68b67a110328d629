// The thread protocol over a WebSocket: `GET /threads/{thread_id}/stream/events`, as the LangGraph
// JS server serves it to the SDK's thread streams. The client sends commands (`run.start`,
// `input.respond`, `subscription.subscribe` / `unsubscribe`, `agent.getTree`, `state.get`), each
// `{id, method, params}`, and gets one `success` or `error` frame per command; the events of the
// runs it starts arrive as `event` frames, filtered by its subscriptions (protocol/session.ts).
//
// The upgrade request passes the guards every request passes (request-guard.ts: host, cross-site
// — a browser's WebSocket is never stopped by CORS, so a cross-site upgrade is refused like a
// state-changing request —, API key, custom authentication); the thread must be one the user may
// read. Each command is then authorized as its HTTP counterpart is: `run.start` and
// `input.respond` as a run's creation, `state.get` as a read of the thread.

import websocket from '@fastify/websocket';
import type { WebSocket } from '@fastify/websocket';
import type { FastifyRequest } from 'fastify';
import { ApiUpgradeRequiredError } from '../../errors.ts';
import { failure, isRecord, parseCommand, success } from '../protocol/events.ts';
import type { ProtocolCommand, ProtocolError, ProtocolSuccess } from '../protocol/events.ts';
import { ThreadStreamSession } from '../protocol/session.ts';
import { authorizeThread, createRun } from './access.ts';
import { errorBody } from './app.ts';
import type { RunCreate } from '../domain/runs.ts';
import { threadIdParams } from '../api/schemas.ts';
import type { AgentApp, AgentServices } from './services.ts';
import { CodedError } from 'tracepipe/plugin';
import { AuthRefusal } from '../auth/custom.ts';

/** Events a connection keeps for subscriptions made after they happened. */
const MAX_BUFFERED_EVENTS = 10_000;

/** What the protocol's runs stream: every mode the session has a channel for, subgraphs included. */
const PROTOCOL_STREAM_MODES = ['values', 'updates', 'custom', 'tasks', 'tools'] as const;

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

export async function registerProtocolRoutes(app: AgentApp, services: AgentServices): Promise<void> {
  await app.register(websocket, { options: { maxPayload: services.maxBodyBytes } });

  /** One connection: the session and the commands that reach the rest of the API. */
  function connect(socket: WebSocket, request: FastifyRequest<{ Params: { thread_id: string } }>): void {
    const threadId = request.params.thread_id;
    const session = new ThreadStreamSession(
      (frame) => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
      },
      {
        events: (runId, signal) => services.broker.subscribe(runId, -1, signal),
        status: async (runId) => (await services.runs.find(runId))?.status,
      },
      { maxBufferedEvents: MAX_BUFFERED_EVENTS },
    );
    // The assistant this connection's runs use; `input.respond` resumes with it.
    let assistantId: string | undefined;
    const meta = () => ({ thread_id: threadId, applied_through_seq: session.lastSeq });

    async function startRun(
      command: ProtocolCommand,
      body: Omit<RunCreate, 'assistant_id'> & { assistant_id?: string },
    ): Promise<ProtocolSuccess> {
      const assistant = await services.assistants.get(body.assistant_id ?? assistantId ?? '');
      assistantId = body.assistant_id ?? assistantId;
      const run = await createRun(services, request, threadId, {
        ...body,
        assistant_id: assistant.assistant_id,
        stream_mode: [...PROTOCOL_STREAM_MODES],
        stream_subgraphs: true,
        if_not_exists: 'create',
        multitask_strategy: body.multitask_strategy ?? 'enqueue',
      } as RunCreate);
      session.follow(run.run_id, assistant.graph_id);
      return success(command.id, { run_id: run.run_id }, meta());
    }

    async function runStart(command: ProtocolCommand, params: Record<string, unknown>) {
      if (typeof params.assistant_id !== 'string' || params.assistant_id === '')
        return failure(command.id, 'invalid_argument', 'run.start requires an assistant_id.');
      if (assistantId !== undefined && params.assistant_id !== assistantId)
        return failure(
          command.id,
          'invalid_argument',
          `Thread ${threadId} is bound to assistant ${assistantId}; cannot run ${params.assistant_id}.`,
        );
      const strategy = params.multitaskStrategy ?? params.multitask_strategy;
      // Input to a thread waiting on an interrupt answers it, as the reference server does.
      const thread = await services.threads.find(threadId);
      const resume = params.input !== undefined && params.input !== null && thread?.status === 'interrupted';
      return startRun(command, {
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

    async function inputRespond(command: ProtocolCommand, params: Record<string, unknown>) {
      const answers: Record<string, unknown> = {};
      const entries = Array.isArray(params.responses) ? params.responses : [params];
      for (const entry of entries) {
        if (!isRecord(entry) || typeof entry.interrupt_id !== 'string')
          return failure(command.id, 'invalid_argument', 'input.respond requires an interrupt_id for each response.');
        answers[entry.interrupt_id] = entry.response;
      }
      if (assistantId === undefined) {
        const thread = await services.threads.find(threadId);
        const fromThread = thread?.metadata?.assistant_id;
        if (typeof fromThread !== 'string')
          return failure(command.id, 'no_such_run', `Thread ${threadId} has no run to resume.`);
        assistantId = fromThread;
      }
      await startRun(command, { command: { resume: answers } } as RunCreate);
      return success(command.id, {}, meta());
    }

    async function stateGet(command: ProtocolCommand, params: Record<string, unknown>) {
      await authorizeThread(services, request, 'threads:read', threadId);
      const state = await services.threads.state(threadId, { subgraphs: true });
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
        meta(),
      );
    }

    async function handle(command: ProtocolCommand): Promise<ProtocolSuccess | ProtocolError | undefined> {
      const params = command.params ?? {};
      switch (command.method) {
        case 'subscription.subscribe':
          session.subscribe(command.id, params); // answers itself, ahead of what it replays
          return undefined;
        case 'subscription.unsubscribe':
          return session.unsubscribe(command.id, params);
        case 'agent.getTree':
          return success(command.id, { tree: session.tree() }, meta());
        case 'run.start':
          return runStart(command, params);
        case 'input.respond':
          return inputRespond(command, params);
        case 'state.get':
          return stateGet(command, params);
        case 'subscription.reconnect':
          return failure(command.id, 'not_supported', 'subscription.reconnect is not supported by this server.');
        default:
          return failure(command.id, 'unknown_command', `Unknown protocol command: ${command.method}`);
      }
    }

    socket.on('message', (data: RawData) => {
      const parsed = parseCommand(text(data));
      if ('refusal' in parsed) {
        socket.send(JSON.stringify(parsed.refusal));
        return;
      }
      const { command } = parsed;
      handle(command).then(
        (response) => {
          if (response && socket.readyState === socket.OPEN) socket.send(JSON.stringify(response));
        },
        (error: unknown) => {
          if ((error as { statusCode?: number }).statusCode === undefined)
            services.logger.warn({ err: error, thread_id: threadId }, 'A protocol command failed.');
          if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(commandFailure(command.id, error)));
        },
      );
    });
    // A quiet connection is pinged, as SSE streams get heartbeats, so that proxies keep it open.
    const heartbeat = setInterval(() => socket.ping(), services.heartbeatMs);
    heartbeat.unref();
    socket.on('close', () => {
      clearInterval(heartbeat);
      session.close();
    });
  }

  app.route({
    method: 'GET',
    url: '/threads/:thread_id/stream/events',
    schema: { params: threadIdParams, hide: true },
    // Before the upgrade, so a refusal is an HTTP answer. A thread that does not exist yet is
    // created by the first `run.start`, as on the reference server.
    preHandler: async (request) => {
      const threadId = (request.params as { thread_id: string }).thread_id;
      if (!services.access.enabled) return;
      if (!(await services.threads.exists(threadId))) return;
      await authorizeThread(services, request, 'threads:read', threadId);
    },
    handler: async (_request, reply) => {
      const failure = new ApiUpgradeRequiredError([
        'This route is a WebSocket: open it with a WebSocket client (Upgrade: websocket)',
      ]);
      return reply
        .code(426)
        .header('upgrade', 'websocket')
        .send(errorBody(426, failure.code, failure.message));
    },
    wsHandler: (socket, request) => connect(socket, request as FastifyRequest<{ Params: { thread_id: string } }>),
  });
}
