// The bounded text that span payloads (`input.value`, `gen_ai.input.messages`, ...) are written
// as: JSON with LangChain messages compacted, cut at a size limit with a marker.

import { isBaseMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';

/** Longest JSON text written into one attribute; longer payloads are cut and marked. */
export const MAX_ATTRIBUTE_CHARS = 64 * 1024;

/** `text`, cut at `MAX_ATTRIBUTE_CHARS` with a marker saying how much was cut. */
export function boundedText(text: string, maxChars = MAX_ATTRIBUTE_CHARS): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}…[truncated ${text.length - maxChars} chars]` : text;
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
 * `item` with the LangChain messages among its own values (an array's items, an object's
 * properties) replaced by their compact form; `item` itself when it holds none.
 */
function withMessagesCompacted(item: object): object {
  if (Array.isArray(item)) {
    return item.some((entry) => isBaseMessage(entry))
      ? item.map((entry) => (isBaseMessage(entry) ? plainMessage(entry) : entry))
      : item;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, entry] of Object.entries(item)) {
    if (!isBaseMessage(entry)) continue;
    copy ??= { ...item };
    copy[key] = plainMessage(entry);
  }
  return copy ?? item;
}

/**
 * JSON text of a value, with LangChain messages compacted, bigints as numbers' text, cycles and
 * functions dropped, and the result cut at `MAX_ATTRIBUTE_CHARS` (a truncated text no longer parses;
 * the marker at its end says so).
 *
 * Messages are compacted when the replacer sees the array or object holding them, before
 * `JSON.stringify` reaches them: it calls a value's `toJSON()` before the replacer, and a
 * message's (LangChain's constructor serialization, `{lc, type, id, kwargs}`) is both the wrong
 * shape — the `genai` processor reads `{role, content}` messages — and costly: `{messages: [3
 * messages]}` took 14.4 µs that way and takes 5.2 µs this way, and in a CPU profile of
 * `bench/agent/run.ts` (`run_wait`, 16 clients) those `toJSON()` calls were 0.06 ms of a run.
 */
export function boundedJson(value: unknown, maxChars = MAX_ATTRIBUTE_CHARS): string {
  const seen = new WeakSet<object>();
  let text: string;
  try {
    text =
      JSON.stringify(isBaseMessage(value) ? plainMessage(value) : value, (_key, item: unknown) => {
        if (typeof item === 'bigint') return item.toString();
        if (typeof item === 'function' || typeof item === 'symbol') return undefined;
        if (typeof item === 'object' && item !== null) {
          if (seen.has(item)) return '[circular]';
          seen.add(item);
          return withMessagesCompacted(item);
        }
        return item;
      }) ?? 'null';
  } catch (error) {
    text = JSON.stringify({ unserializable: (error as Error).message });
  }
  return boundedText(text, maxChars);
}
