// The MCP server of a deployment: one tool per assistant the caller may see, built on
// `@modelcontextprotocol/sdk`'s low-level `Server` (the tools come from the assistants at request
// time, with raw JSON Schemas, which the high-level `McpServer` does not take).
//
// - Tool name: the assistant's name with characters outside `[A-Za-z0-9_.-]` replaced by `_`, cut
//   to 128; a name already taken by an older assistant gets `_2`, `_3`, ... (oldest first, so a
//   name keeps naming the same assistant). Description: the assistant's, else one naming its graph.
// - Input schema: the graph's input schema (always `type: "object"`); a graph taking `messages`
//   gets a plain `[{role, content}]` list schema for it, which model clients fill in reliably.
// - `tools/call` runs the assistant threadless (a temporary thread, deleted afterwards) with the
//   arguments as input, under the caller's identity, and answers the final answer (the last AI
//   message's text, else the output as JSON) as text content and the final values as structured
//   content. A failed run, a run refused (bad input, hidden assistant) or a run that paused on an
//   interrupt (which a threadless call cannot resume) is a tool error (`isError: true`). An unknown
//   tool name is a protocol error (-32602), as MCP specifies.

import type { FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { RunCreate } from '../domain/runs.ts';
import { createRun } from '../http/access.ts';
import { finalAnswer, inputSchemaOf, takesMessages, visibleAssistants } from '../http/agent-calls.ts';
import type { AgentServices } from '../http/services.ts';
import type { Assistant, JsonObject } from '../storage/storage.ts';

const PAGE = 100;

const MESSAGES_SCHEMA = {
  type: 'array',
  description: 'The conversation so far; the last message is usually the user’s request.',
  items: {
    type: 'object',
    properties: {
      role: { type: 'string', enum: ['user', 'assistant', 'system'], description: 'Who wrote the message.' },
      content: { type: 'string', description: 'The text of the message.' },
    },
    required: ['role', 'content'],
  },
  minItems: 1,
};

function toolName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 128);
  return cleaned === '' ? 'assistant' : cleaned;
}

/** Tool names for the assistants, oldest first: unique, stable while the older ones exist. */
export function toolNames(assistants: readonly Assistant[]): Map<string, Assistant> {
  const names = new Map<string, Assistant>();
  for (const assistant of assistants) {
    const base = toolName(assistant.name);
    let name = base;
    for (let n = 2; names.has(name); n++) name = `${base.slice(0, 120)}_${n}`;
    names.set(name, assistant);
  }
  return names;
}

async function toolOf(services: AgentServices, name: string, assistant: Assistant): Promise<Tool> {
  const schema = await inputSchemaOf(services, assistant);
  if (takesMessages(schema)) {
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    schema.properties = { ...(schema.properties as JsonObject), messages: MESSAGES_SCHEMA };
    schema.required = [...new Set([...required, 'messages'])];
  }
  return {
    name,
    title: assistant.name,
    description: assistant.description || `Runs the assistant "${assistant.name}" (graph ${assistant.graph_id}).`,
    inputSchema: schema as Tool['inputSchema'],
  };
}

function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

export function createMcpServer(services: AgentServices, request: FastifyRequest): Server {
  const server = new Server(
    { name: 'tracepipe-agent-server', version: '0.1.0' },
    { capabilities: { tools: { listChanged: false } } },
  );

  server.setRequestHandler(ListToolsRequestSchema, async (message) => {
    const cursor = message.params?.cursor;
    const offset = cursor !== undefined && /^\d+$/.test(cursor) ? Number(cursor) : 0;
    const entries = [...toolNames(await visibleAssistants(services, request))];
    const page = entries.slice(offset, offset + PAGE);
    const tools = await Promise.all(page.map(([name, assistant]) => toolOf(services, name, assistant)));
    return offset + PAGE < entries.length ? { tools, nextCursor: String(offset + PAGE) } : { tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (message): Promise<CallToolResult> => {
    const { name, arguments: args } = message.params;
    const assistant = toolNames(await visibleAssistants(services, request)).get(name);
    if (!assistant) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    let runId: string;
    try {
      const body: RunCreate = { assistant_id: assistant.assistant_id, input: args ?? {}, on_completion: 'delete' };
      runId = (await createRun(services, request, undefined, body)).run_id;
    } catch (error) {
      return toolError(`The assistant could not be run: ${(error as Error).message}`);
    }
    const controller = new AbortController();
    request.raw.on('close', () => controller.abort());
    await services.coordinator.waitFor(runId, controller.signal);
    const values = (await services.coordinator.result(runId)) as JsonObject | null;
    const failure = values?.__error__ as { error?: string; message?: string } | undefined;
    if (failure) return toolError(`${failure.error ?? 'Error'}: ${failure.message ?? 'the run failed'}`);
    if (values && Array.isArray(values.__interrupt__) && values.__interrupt__.length > 0) {
      return toolError(
        `The assistant paused for human input, which a tool call cannot give: ${JSON.stringify(values.__interrupt__)}`,
      );
    }
    return {
      content: [{ type: 'text', text: finalAnswer(values) }],
      ...(values && typeof values === 'object' && !Array.isArray(values) ? { structuredContent: values } : {}),
    };
  });

  return server;
}
