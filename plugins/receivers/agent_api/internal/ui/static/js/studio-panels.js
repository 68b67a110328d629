// @ts-check
// The studio's read-only panels: the conversation (with the answer growing as tokens arrive and
// tool calls shown by name with their results), the run (status, input, streamed chunks, error,
// a link to its trace), and the node updates in arrival order.

import { useEffect, useRef } from 'preact/hooks';
import { ToolCallCard } from '@tracepipe/webui/chat.js';
import { html } from '@tracepipe/webui/html.js';
import { chatEntries, toChatMessage } from '@tracepipe/webui/messages.js';
import { formatJson } from './json-object.js';
import { traceUrl } from './studio-run.js';

/**
 * @param {{ messages: import('./types.js').Message[], streaming: boolean, hasState: boolean }} props
 */
export function Conversation({ messages, streaming, hasState }) {
  const end = useRef(/** @type {HTMLLIElement | null} */ (null));
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [messages]);
  if (messages.length === 0) {
    return html`<p class="empty">${hasState ? 'The state of this thread holds no messages. ' : ''}Write a message below to start a run.</p>`;
  }
  const items = chatEntries(messages.map(toChatMessage));
  return html`
    <ol class="messages" aria-label="Conversation">
      ${items.map(({ message, calls }, index) => {
        const { role, text } = message;
        const last = index === items.length - 1;
        return html`
          <li key=${message.id ?? index} class=${`message ${role}`} data-role=${role}>
            <span class="message-role">${role === 'tool' ? `tool · ${message.name ?? ''}` : role}</span>
            ${(text || calls.length === 0) && html`<div class="message-text">${text}${streaming && last && role === 'assistant' ? html`<span class="caret" aria-hidden="true"></span>` : ''}</div>`}
            ${calls.map(({ call, result }) => html`<${ToolCallCard} key=${call.id ?? call.name} call=${call} result=${result} waiting />`)}
          </li>`;
      })}
      <li ref=${end} class="messages-end" aria-hidden="true"></li>
    </ol>`;
}

/** @param {{ run: import('./types.js').RunView | null, traceExplorerUrl: string | null, waiting: boolean }} props */
export function RunPanel({ run, traceExplorerUrl, waiting }) {
  const link = run?.id ? traceUrl(traceExplorerUrl, run.id) : undefined;
  return html`
    <section class="panel" aria-labelledby="run-title">
      <h3 id="run-title">Run</h3>
      ${
        run
          ? html`<dl class="facts">
            <dt>Status</dt><dd><span class=${`status status-${run.status}`} data-testid="run-status">${run.status}</span></dd>
            ${run.input && html`<dt>Input</dt><dd class="run-input">${run.input}</dd>`}
            ${(run.chunks ?? 0) > 0 && html`<dt>Streamed</dt><dd data-testid="run-chunks">${run.chunks} message chunk${run.chunks === 1 ? '' : 's'}</dd>`}
            ${waiting && html`<dt>Thread</dt><dd data-testid="run-waiting">waiting for your answer</dd>`}
            ${run.node && html`<dt>Node</dt><dd>${run.node}</dd>`}
            ${run.id && html`<dt>Run</dt><dd><code>${run.id}</code>${link && html` <a class="trace-link" href=${link} target="_blank" rel="noopener noreferrer">View trace</a>`}</dd>`}
          </dl>
          ${run.error && html`<div class="error-banner" role="alert">${run.error}</div>`}`
          : html`<p class="muted">No run yet.</p>`
      }
    </section>`;
}

/** @param {{ updates: import('./types.js').NodeUpdate[] }} props */
export function UpdatesPanel({ updates }) {
  return html`
    <section class="panel" aria-labelledby="updates-title">
      <h3 id="updates-title">Node updates</h3>
      ${
        updates.length === 0
          ? html`<p class="muted">None yet.</p>`
          : html`<ol class="updates">
            ${updates.map(
              (update, index) => html`<li key=${index}>
                <details>
                  <summary><strong>${update.node}</strong> <span class="muted">${summarizeUpdate(update.value)}</span></summary>
                  <pre class="code">${formatJson(update.value)}</pre>
                </details>
              </li>`,
            )}
          </ol>`
      }
    </section>`;
}

/**
 * The keys a node updated, with the length of each list.
 * @param {unknown} value
 * @returns {string}
 */
function summarizeUpdate(value) {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value)
      .map(([key, item]) => (Array.isArray(item) ? `${key}: ${item.length} item${item.length === 1 ? '' : 's'}` : key))
      .join(', ');
  }
  return '';
}
