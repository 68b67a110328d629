// Turns what graphs produce (LangChain messages, interrupts, commands inside plain objects) into
// the JSON the API sends. A message is its `toDict()` data with its `type` beside it — the flat
// shape the SDKs read and the LangGraph.js server sends: fields a message does not have (`name`,
// `usage_metadata`, ...) are left out rather than written as null, so clients comparing payloads
// with that server's see the same objects.

import { isBaseMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';

export function messageToWire(message: BaseMessage): Record<string, unknown> {
  const { type, data } = message.toDict() as unknown as { type: string; data: Record<string, unknown> };
  const wire: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) if (value !== undefined) wire[key] = toWire(value);
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
