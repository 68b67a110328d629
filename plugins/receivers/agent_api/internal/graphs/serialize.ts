// Turns what graphs produce (LangChain messages, interrupts, commands inside plain objects) into
// the JSON the API sends. Messages take the flat shape the SDKs read — `type`, `content`,
// `additional_kwargs`, `response_metadata`, `name`, `id`, `example`, and per type `tool_calls`,
// `invalid_tool_calls`, `usage_metadata` or `tool_call_id`, `artifact`, `status` — with absent
// optional fields written as null rather than left out: the API's documented message shape (the
// Python server's). The LangGraph.js server leaves them out; clients reading a field see null or
// undefined alike, and only a deep-equality comparison of whole messages tells the two apart
// (the agent_api README, "Different on purpose").

import { isBaseMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';

export function messageToWire(message: BaseMessage): Record<string, unknown> {
  const { type, data } = message.toDict() as unknown as { type: string; data: Record<string, unknown> };
  const wire: Record<string, unknown> = {
    content: toWire(data.content),
    additional_kwargs: toWire(data.additional_kwargs ?? {}),
    response_metadata: toWire(data.response_metadata ?? {}),
    type,
    name: data.name ?? null,
    id: data.id ?? message.id ?? null,
    example: false,
  };
  if (type === 'ai') {
    wire.tool_calls = toWire(data.tool_calls ?? []);
    wire.invalid_tool_calls = toWire(data.invalid_tool_calls ?? []);
    wire.usage_metadata = toWire(data.usage_metadata ?? null);
  } else if (type === 'tool') {
    wire.tool_call_id = data.tool_call_id;
    wire.artifact = toWire(data.artifact ?? null);
    wire.status = data.status ?? 'success';
  }
  for (const [key, value] of Object.entries(data)) if (!(key in wire) && value !== undefined) wire[key] = toWire(value);
  return wire;
}

/** A deep copy of `value` holding only JSON data, with messages flattened as above. */
export function toWire(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value !== 'object') return typeof value === 'bigint' ? value.toString() : value;
  if (depth > 64) return null; // Cycles and absurd nesting end here rather than overflowing the stack.
  if (isBaseMessage(value)) return messageToWire(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => toWire(item, depth + 1) ?? null);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value instanceof Map) return toWire(Object.fromEntries(value), depth + 1);
  if (value instanceof Set) return toWire([...value], depth + 1);
  if (value instanceof Error) return { error: value.name, message: value.message };
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || typeof item === 'function') continue;
    out[key] = toWire(item, depth + 1);
  }
  return out;
}
