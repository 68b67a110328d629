// LangChain messages in the OpenTelemetry GenAI semantic conventions' message form (the JSON of
// `gen_ai.input.messages` / `gen_ai.output.messages`): `{role, parts: [...], finish_reason?}` with
// `text`, `tool_call` and `tool_call_response` parts.

import type { BaseMessage } from '@langchain/core/messages';
import { roleOf } from './attributes.ts';

type Part =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id?: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id?: string; response: unknown }
  | { type: string; [key: string]: unknown };

export interface GenAiMessage {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

function contentParts(content: BaseMessage['content']): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', content }];
  return content.map((block): Part => {
    if (typeof block === 'string') return { type: 'text', content: block };
    const typed = block as { type?: string; text?: unknown };
    if (typed.type === 'text') return { type: 'text', content: String(typed.text ?? '') };
    // Images, audio, ...: kept under their own type, as the convention allows.
    return { ...(block as Record<string, unknown>), type: typed.type ?? 'unknown' };
  });
}

export function toGenAiMessage(message: BaseMessage, finishReason?: string): GenAiMessage {
  const role = roleOf(message);
  if (role === 'tool') {
    const id = (message as { tool_call_id?: string }).tool_call_id;
    return { role, parts: [{ type: 'tool_call_response', ...(id ? { id } : {}), response: message.content }] };
  }
  const parts = contentParts(message.content);
  const toolCalls = (message as { tool_calls?: { id?: string; name: string; args: unknown }[] }).tool_calls ?? [];
  for (const call of toolCalls)
    parts.push({ type: 'tool_call', ...(call.id ? { id: call.id } : {}), name: call.name, arguments: call.args });
  return finishReason ? { role, parts, finish_reason: finishReason } : { role, parts };
}
