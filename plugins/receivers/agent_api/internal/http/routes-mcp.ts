// `/mcp`: the deployment's assistants as MCP tools over Streamable HTTP (JSON-RPC). Stateless: each
// POST gets a fresh MCP server and transport from `@modelcontextprotocol/sdk` (no session id, no
// server-initiated stream; replies are JSON, never SSE), so any instance can answer any request.
// It sits behind the same request guard as the rest of the API (API keys, custom auth, the host
// and cross-site checks), and tools run under the caller's identity. GET and DELETE are 405.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createMcpServer } from '../mcp/server.ts';
import type { AgentServices } from './services.ts';

function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(request.headers)) {
    if (value === undefined || key === 'content-length' || key === 'transfer-encoding') continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(key, item);
  }
  return new Request(`http://${request.hostname || 'localhost'}${request.url}`, { method: 'POST', headers });
}

export function registerMcpRoutes(app: FastifyInstance, services: AgentServices): void {
  const post = async (request: FastifyRequest, reply: FastifyReply) => {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const server = createMcpServer(services, request);
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(webRequest(request), { parsedBody: request.body });
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
      .send({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; send requests with POST.' },
      });
  for (const path of ['/mcp', '/mcp/']) {
    app.post(path, { schema: { hide: true } }, post);
    app.get(path, { schema: { hide: true } }, notAllowed);
    app.delete(path, { schema: { hide: true } }, notAllowed);
  }
}
