// Agent2Agent (A2A): `POST /a2a/{assistant_id}` (JSON-RPC 2.0; `message/send`, `message/stream` as
// SSE, `tasks/get`, `tasks/cancel`, and their v1.0 names) and the agent card of each assistant at
// `GET /.well-known/agent-card.json?assistant_id=…` and `GET /a2a/{assistant_id}/.well-known/agent-card.json`.
// Behind the same request guard as the rest of the API; the assistant must be one the caller may
// read and whose graph takes `messages`. The JSON-RPC plumbing is `@a2a-js/sdk`'s transport
// handlers; what the methods do is `../a2a/handler.ts`.
//
// HTTP rules, as LangGraph's server and the SDK's own Express handler apply them: a body that is
// not JSON is 400/-32700, one that is not a JSON-RPC 2.0 request object 400/-32600, a notification
// 202; `Accept` must allow `text/event-stream` for the streaming methods and `application/json`
// for the others (400 otherwise; no header allows both); an `A2A-Version` other than 0.3 or 1.0
// gets -32009; a stream that fails before its first event is one JSON-RPC error (HTTP 200), one
// that fails later ends with an event holding the error. GET, DELETE, PUT and PATCH are 405.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { agentCard, coreCard, publicBaseUrl } from '../a2a/card.ts';
import { invalid, notFound } from '../api/errors.ts';
import { accepts } from './accept.ts';
import { jsonRpcErrorHandler, rpcError } from './json-rpc.ts';
import type { JsonRpcId } from './json-rpc.ts';
import type { Assistant, JsonObject } from '../storage/storage.ts';
import { inputSchemaOf, readableAssistant, takesMessages } from './agent-calls.ts';
import type { AgentServices } from './services.ts';
import { openEventStream } from './sse.ts';

const assistantParams = {
  type: 'object',
  required: ['assistant_id'],
  properties: { assistant_id: { type: 'string', minLength: 1 } },
} as const;
/** Methods answered with Server-Sent Events (v0.3 and v1.0 names). */
const STREAMING_METHODS = new Set(['message/stream', 'tasks/resubscribe', 'SendStreamingMessage', 'SubscribeToTask']);
/** `A2A-Version`s this endpoint speaks (absent or empty means 0.3). */
const SUPPORTED_VERSIONS = ['0.3', '1.0'];

const cardQuery = {
  type: 'object',
  properties: { assistant_id: { type: 'string', minLength: 1 } },
} as const;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The assistant as an A2A agent: readable by the caller, and taking `messages`; else the reason. */
async function a2aAgent(
  services: AgentServices,
  request: FastifyRequest,
  idOrGraph: string,
): Promise<{ assistant?: Assistant; fields: string[]; problem?: { status: number; message: string } }> {
  let assistant: Assistant;
  try {
    assistant = await readableAssistant(services, request, idOrGraph);
  } catch {
    return { fields: [], problem: { status: 404, message: `Assistant '${idOrGraph}' not found` } };
  }
  const schema = await inputSchemaOf(services, assistant);
  const fields = isObject(schema.properties) ? Object.keys(schema.properties) : [];
  if (!takesMessages(schema)) {
    return {
      assistant,
      fields,
      problem: {
        status: 422,
        message: `Assistant '${idOrGraph}' (graph '${assistant.graph_id}') cannot be used over A2A: A2A agents take a 'messages' input, and this graph's input fields are: ${fields.join(', ') || 'none'}`,
      },
    };
  }
  return { assistant, fields };
}

/**
 * The A2A SDK's JSON-RPC handlers and this server's A2A handler, imported on the first A2A request
 * (Node keeps them): most deployments never receive one, and the SDK would otherwise load with
 * every server.
 */
async function loadA2a() {
  const [{ JsonRpcTransportHandler, ServerCallContext }, { LegacyJsonRpcTransportHandler }, { AssistantA2AHandler }] =
    await Promise.all([
      import('@a2a-js/sdk/server'),
      import('@a2a-js/sdk/compat/v0_3/server'),
      import('../a2a/handler.ts'),
    ]);
  return { JsonRpcTransportHandler, ServerCallContext, LegacyJsonRpcTransportHandler, AssistantA2AHandler };
}

export function registerA2aRoutes(app: FastifyInstance, services: AgentServices): void {
  const card = async (request: FastifyRequest, idOrGraph: string | undefined) => {
    if (!idOrGraph) throw invalid('querystring.assistant_id: is required (the assistant whose agent card to serve)');
    const { assistant, fields, problem } = await a2aAgent(services, request, idOrGraph);
    if (problem) throw problem.status === 404 ? notFound(problem.message) : invalid(problem.message);
    return agentCard(assistant!, publicBaseUrl(request), fields, { apiKeyRequired: services.apiKeysRequired });
  };
  app.get<{ Querystring: FromSchema<typeof cardQuery> }>(
    '/.well-known/agent-card.json',
    { schema: { querystring: cardQuery, hide: true } },
    (request) => card(request, request.query.assistant_id),
  );
  app.get<{ Params: FromSchema<typeof assistantParams> }>(
    '/a2a/:assistant_id/.well-known/agent-card.json',
    { schema: { params: assistantParams, hide: true } },
    (request) => card(request, request.params.assistant_id),
  );

  app.post<{ Params: FromSchema<typeof assistantParams> }>(
    '/a2a/:assistant_id',
    { schema: { params: assistantParams, hide: true }, errorHandler: jsonRpcErrorHandler },
    async (request, reply) => {
      const body = request.body;
      if (!isObject(body)) {
        return reply
          .code(400)
          .send(rpcError(null, -32600, 'Invalid message format: the body must be one JSON-RPC request object'));
      }
      const id = (body.id ?? null) as JsonRpcId;
      const fail = (status: number, code: number, message: string) =>
        reply.code(status).send(rpcError(id, code, message));
      if (body.jsonrpc !== '2.0') return fail(400, -32600, 'Invalid JSON-RPC request: \'jsonrpc\' must be "2.0"');
      // A notification (no id) or a response asks for no answer.
      if (!('id' in body) || typeof body.method !== 'string') return reply.code(202).send();
      const streaming = STREAMING_METHODS.has(body.method);
      if (!accepts(request.headers.accept, streaming ? 'text/event-stream' : 'application/json')) {
        return fail(
          400,
          -32600,
          streaming
            ? `Accept header must include text/event-stream for streaming: ${body.method} answers with Server-Sent Events`
            : `Accept header must include application/json: ${body.method} answers with one JSON-RPC response`,
        );
      }
      const version = requestedVersion(request.headers['a2a-version']);
      if (version !== undefined && !SUPPORTED_VERSIONS.includes(version)) {
        return fail(
          200,
          -32009,
          `The requested A2A protocol version '${version}' is not supported. Supported versions: ${SUPPORTED_VERSIONS.join(', ')}`,
        );
      }
      const { assistant, fields, problem } = await a2aAgent(services, request, request.params.assistant_id);
      if (problem) return fail(problem.status === 404 ? 404 : 200, -32602, problem.message);
      const { JsonRpcTransportHandler, ServerCallContext, LegacyJsonRpcTransportHandler, AssistantA2AHandler } =
        await loadA2a();
      const handler = new AssistantA2AHandler(
        services,
        request,
        assistant!,
        coreCard(agentCard(assistant!, publicBaseUrl(request), fields)),
      );
      // Like LangGraph's server, message/send waits for the task to end unless `blocking: false`.
      const params = isObject(body.params) ? body.params : undefined;
      if (body.method === 'message/send' && params) {
        const configuration = isObject(params.configuration) ? params.configuration : {};
        params.configuration = { ...configuration, blocking: configuration.blocking ?? true };
      }
      // v0.3 method names (`message/send`) and v1.0 ones (`SendMessage`) each get their wire format.
      const legacy = body.method.includes('/');
      const transport = legacy ? new LegacyJsonRpcTransportHandler(handler) : new JsonRpcTransportHandler(handler);
      const mapError = (error: unknown) =>
        legacy
          ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error)
          : JsonRpcTransportHandler.mapToJSONRPCError(error);
      const context = new ServerCallContext({ requestedVersion: version ?? (legacy ? '0.3' : '1.0') });
      const result = await transport.handle(body, context);
      if (!(Symbol.asyncIterator in result)) return reply.send(result);
      // A stream that fails before its first event (a refused message, an unknown task, a method
      // this server does not stream) is answered as one JSON-RPC error, not as an empty stream.
      const responses = result[Symbol.asyncIterator]();
      let first: IteratorResult<unknown, void>;
      try {
        first = await responses.next();
      } catch (error) {
        return reply.send({ jsonrpc: '2.0', id, error: mapError(error) });
      }
      return streamResponses(reply, first, responses, services.heartbeatMs, (error) => ({
        jsonrpc: '2.0',
        id,
        error: mapError(error),
      }));
    },
  );

  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send(rpcError(null, -32600, 'Method not allowed: send JSON-RPC requests with POST'));
  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: '/a2a/:assistant_id',
    schema: { hide: true },
    handler: notAllowed,
  });
}

/** The `A2A-Version` header as `major.minor`; undefined when absent or empty (meaning 0.3). */
function requestedVersion(header: string | string[] | undefined): string | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  const match = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(value);
  return match ? `${match[1]}.${match[2]}` : value;
}

/**
 * Sends each JSON-RPC response of a stream as one SSE event, starting with `first` (already read);
 * ends after the last. An error in the middle of the stream is sent as a last event holding a
 * JSON-RPC error.
 */
async function streamResponses(
  reply: FastifyReply,
  first: IteratorResult<unknown, void>,
  responses: AsyncIterator<unknown, void, undefined>,
  heartbeatMs: number,
  errorResponse: (error: unknown) => unknown,
): Promise<void> {
  const { raw, stopHeartbeat } = openEventStream(reply, heartbeatMs);
  try {
    for (let next = first; !next.done && !raw.destroyed; next = await responses.next()) {
      raw.write(`data: ${JSON.stringify(next.value)}\n\n`);
    }
  } catch (error) {
    if (!raw.destroyed) raw.write(`data: ${JSON.stringify(errorResponse(error))}\n\n`);
  } finally {
    stopHeartbeat();
    if (!raw.writableEnded) raw.end();
    if (raw.destroyed) await responses.return?.();
  }
}
