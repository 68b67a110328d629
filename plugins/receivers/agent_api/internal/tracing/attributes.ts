// Building OTLP attributes (the tagged AnyValue of src/model/spans.ts) from JavaScript values, and
// the bounded JSON text that span payloads (`input.value`, `gen_ai.input.messages`, ...) are
// written as.

import { isBaseMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import type { AnyValue, Attribute } from '../../../../../src/model/spans.ts';

/** Longest JSON text written into one attribute; longer payloads are cut and marked. */
export const MAX_ATTRIBUTE_CHARS = 64 * 1024;

export function stringAttr(key: string, value: string): Attribute {
  return { key, value: { type: 'string', value } };
}

export function intAttr(key: string, value: number | bigint): Attribute {
  return { key, value: { type: 'int', value: BigInt(typeof value === 'number' ? Math.trunc(value) : value) } };
}

export function boolAttr(key: string, value: boolean): Attribute {
  return { key, value: { type: 'bool', value } };
}

/** A scalar as its natural AnyValue; anything else as JSON text. */
export function anyAttr(key: string, value: unknown): Attribute {
  return { key, value: toAnyValue(value) };
}

function toAnyValue(value: unknown): AnyValue {
  switch (typeof value) {
    case 'string':
      return { type: 'string', value };
    case 'boolean':
      return { type: 'bool', value };
    case 'bigint':
      return { type: 'int', value };
    case 'number':
      return Number.isInteger(value) ? { type: 'int', value: BigInt(value) } : { type: 'double', value };
    case 'undefined':
      return { type: 'empty' };
    default:
      return value === null ? { type: 'empty' } : { type: 'string', value: boundedJson(value) };
  }
}

/** A message in the compact shape LangSmith shows (`{role, content, tool_calls?, ...}`). */
export function plainMessage(message: BaseMessage): Record<string, unknown> {
  const plain: Record<string, unknown> = { role: roleOf(message), content: message.content };
  if (message.id) plain.id = message.id;
  if (message.name) plain.name = message.name;
  const toolCalls = (message as { tool_calls?: unknown[] }).tool_calls;
  if (Array.isArray(toolCalls) && toolCalls.length > 0) plain.tool_calls = toolCalls;
  const toolCallId = (message as { tool_call_id?: string }).tool_call_id;
  if (toolCallId) plain.tool_call_id = toolCallId;
  return plain;
}

/** OTel GenAI roles: system, user, assistant, tool. */
export function roleOf(message: BaseMessage): string {
  switch (message.getType()) {
    case 'human':
      return 'user';
    case 'ai':
      return 'assistant';
    case 'system':
    case 'developer':
      return 'system';
    case 'tool':
    case 'function':
      return 'tool';
    default:
      return (message as { role?: string }).role ?? message.getType();
  }
}

/**
 * JSON text of a value, with LangChain messages compacted, bigints as numbers' text, cycles and
 * functions dropped, and the result cut at `MAX_ATTRIBUTE_CHARS` (a truncated text no longer parses;
 * the marker at its end says so).
 */
export function boundedJson(value: unknown, maxChars = MAX_ATTRIBUTE_CHARS): string {
  const seen = new WeakSet<object>();
  let text: string;
  try {
    text =
      JSON.stringify(value, (_key, item: unknown) => {
        if (typeof item === 'bigint') return item.toString();
        if (typeof item === 'function' || typeof item === 'symbol') return undefined;
        if (typeof item === 'object' && item !== null) {
          if (isBaseMessage(item)) return plainMessage(item);
          if (seen.has(item)) return '[circular]';
          seen.add(item);
        }
        return item;
      }) ?? 'null';
  } catch (error) {
    text = JSON.stringify({ unserializable: (error as Error).message });
  }
  return text.length > maxChars ? `${text.slice(0, maxChars)}…[truncated ${text.length - maxChars} chars]` : text;
}
