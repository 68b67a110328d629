// @ts-check
// What only the studio does with messages: the chunks of a streamed answer, merged so a token
// stream turns into the final message in place when the run's last `values` arrive, and a thread's
// title from its first user message. Reading messages (text, role, tool calls paired with their
// results) is shared with the trace explorer: @tracepipe/webui/messages.js.

import { messageRole, messageText, parseArgs } from '@tracepipe/webui/messages.js';

/** @typedef {import('./types.js').Message} Message */
/** @typedef {import('./types.js').StreamedMessage} StreamedMessage */
/** @typedef {import('./types.js').ToolCall} ToolCall */

/**
 * Merges the tool calls of a new chunk into those streamed so far (by id, else by position).
 * @param {ToolCall[]} known
 * @param {Message | null | undefined} chunk
 * @returns {ToolCall[]}
 */
function mergeToolCalls(known, chunk) {
  if (Array.isArray(chunk?.tool_calls) && chunk.tool_calls.some((call) => call.name)) return chunk.tool_calls;
  const pieces = chunk?.tool_call_chunks;
  if (!Array.isArray(pieces) || pieces.length === 0) return known;
  const calls = known.map((call) => ({ ...call }));
  for (const piece of pieces) {
    const at = piece.id ? calls.findIndex((call) => call.id === piece.id) : (piece.index ?? calls.length - 1);
    const current = at >= 0 ? calls[at] : undefined;
    if (!current) {
      calls.push({ id: piece.id, name: piece.name ?? '', args: piece.args ?? '' });
      continue;
    }
    const text = typeof current.args === 'string' ? current.args : '';
    current.name = current.name || (piece.name ?? '');
    current.args = text + (piece.args ?? '');
  }
  return calls;
}

/**
 * Adds one `messages` (messages-tuple) chunk to the streamed messages, keyed by message id;
 * chunks of one message are token deltas and are concatenated, tool-call pieces included.
 * @param {StreamedMessage[]} streamed
 * @param {Message | null | undefined} chunk
 * @returns {StreamedMessage[]}
 */
export function addChunk(streamed, chunk) {
  const id = chunk?.id ?? `chunk-${streamed.length}`;
  const index = streamed.findIndex((message) => message.id === id);
  if (index === -1) {
    const tool = messageRole(chunk) === 'tool';
    /** @type {StreamedMessage} */
    const message = { id, type: tool ? 'tool' : 'ai', content: messageText(chunk?.content) };
    const calls = mergeToolCalls([], chunk);
    if (calls.length > 0) message.tool_calls = calls;
    if (tool && chunk?.tool_call_id) message.tool_call_id = chunk.tool_call_id;
    if (tool && chunk?.name) message.name = chunk.name;
    return [...streamed, message];
  }
  const copy = streamed.slice();
  const current = copy[index];
  const calls = mergeToolCalls(current.tool_calls ?? [], chunk);
  copy[index] = {
    ...current,
    content: current.content + messageText(chunk?.content),
    ...(calls.length > 0 ? { tool_calls: calls.map((call) => ({ ...call, args: parseArgs(call.args) })) } : {}),
  };
  return copy;
}

/**
 * State messages, then streamed ones the state does not hold yet.
 * @param {Message[]} stateMessages
 * @param {StreamedMessage[]} streamed
 * @returns {Message[]}
 */
export function mergeMessages(stateMessages, streamed) {
  const known = new Set(stateMessages.map((message) => message.id).filter(Boolean));
  return [...stateMessages, ...streamed.filter((message) => !known.has(message.id))];
}

/**
 * A thread's title: its first user message, shortened; empty when it has none.
 * @param {{ messages?: Message[] } | null | undefined} values
 * @returns {string}
 */
export function threadTitle(values) {
  const first = Array.isArray(values?.messages) ? values.messages.find((m) => messageRole(m) === 'user') : undefined;
  const text = messageText(first?.content).replace(/\s+/g, ' ').trim();
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
