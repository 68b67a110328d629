// Turns what graphs produce (LangChain messages, interrupts, commands inside plain objects) into
// the JSON the API sends. A message is what the LangGraph.js server sends: the fields of its
// `toDict()` with its `type` beside them — `content`, `additional_kwargs`, `response_metadata`,
// `id`, and per type `tool_calls` and `invalid_tool_calls` (`ai`) or `tool_call_id` (`tool`) —
// and the optional ones (`name`, `usage_metadata`, `artifact`, `status`, ...) only when set.
// Clients compare whole messages (the SDK's tests do, with deep equality), so a field the
// reference leaves out is left out here too rather than sent as null.

import { isBaseMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';

export function messageToWire(message: BaseMessage): Record<string, unknown> {
  const stored = message.toDict();
  const type = stored.type;
  // Read field by field below; a copy is an object type, which any property name may index.
  const data: Record<string, unknown> = { ...stored.data };
  const wire: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) if (value !== undefined) wire[key] = toWire(value);
  // A message whose id was set on the object alone (not through its constructor) keeps it.
  if (wire.id === undefined && message.id !== undefined) wire.id = message.id;
  wire.type = type;
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
