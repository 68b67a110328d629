// What the MCP and A2A endpoints share: the assistants a caller may see (the custom auth handler's
// `assistants:search` filter, as `POST /assistants/search` applies it), an assistant's input
// schema, and reading a run's final answer out of its values.

import type { FastifyRequest } from 'fastify';
import type { Assistant, JsonObject } from '../storage/storage.ts';
import { authorizeAssistant } from './access.ts';
import type { AgentServices } from './services.ts';

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every assistant the caller may see, oldest first. */
export async function visibleAssistants(services: AgentServices, request: FastifyRequest): Promise<Assistant[]> {
  const filters = await services.access.authorize(request, 'assistants:search', {
    graph_id: undefined,
    metadata: undefined,
    limit: 10_000,
    offset: 0,
  } as never);
  const page = await services.assistants.search({
    ...(filters ? { auth: filters } : {}),
    limit: 10_000,
    offset: 0,
    sort_by: 'created_at',
    sort_order: 'asc',
  });
  return page.items.filter((assistant) => services.graphs.has(assistant.graph_id));
}

/** The assistant (id or graph id) if the caller may read it; a 404 error otherwise. */
export async function readableAssistant(
  services: AgentServices,
  request: FastifyRequest,
  idOrGraph: string,
): Promise<Assistant> {
  const { assistant } = await authorizeAssistant(services, request, 'assistants:read', idOrGraph);
  return assistant ?? (await services.assistants.get(idOrGraph));
}

/** The graph's input JSON schema as an object schema (`{type: "object"}` when unknown). */
export async function inputSchemaOf(services: AgentServices, assistant: Assistant): Promise<JsonObject> {
  let schema: unknown;
  try {
    const schemas = await services.graphs.schemas(assistant.graph_id, {
      config: { configurable: (assistant.config.configurable as JsonObject) ?? {} },
    });
    schema = schemas.input_schema;
  } catch {
    schema = undefined;
  }
  const base: JsonObject = isObject(schema) ? { ...schema } : {};
  return { ...base, type: 'object' };
}

/** Whether the graph takes a `messages` list (a chat graph). */
export function takesMessages(schema: JsonObject): boolean {
  return isObject(schema.properties) && 'messages' in schema.properties;
}

/** The text of a message's content (a string, or the text blocks of a list). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block) =>
        typeof block === 'string' ? block : isObject(block) && typeof block.text === 'string' ? block.text : '',
      )
      .join('');
  }
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

/** Whether a serialised LangChain message is the AI's (`type: "ai"` or `role: "assistant"`). */
export function isAiMessage(message: unknown): boolean {
  if (!isObject(message)) return false;
  const kwargs = isObject(message.kwargs) ? message.kwargs : undefined;
  const type = message.type ?? message.role ?? (Array.isArray(message.id) ? message.id.at(-1) : undefined);
  return (
    type === 'ai' || type === 'assistant' || type === 'AIMessage' || type === 'AIMessageChunk' || !!kwargs?.tool_calls
  );
}

/** The messages of a run's values, if it has any. */
export function messagesOf(values: unknown): unknown[] {
  return isObject(values) && Array.isArray(values.messages) ? values.messages : [];
}

/** The final answer: the last AI message's text, else the whole output as JSON. */
export function finalAnswer(values: unknown): string {
  const last = [...messagesOf(values)].reverse().find(isAiMessage);
  if (last && isObject(last)) return contentText(last.content ?? (isObject(last.kwargs) ? last.kwargs.content : ''));
  return JSON.stringify(values ?? null);
}
