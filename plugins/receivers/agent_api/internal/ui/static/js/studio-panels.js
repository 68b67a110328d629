// @ts-check
// The studio's read-only panels: the conversation (with the answer growing as tokens arrive),
// the run (status, input, streamed chunks, error), the node updates in arrival order, and the
// thread state.

import { useEffect, useRef } from 'preact/hooks';
import { html } from './html.js';
import { formatJson } from './json-object.js';
import { messageRole, messageText } from './messages.js';

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
  return html`
    <ol class="messages" aria-label="Conversation">
      ${messages.map(
        (message, index) => html`
          <li key=${message.id ?? index} class=${`message ${messageRole(message)}`} data-role=${messageRole(message)}>
            <span class="message-role">${messageRole(message)}</span>
            <div class="message-text">${messageText(message.content)}${streaming && index === messages.length - 1 && messageRole(message) === 'assistant' ? html`<span class="caret" aria-hidden="true"></span>` : ''}</div>
          </li>`,
      )}
      <li ref=${end} class="messages-end" aria-hidden="true"></li>
    </ol>`;
}

/** @param {{ run: import('./types.js').RunView | null }} props */
export function RunPanel({ run }) {
  return html`
    <section class="panel" aria-labelledby="run-title">
      <h3 id="run-title">Run</h3>
      ${
        run
          ? html`<dl class="facts">
            <dt>Status</dt><dd><span class=${`status status-${run.status}`} data-testid="run-status">${run.status}</span></dd>
            ${run.input && html`<dt>Input</dt><dd class="run-input">${run.input}</dd>`}
            ${(run.chunks ?? 0) > 0 && html`<dt>Streamed</dt><dd data-testid="run-chunks">${run.chunks} message chunk${run.chunks === 1 ? '' : 's'}</dd>`}
            ${run.id && html`<dt>Run</dt><dd><code>${run.id}</code></dd>`}
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

/**
 * @param {{ state: import('./types.js').ThreadState | null, onRefresh: (() => void) | null }} props
 */
export function StatePanel({ state, onRefresh }) {
  return html`
    <section class="panel" aria-labelledby="state-title">
      <div class="panel-head">
        <h3 id="state-title">Thread state</h3>
        <button type="button" class="secondary small" onClick=${onRefresh} disabled=${!onRefresh}>Refresh</button>
      </div>
      ${
        state
          ? html`<dl class="facts">
              <dt>Next</dt><dd>${state.next?.length ? state.next.join(', ') : 'nothing pending'}</dd>
              <dt>Step</dt><dd>${state.metadata?.step ?? '—'}</dd>
              <dt>Messages</dt><dd>${state.values?.messages?.length ?? 0}</dd>
            </dl>
            <details>
              <summary>Values (JSON)</summary>
              <pre class="code" data-testid="thread-state">${formatJson(state.values)}</pre>
            </details>`
          : html`<p class="muted">Choose or start a thread.</p>`
      }
    </section>`;
}
