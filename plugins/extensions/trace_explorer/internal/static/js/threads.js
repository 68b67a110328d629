// @ts-check
// Conversations: traces that carry a thread id (`thread_id`, `session_id` or `conversation_id` in
// the root run's metadata; the agent server's runs carry their thread's) grouped into threads. The
// list shows each thread's turns, first question and last answer, tokens and latency; a thread's
// page shows it turn by turn, each turn linking to its trace, with tokens, cost and latency per
// turn and in total.

import { useEffect, useState } from 'preact/hooks';
import { formatTime } from '@tracepipe/webui/format.js';
import { html } from '@tracepipe/webui/html.js';
import { getThread, listThreads } from './api.js';
import { href } from './app.js';
import { costSourceText, formatCost, formatDuration } from './format.js';
import { usePagedList, useRefresh } from './live.js';

const REFRESH_MS = 5000;

/** @typedef {import('./api.js').ThreadSummary} ThreadSummary */
/** @typedef {import('./api.js').TraceSummary} TraceSummary */

/** @param {{ params: URLSearchParams }} props */
export function ThreadsPage({ params }) {
  const key = String(params);
  useEffect(() => {
    document.title = 'Threads · tracepipe traces';
  }, []);
  const {
    items: rows,
    error,
    loaded,
    hasMore,
    loadMore,
  } = usePagedList(
    async (cursor) => {
      const query = new URLSearchParams(params);
      if (cursor) query.set('cursor', cursor);
      const body = await listThreads(query);
      return { items: body.threads, next_cursor: body.next_cursor };
    },
    key,
    REFRESH_MS,
    (thread) => thread.thread_id,
  );
  return html`
    <section class="page" aria-labelledby="threads-title">
      <h1 id="threads-title">Threads</h1>
      ${error && html`<div class="error-banner" role="alert">${error}</div>`}
      ${
        loaded && rows.length === 0 && !error
          ? html`<p class="empty">No threads yet: traces join a thread when their root run's metadata has a thread_id, session_id or conversation_id (the agent server's runs do).</p>`
          : html`<div class="table-wrap">
              <table class="traces threads">
                <thead><tr><th scope="col">Thread</th><th scope="col">First input</th><th scope="col">Last output</th><th scope="col">Turns</th><th scope="col">Last activity</th><th scope="col">Tokens</th><th scope="col">Latency</th></tr></thead>
                <tbody>
                  ${rows.map(
                    (thread) => html`<tr key=${thread.thread_id} class=${thread.error_turns > 0 ? 'has-error' : ''}>
                      <td><a href=${href.thread(thread.thread_id)}><code>${thread.thread_id}</code></a>${thread.project !== 'default' ? html` <span class="muted small">${thread.project}</span>` : ''}</td>
                      <td class="preview">${thread.input_preview ?? ''}</td>
                      <td class="preview">${thread.output_preview ?? ''}</td>
                      <td class="num">${thread.turns}${thread.error_turns > 0 ? html` <span class="status status-error">${thread.error_turns} failed</span>` : ''}</td>
                      <td><time datetime=${thread.last_time}>${formatTime(thread.last_time)}</time></td>
                      <td class="num">${thread.total_tokens || '—'}</td>
                      <td class="num">${formatDuration(thread.duration_ms)}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            ${hasMore && html`<button type="button" class="secondary" onClick=${loadMore}>Load more</button>`}`
      }
    </section>`;
}

/** @param {{ threadId: string }} props */
export function ThreadPage({ threadId }) {
  const [data, setData] = useState(/** @type {{ thread: ThreadSummary, turns: TraceSummary[] } | null} */ (null));
  const [error, setError] = useState('');
  useEffect(() => {
    document.title = `Thread ${threadId} · tracepipe traces`;
  }, [threadId]);
  // A conversation goes on: new turns appear as they arrive.
  useRefresh(
    (current) =>
      getThread(threadId).then(
        (body) => current() && (setData(body), setError('')),
        (failure) => current() && setError(/** @type {Error} */ (failure).message),
      ),
    threadId,
    REFRESH_MS,
  );
  const back = html`<p class="crumbs"><a href=${href.threads()}>← Threads</a></p>`;
  if (error && !data)
    return html`<section class="page">${back}<div class="error-banner" role="alert">${error}</div></section>`;
  if (!data) return html`<p class="boot">Loading…</p>`;
  const t = data.thread;
  return html`
    <section class="page" aria-labelledby="thread-title">
      ${back}
      <h1 id="thread-title">Thread <code>${t.thread_id}</code></h1>
      <dl class="facts inline" data-testid="thread-totals">
        <dt>Turns</dt><dd>${t.turns}</dd>
        <dt>Tokens</dt><dd>${t.total_tokens}</dd>
        <dt>Cost</dt><dd title=${costSourceText(t.cost_source)}>${formatCost(t.cost)}${t.cost_source ? html` <span class="muted small">${costSourceText(t.cost_source)}</span>` : ''}</dd>
        <dt>Latency</dt><dd>${formatDuration(t.duration_ms)}</dd>
        <dt>Started</dt><dd>${formatTime(t.start_time)}</dd>
        <dt>Project</dt><dd>${t.project}</dd>
      </dl>
      <ol class="turns" aria-label="Turns of this thread">
        ${data.turns.map(
          (
            turn,
            index,
          ) => html`<li class=${`turn${turn.status === 'error' || turn.error_count > 0 ? ' failed' : ''}`} key=${turn.trace_id} data-testid="turn">
            <div class="turn-head">
              <a href=${href.trace(turn.trace_id)}>Turn ${index + 1}: ${turn.name ?? '(root not received)'}</a>
              <span class=${`status status-${turn.status}`}>${turn.status}</span>
              <time class="muted small" datetime=${turn.start_time}>${formatTime(turn.start_time)}</time>
            </div>
            ${turn.input_preview && html`<div class="chat-message turn-input" data-role="user"><span class="muted small">Input</span><div>${turn.input_preview}</div></div>`}
            ${turn.output_preview && html`<div class="chat-message turn-output" data-role="assistant"><span class="muted small">Output</span><div>${turn.output_preview}</div></div>`}
            <dl class="facts inline small">
              <dt>Tokens</dt><dd>${turn.total_tokens}</dd>
              <dt>Cost</dt><dd title=${costSourceText(turn.cost_source)}>${formatCost(turn.cost)}</dd>
              <dt>Latency</dt><dd>${formatDuration(turn.duration_ms)}</dd>
            </dl>
          </li>`,
        )}
      </ol>
    </section>`;
}
