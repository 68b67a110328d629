// Agent2Agent (A2A): `POST /a2a/{assistant_id}` (JSON-RPC 2.0; `message/send`, `message/stream` as
// SSE, `tasks/get`, `tasks/cancel`, and their v1.0 names) and the agent card of each assistant at
// `GET /.well-known/agent-card.json?assistant_id=…` and `GET /a2a/{assistant_id}/.well-known/agent-card.json`.
// Behind the same request guard as the rest of the API; the assistant must be one the caller may
// read and whose graph takes `messages`. The JSON-RPC plumbing is `@a2a-js/sdk`'s transport
// handlers; what the methods do is `../a2a/handler.ts`.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { agentCard, coreCard, publicBaseUrl } from '../a2a/card.ts';
import { AssistantA2AHandler } from '../a2a/handler.ts';
import { invalid, notFound } from '../domain/api-errors.ts';
import type { Assistant, JsonObject } from '../storage/storage.ts';
import { inputSchemaOf, readableAssistant, takesMessages } from './agent-calls.ts';
import type { AgentServices } from './services.ts';
import { writeHeartbeat } from './sse.ts';

const assistantParams = {
  type: 'object',
  required: ['assistant_id'],
  properties: { assistant_id: { type: 'string', minLength: 1 } },
} as const;
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

export function registerA2aRoutes(app: FastifyInstance, services: AgentServices): void {
  const card = async (request: FastifyRequest, idOrGraph: string | undefined) => {
    if (!idOrGraph) throw invalid('querystring.assistant_id: is required (the assistant whose agent card to serve)');
    const { assistant, fields, problem } = await a2aAgent(services, request, idOrGraph);
    if (problem) throw problem.status === 404 ? notFound(problem.message) : invalid(problem.message);
    return agentCard(assistant!, publicBaseUrl(request), fields);
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
    { schema: { params: assistantParams, hide: true } },
    async (request, reply) => {
      const body = request.body;
      if (!isObject(body)) {
        return reply.code(400).send({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: 'Invalid message format: the body must be one JSON-RPC request object' },
        });
      }
      const id = (body.id ?? null) as string | number | null;
      const rpcError = (status: number, code: number, message: string) =>
        reply.code(status).send({ jsonrpc: '2.0', id, error: { code, message } });
      if (body.jsonrpc !== '2.0') return rpcError(400, -32600, 'Invalid JSON-RPC request: \'jsonrpc\' must be "2.0"');
      // A notification (no id) or a response asks for no answer.
      if (!('id' in body) || typeof body.method !== 'string') return reply.code(202).send();
      const { assistant, fields, problem } = await a2aAgent(services, request, request.params.assistant_id);
      if (problem) return rpcError(problem.status === 404 ? 404 : 200, -32602, problem.message);
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
      const transport = body.method.includes('/')
        ? new LegacyJsonRpcTransportHandler(handler)
        : new JsonRpcTransportHandler(handler);
      const result = await transport.handle(body, new ServerCallContext());
      if (!(Symbol.asyncIterator in result)) return reply.send(result);
      return streamResponses(reply, result, services.heartbeatMs);
    },
  );

  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Method not allowed: send JSON-RPC requests with POST' },
      });
  app.get('/a2a/:assistant_id', { schema: { hide: true } }, notAllowed);
  app.delete('/a2a/:assistant_id', { schema: { hide: true } }, notAllowed);
}

/** Sends each JSON-RPC response of a stream as one SSE event; ends after the last. */
async function streamResponses(
  reply: FastifyReply,
  responses: AsyncGenerator<unknown, void, undefined>,
  heartbeatMs: number,
): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.flushHeaders();
  const heartbeat = setInterval(() => writeHeartbeat(raw), heartbeatMs);
  heartbeat.unref();
  try {
    for await (const response of responses) {
      if (raw.destroyed) break;
      raw.write(`data: ${JSON.stringify(response)}\n\n`);
    }
  } finally {
    clearInterval(heartbeat);
    if (!raw.writableEnded) raw.end();
  }
}
