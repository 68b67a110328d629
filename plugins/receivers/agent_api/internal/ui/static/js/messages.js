// @ts-check
// How the studio shows messages: thread-state messages (`type` human/ai/tool, string or block
// content) and the chunks of a streamed answer, merged so a token stream turns into the final
// message in place when the run's last `values` arrive; tool calls paired with their results by
// `tool_call_id`; a thread's title from its first user message.

/** @typedef {import('./types.js').Message} Message */
/** @typedef {import('./types.js').StreamedMessage} StreamedMessage */
/** @typedef {import('./types.js').ToolCall} ToolCall */

/**
 * The text of a message's content: a string, or the text blocks of a block array.
 * @param {unknown} content
 * @returns {string}
 */
export function messageText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content == null ? '' : JSON.stringify(content);
  return content
    .map((block) =>
      typeof block === 'string' ? block : block?.type === 'text' ? block.text : block?.type ? `[${block.type}]` : '',
    )
    .join('');
}

/** @type {Record<string, string>} */
const ROLE = {
  human: 'user',
  user: 'user',
  ai: 'assistant',
  AIMessageChunk: 'assistant',
  tool: 'tool',
  ToolMessage: 'tool',
  system: 'system',
};

/**
 * The role a message is shown with: `user`, `assistant`, `tool`, `system`, else its own type.
 * @param {Message | null | undefined} message
 * @returns {string}
 */
export function messageRole(message) {
  return (
    ROLE[/** @type {string} */ (message?.type ?? message?.role)] ?? String(message?.type ?? message?.role ?? 'message')
  );
}

/**
 * The tool calls of an AI message: its `tool_calls`, else the calls its streamed
 * `tool_call_chunks` add up to.
 * @param {Message | StreamedMessage | null | undefined} message
 * @returns {ToolCall[]}
 */
export function toolCallsOf(message) {
  if (Array.isArray(message?.tool_calls) && message.tool_calls.length > 0) return message.tool_calls;
  const chunks = /** @type {Message | null | undefined} */ (message)?.tool_call_chunks;
  if (!Array.isArray(chunks)) return [];
  return chunks.map((chunk) => ({ id: chunk.id, name: chunk.name ?? '', args: parseArgs(chunk.args ?? '') }));
}

/**
 * Tool arguments streamed as JSON text: the object once complete, the text while it is not.
 * @param {unknown} args
 * @returns {unknown}
 */
function parseArgs(args) {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

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
 * One entry of the conversation: a message, with its tool calls each paired with the tool
 * message that answered it (by `tool_call_id`). Tool messages paired this way are not entries
 * of their own.
 * @typedef {object} ConversationItem
 * @property {Message} message
 * @property {{ call: ToolCall, result: Message | undefined }[]} calls
 */

/**
 * @param {Message[]} messages
 * @returns {ConversationItem[]}
 */
export function conversationItems(messages) {
  /** @type {Map<string, Message>} */
  const results = new Map();
  for (const message of messages)
    if (messageRole(message) === 'tool' && message.tool_call_id) results.set(message.tool_call_id, message);
  /** @type {Set<string>} */
  const paired = new Set();
  /** @type {ConversationItem[]} */
  const items = [];
  for (const message of messages) {
    const calls = messageRole(message) === 'assistant' ? toolCallsOf(message) : [];
    for (const call of calls) if (call.id && results.has(call.id)) paired.add(call.id);
    items.push({ message, calls: calls.map((call) => ({ call, result: call.id ? results.get(call.id) : undefined })) });
  }
  return items.filter(
    ({ message }) => !(messageRole(message) === 'tool' && message.tool_call_id && paired.has(message.tool_call_id)),
  );
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
