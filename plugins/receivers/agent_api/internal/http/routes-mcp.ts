// `/mcp`: the deployment's assistants as MCP tools over Streamable HTTP (JSON-RPC). Stateless: each
// POST gets a fresh MCP server and transport from `@modelcontextprotocol/sdk` (no session id, no
// server-initiated stream; replies are JSON, never SSE), so any instance can answer any request.
// It sits behind the same request guard as the rest of the API (API keys, custom auth, the host
// and cross-site checks: 401/403 with a JSON body before any MCP message), and tools run under the
// caller's identity.
//
// HTTP rules, checked here before the SDK's transport sees the request:
// - `Accept` must allow `application/json` (the only type this server answers with; a missing
//   header allows it); else 406. MCP clients send `application/json, text/event-stream`, which
//   the SDK's transport insists on; a client accepting JSON alone is served too, as the platform
//   serves it.
// - A body that is not JSON: 400, -32700; not a JSON-RPC 2.0 message: 400, -32600.
// - GET, DELETE, PUT and PATCH: 405 (`Allow: POST`).
// The SDK's transport then checks `MCP-Protocol-Version` (400 for a version it does not support)
// and answers notifications and responses with 202.
//
// The SDK (and `mcp/server.ts`, which builds on it) loads on the first MCP request, not when the
// server starts: it is among the largest modules the agent server would otherwise load, and most
// deployments never receive an MCP request.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accepts } from './accept.ts';
import { jsonRpcErrorHandler, rpcError } from './json-rpc.ts';
import type { AgentServices } from './services.ts';

/** What the transport asks of every POST; this server answers JSON only, so JSON is what counts. */
const TRANSPORT_ACCEPT = 'application/json, text/event-stream';

function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(request.headers)) {
    if (value === undefined || key === 'content-length' || key === 'transfer-encoding' || key === 'accept') continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(key, item);
  }
  headers.set('accept', TRANSPORT_ACCEPT);
  return new Request(`http://${request.hostname || 'localhost'}${request.url}`, { method: 'POST', headers });
}

function isMessage(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';
}

/** The MCP SDK's transport and this server's MCP server, imported on the first request (Node keeps them). */
async function loadMcp() {
  const [{ WebStandardStreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('../mcp/server.ts'),
  ]);
  return { WebStandardStreamableHTTPServerTransport, createMcpServer };
}

export function registerMcpRoutes(app: FastifyInstance, services: AgentServices): void {
  const post = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!accepts(request.headers.accept, 'application/json')) {
      return reply
        .code(406)
        .send(
          rpcError(
            null,
            -32000,
            'Not Acceptable: this MCP server answers with application/json; send Accept: application/json, text/event-stream',
          ),
        );
    }
    const body = request.body;
    if (body === undefined) return reply.code(400).send(rpcError(null, -32700, 'Parse error: the request has no body'));
    if (!(Array.isArray(body) ? body.length > 0 && body.every(isMessage) : isMessage(body))) {
      return reply
        .code(400)
        .send(rpcError(null, -32600, 'Invalid Request: the body must be a JSON-RPC 2.0 message ("jsonrpc": "2.0")'));
    }
    const { WebStandardStreamableHTTPServerTransport, createMcpServer } = await loadMcp();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const server = createMcpServer(services, request);
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(webRequest(request), { parsedBody: body });
      reply.code(response.status);
      response.headers.forEach((value, key) => {
        if (key !== 'content-length' && key !== 'transfer-encoding') reply.header(key, value);
      });
      const text = await response.text();
      return reply.send(text === '' ? undefined : text);
    } finally {
      await server.close().catch(() => undefined);
    }
  };
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send(rpcError(null, -32000, 'Method not allowed: this MCP server is stateless; send requests with POST.'));
  for (const path of ['/mcp', '/mcp/']) {
    app.post(path, { schema: { hide: true }, errorHandler: jsonRpcErrorHandler }, post);
    app.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH'], url: path, schema: { hide: true }, handler: notAllowed });
  }
}
