// @ts-check
// Messages as the web interfaces show them, shared by the agent server's studio and the trace
// explorer: the text of a message's content (a string or content blocks), its role, and — for
// runs' inputs and outputs — the chat a run holds (OpenAI-style `messages`/`choices`, LangChain
// serialized messages, `type` human/ai/tool), with tool calls and tool results, rendered as a chat.

import { html } from './html.js';

/**
 * A message as runs and threads hold it: `type` (human/ai/tool) or `role` (user/assistant/tool),
 * string or block content, OpenAI-style `tool_calls`, a tool result's `tool_call_id`.
 * @typedef {object} AnyMessage
 * @property {string} [id]
 * @property {string} [type]
 * @property {string} [role]
 * @property {string} [name]
 * @property {unknown} [content]
 * @property {unknown[]} [tool_calls]
 * @property {string} [tool_call_id]
 */

/**
 * A message ready to show.
 * @typedef {object} ChatMessage
 * @property {string} role `user`, `assistant`, `tool`, `system`, or the message's own type.
 * @property {string} text
 * @property {string} [name]
 * @property {ToolCall[]} toolCalls
 * @property {string} [toolCallId] For a tool result: the call it answers.
 */

/**
 * @typedef {object} ToolCall
 * @property {string} [id]
 * @property {string} name
 * @property {string} args The arguments as (pretty) JSON text.
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
 * @param {unknown} call
 * @returns {ToolCall}
 */
function toolCall(call) {
  const c = isObject(call) ? call : {};
  const fn = isObject(c.function) ? c.function : {};
  const raw = fn.arguments ?? c.args ?? c.arguments ?? {};
  let args = raw;
  if (typeof raw === 'string') {
    try {
      args = JSON.parse(raw);
    } catch {
      args = raw;
    }
  }
  return {
    ...(c.id ? { id: String(c.id) } : {}),
    name: String(fn.name ?? c.name ?? 'tool'),
    args: typeof args === 'string' ? args : JSON.stringify(args, null, 2),
  };
}

/**
 * @param {AnyMessage} message
 * @returns {ChatMessage}
 */
export function toChatMessage(message) {
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.map(toolCall) : [];
  return {
    role: messageRole(message),
    text: messageText(message.content),
    ...(message.name ? { name: message.name } : {}),
    toolCalls: calls,
    ...(message.tool_call_id ? { toolCallId: message.tool_call_id } : {}),
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
 * A chat: one entry per message, with its role, text, tool calls (name and arguments) and, for a
 * tool result, the call it answers.
 * @param {{ messages: ChatMessage[], label?: string }} props
 */
export function ChatView({ messages, label = 'Messages' }) {
  return html`
    <ol class="chat" aria-label=${label}>
      ${messages.map(
        (message, index) => html`
          <li key=${index} class=${`chat-message role-${message.role}`} data-role=${message.role}>
            <div class="chat-role">${message.role}${message.name ? html` <span class="chat-name">${message.name}</span>` : ''}${
              message.toolCallId ? html` <span class="chat-name">result of ${message.toolCallId}</span>` : ''
            }</div>
            ${message.text && html`<div class="chat-text">${message.text}</div>`}
            ${message.toolCalls.map(
              (call) => html`<div class="tool-call" data-testid="tool-call">
                <div class="tool-call-head">Tool call <strong>${call.name}</strong>${call.id ? html` <code>${call.id}</code>` : ''}</div>
                <pre class="code">${call.args}</pre>
              </div>`,
            )}
          </li>`,
      )}
    </ol>`;
}
