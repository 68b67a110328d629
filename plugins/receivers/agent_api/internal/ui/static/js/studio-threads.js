// @ts-check
// The thread browser: the threads of the chosen assistant's graph (and threads never run), each
// titled by its first user message, with its status and when it last changed; a search field
// narrows them by title or id. Choosing one opens it to read and to continue.

import { html } from '@tracepipe/webui/html.js';
import { formatShortTime, shortId } from './format.js';
import { threadTitle } from './messages.js';

/** @typedef {import('./types.js').Thread} Thread */
/** @typedef {import('@tracepipe/webui/html.js').FieldEvent} FieldEvent */

/**
 * The threads to offer: those of `graphId` or never run, whose title or id holds `query`.
 * @param {Thread[]} threads
 * @param {string | undefined} graphId
 * @param {string} query
 * @returns {Thread[]}
 */
export function offeredThreads(threads, graphId, query) {
  const needle = query.trim().toLowerCase();
  return threads.filter(
    (thread) =>
      (!thread.metadata?.graph_id || thread.metadata.graph_id === graphId) &&
      (!needle ||
        threadTitle(thread.values).toLowerCase().includes(needle) ||
        thread.thread_id.toLowerCase().includes(needle)),
  );
}

/**
 * @param {{
 *   threads: Thread[],
 *   threadId: string,
 *   query: string,
 *   busy: boolean,
 *   onQuery: (query: string) => void,
 *   onOpen: (threadId: string) => void,
 *   onNew: () => void,
 * }} props
 */
export function ThreadBrowser({ threads, threadId, query, busy, onQuery, onOpen, onNew }) {
  return html`
    <section class="panel thread-browser" aria-labelledby="threads-title">
      <div class="panel-head">
        <h2 id="threads-title">Threads</h2>
        <button type="button" class="secondary small" onClick=${onNew} disabled=${busy}>New thread</button>
      </div>
      <label for="thread-search" class="visually-hidden">Search threads</label>
      <input id="thread-search" type="search" placeholder="Search by first message" value=${query}
        onInput=${(/** @type {FieldEvent} */ e) => onQuery(e.currentTarget.value)} />
      ${
        threads.length === 0
          ? html`<p class="muted">${query ? 'No thread matches.' : 'No threads yet: the first message starts one.'}</p>`
          : html`<ul class="thread-list" aria-label="Threads">
              ${threads.map((thread) => {
                const title = threadTitle(thread.values) || `Thread ${shortId(thread.thread_id)} (no messages)`;
                const current = thread.thread_id === threadId;
                return html`<li key=${thread.thread_id}>
                  <button type="button" class=${`thread-item${current ? ' current' : ''}`} aria-current=${current ? 'true' : undefined}
                    disabled=${busy && !current} data-thread-id=${thread.thread_id} onClick=${() => onOpen(thread.thread_id)}>
                    <span class="thread-title">${title}</span>
                    <span class="thread-meta">
                      <span class=${`status status-${thread.status}`}>${thread.status}</span>
                      <time datetime=${thread.updated_at}>${formatShortTime(thread.updated_at)}</time>
                    </span>
                  </button>
                </li>`;
              })}
            </ul>`
      }
    </section>`;
}
