// @ts-check
// Chats as the web interfaces show them: a tool call card (its name, id and arguments, with the
// result tied to it by `tool_call_id`, or the failure) used by the studio's conversation and the
// trace explorer's run panel, and the explorer's chat of a run's inputs or outputs.

import { html } from './html.js';
import { chatEntries } from './messages.js';

/** @typedef {import('./messages.js').ChatMessage} ChatMessage */
/** @typedef {import('./messages.js').ToolCall} ToolCall */

/**
 * A tool call by name, with its arguments and the result that answered it. Without a result: a
 * pending line when `waiting` (a live run), else nothing (the result is in another run).
 * @param {{ call: ToolCall, result: ChatMessage | undefined, waiting?: boolean }} props
 */
export function ToolCallCard({ call, result, waiting = false }) {
  const failed = result?.status === 'error';
  return html`
    <div class="tool-call" data-testid="tool-call" data-tool=${call.name} data-tool-call-id=${call.id}>
      <div class="tool-call-head"><span class="tool-label">Tool call</span> <strong class="tool-name">${call.name}</strong>${call.id ? html` <code class="muted small">${call.id}</code>` : ''}</div>
      <pre class="code tool-args" aria-label=${`Arguments of ${call.name}`}>${call.args}</pre>
      ${
        result
          ? html`<div class=${`tool-result${failed ? ' failed' : ''}`}><span class="tool-label">${failed ? 'Error' : 'Result'}</span> <span class="tool-result-text">${result.text}</span></div>`
          : waiting && html`<div class="tool-result pending muted small">Waiting for the result…</div>`
      }
    </div>`;
}

/**
 * A chat: one entry per message, with its role, text and tool calls, each call with the result
 * that answered it (tool messages that answer a call in the same chat are shown there, not again).
 * @param {{ messages: ChatMessage[], label?: string }} props
 */
export function ChatView({ messages, label = 'Messages' }) {
  return html`
    <ol class="chat" aria-label=${label}>
      ${chatEntries(messages).map(
        ({ message, calls }, index) => html`
          <li key=${message.id ?? index} class=${`chat-message role-${message.role}`} data-role=${message.role}>
            <div class="chat-role">${message.role}${message.name ? html` <span class="chat-name">${message.name}</span>` : ''}${
              message.toolCallId ? html` <span class="chat-name">result of ${message.toolCallId}</span>` : ''
            }</div>
            ${message.text && html`<div class="chat-text">${message.text}</div>`}
            ${calls.map(({ call, result }) => html`<${ToolCallCard} key=${call.id ?? call.name} call=${call} result=${result} />`)}
          </li>`,
      )}
    </ol>`;
}
