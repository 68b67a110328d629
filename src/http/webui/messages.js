// @ts-check
// Messages as the web interfaces read them, shared by the agent server's studio and the trace
// explorer: the text of a message's content (a string or content blocks), its role, its tool calls
// (`tool_calls`, else the calls its streamed `tool_call_chunks` add up to), the chat a run's inputs
// or outputs hold (OpenAI-style `messages`/`choices`, LangChain serialized messages, `type`
// human/ai/tool), and tool calls paired with the tool messages that answered them. Plain data, no
// DOM and no imports, so Node runs it too (the decoder tests); chat.js renders it.

/**
 * A message as runs and threads hold it: `type` (human/ai/tool) or `role` (user/assistant/tool),
 * string or block content, OpenAI-style or LangChain `tool_calls` (or streamed
 * `tool_call_chunks`), a tool result's `tool_call_id` and `status`.
 * @typedef {object} AnyMessage
 * @property {string} [id]
 * @property {string} [type]
 * @property {string} [role]
 * @property {string | null} [name]
 * @property {unknown} [content]
 * @property {unknown[]} [tool_calls]
 * @property {unknown[]} [tool_call_chunks]
 * @property {string} [tool_call_id]
 * @property {string} [status] A tool message's outcome (`success`, `error`).
 */

/**
 * A message ready to show.
 * @typedef {object} ChatMessage
 * @property {string} [id]
 * @property {string} role `user`, `assistant`, `tool`, `system`, or the message's own type.
 * @property {string} text
 * @property {string} [name]
 * @property {ToolCall[]} toolCalls
 * @property {string} [toolCallId] For a tool result: the call it answers.
 * @property {string} [status] For a tool result: `error` when the tool failed.
 */

/**
 * @typedef {object} ToolCall
 * @property {string} [id]
 * @property {string} name
 * @property {string} args The arguments as (pretty) JSON text, or the text streamed so far.
 */

/**
 * A message with its tool calls, each paired with the tool message that answered it.
 * @typedef {object} ChatEntry
 * @property {ChatMessage} message
 * @property {{ call: ToolCall, result: ChatMessage | undefined }[]} calls
 */

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
  HumanMessage: 'user',
  ai: 'assistant',
  assistant: 'assistant',
  AIMessage: 'assistant',
  AIMessageChunk: 'assistant',
  tool: 'tool',
  function: 'tool',
  ToolMessage: 'tool',
  system: 'system',
  SystemMessage: 'system',
};

/**
 * The role a message is shown with: `user`, `assistant`, `tool`, `system`, else its own type.
 * @param {AnyMessage | null | undefined} message
 * @returns {string}
 */
export function messageRole(message) {
  return (
    ROLE[/** @type {string} */ (message?.type ?? message?.role)] ?? String(message?.type ?? message?.role ?? 'message')
  );
}

/**
 * @param {unknown} value
 * @returns {value is Record<string, any>}
 */
const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Tool arguments as JSON text parse to their value once complete; until then they stay text.
 * @param {unknown} args
 * @returns {unknown}
 */
export function parseArgs(args) {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/**
 * One tool call (OpenAI `{function: {name, arguments}}`, LangChain `{name, args}`, or a streamed
 * chunk) as a ToolCall.
 * @param {unknown} call
 * @returns {ToolCall}
 */
function toolCall(call) {
  const c = isObject(call) ? call : {};
  const fn = isObject(c.function) ? c.function : {};
  const args = parseArgs(fn.arguments ?? c.args ?? c.arguments ?? {});
  return {
    ...(c.id ? { id: String(c.id) } : {}),
    name: String(fn.name ?? c.name ?? 'tool'),
    args: typeof args === 'string' ? args : JSON.stringify(args, null, 2),
  };
}

/**
 * The tool calls of a message: its `tool_calls`, else the calls its streamed `tool_call_chunks`
 * add up to.
 * @param {AnyMessage | null | undefined} message
 * @returns {ToolCall[]}
 */
export function toolCallsOf(message) {
  const calls = Array.isArray(message?.tool_calls) && message.tool_calls.length > 0 ? message.tool_calls : undefined;
  const list = calls ?? (Array.isArray(message?.tool_call_chunks) ? message.tool_call_chunks : []);
  return list.map(toolCall);
}

/**
 * A LangChain serialized message (`{lc, type: 'constructor', id: [..., 'HumanMessage'], kwargs}`)
 * as a plain one.
 * @param {unknown} value
 * @returns {AnyMessage | undefined}
 */
function plainMessage(value) {
  if (!isObject(value)) return undefined;
  if (value.lc && isObject(value.kwargs) && Array.isArray(value.id)) {
    return { ...value.kwargs, type: String(value.id[value.id.length - 1]) };
  }
  if ('content' in value || 'role' in value || 'tool_calls' in value) return /** @type {AnyMessage} */ (value);
  return undefined;
}

/**
 * @param {AnyMessage} message
 * @returns {ChatMessage}
 */
export function toChatMessage(message) {
  return {
    ...(message.id ? { id: message.id } : {}),
    role: messageRole(message),
    text: messageText(message.content),
    ...(message.name ? { name: message.name } : {}),
    toolCalls: toolCallsOf(message),
    ...(message.tool_call_id ? { toolCallId: message.tool_call_id } : {}),
    ...(message.status ? { status: message.status } : {}),
  };
}

/**
 * The chat a run's inputs or outputs hold, or undefined when they hold none: `messages` (a list,
 * or LangChain's list of lists), OpenAI `choices[].message`, or a single `message`.
 * @param {unknown} value
 * @returns {ChatMessage[] | undefined}
 */
export function chatOf(value) {
  if (!isObject(value)) return undefined;
  /** @type {unknown[] | undefined} */
  let list;
  if (Array.isArray(value.messages)) {
    list = value.messages.length > 0 && Array.isArray(value.messages[0]) ? value.messages.flat() : value.messages;
  } else if (Array.isArray(value.choices)) {
    list = value.choices.map((choice) => (isObject(choice) ? choice.message : undefined));
  } else if (isObject(value.message)) {
    list = [value.message];
  } else if (Array.isArray(value.generations)) {
    list = value.generations
      .flat()
      .map((g) => (isObject(g) ? (g.message ?? { role: 'assistant', content: g.text }) : undefined));
  }
  if (!list) return undefined;
  const messages = list.map(plainMessage).filter((m) => m !== undefined);
  return messages.length > 0 ? messages.map(toChatMessage) : undefined;
}

/**
 * The entries of a chat: each message with its tool calls, each call paired with the tool message
 * that answered it (by `tool_call_id`). Tool messages paired this way are not entries of their own.
 * @param {ChatMessage[]} messages
 * @returns {ChatEntry[]}
 */
export function chatEntries(messages) {
  /** @type {Map<string, ChatMessage>} */
  const results = new Map();
  for (const message of messages)
    if (message.role === 'tool' && message.toolCallId) results.set(message.toolCallId, message);
  /** @type {Set<string>} */
  const paired = new Set();
  /** @type {ChatEntry[]} */
  const entries = [];
  for (const message of messages) {
    const calls = message.role === 'assistant' ? message.toolCalls : [];
    for (const call of calls) if (call.id && results.has(call.id)) paired.add(call.id);
    entries.push({
      message,
      calls: calls.map((call) => ({ call, result: call.id ? results.get(call.id) : undefined })),
    });
  }
  return entries.filter(
    ({ message }) => !(message.role === 'tool' && message.toolCallId && paired.has(message.toolCallId)),
  );
}
