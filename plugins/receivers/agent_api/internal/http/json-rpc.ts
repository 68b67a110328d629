// What the JSON-RPC endpoints (`/mcp`, `/a2a/…`) share: their error envelope, and a route error
// handler that answers a body that is not JSON as JSON-RPC does (HTTP 400, -32700 "Parse error")
// instead of with the API's own error body, so a JSON-RPC client can read the answer. Every other
// error goes on to the API's error handler.

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiMalformedJsonError } from '../../errors.ts';

export type JsonRpcId = string | number | null;

export function rpcError(id: JsonRpcId, code: number, message: string) {
  return { jsonrpc: '2.0' as const, id, error: { code, message } };
}

export function jsonRpcErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ApiMalformedJsonError) {
    return reply.code(400).send(rpcError(null, -32700, 'Parse error: the request body is not valid JSON'));
  }
  throw error; // the API's error handler answers it
}
