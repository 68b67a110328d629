// @ts-check
// The explorer's shell and routing. URLs are real paths, so every trace and run has one to share:
//   /ui/traces?<filters>                 the trace list
//   /ui/traces/<trace_id>[?run=<run_id>]  one trace, with a run selected
//   /ui/monitor?<range, bucket, split>     charts over time
//   /ui/threads, /ui/threads/<thread_id>   conversations, and one turn by turn
// Links are handled here with history.pushState; the back button works.

import { useEffect, useState } from 'preact/hooks';
import { html } from '@tracepipe/webui/html.js';
import { MonitorPage } from './monitor.js';
import { ThreadPage, ThreadsPage } from './threads.js';
import { TracePage } from './trace.js';
import { TracesPage } from './traces.js';

/**
 * @typedef {object} Route
 * @property {'traces' | 'trace' | 'monitor' | 'threads' | 'thread'} page
 * @property {string} [traceId]
 * @property {string} [threadId]
 * @property {URLSearchParams} params
 */

/** @returns {Route} */
function currentRoute() {
  const path = location.pathname;
  const params = new URLSearchParams(location.search);
  const trace = /^\/ui\/traces\/([^/]+)\/?$/.exec(path);
  if (trace) return { page: 'trace', traceId: decodeURIComponent(trace[1]), params };
  const thread = /^\/ui\/threads\/([^/]+)\/?$/.exec(path);
  if (thread) return { page: 'thread', threadId: decodeURIComponent(thread[1]), params };
  if (/^\/ui\/threads\/?$/.test(path)) return { page: 'threads', params };
  if (/^\/ui\/monitor\/?$/.test(path)) return { page: 'monitor', params };
  return { page: 'traces', params };
}

/**
 * Goes to a URL of the explorer without reloading the page.
 * @param {string} url
 * @param {{ replace?: boolean }} [options]
 */
export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new Event('tp:navigate'));
}

/**
 * A link handled by the router (a plain click stays in the page; modified clicks open a tab).
 * @param {MouseEvent} event
 */
export function followLink(event) {
  const anchor = /** @type {HTMLElement} */ (event.target).closest('a');
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
    return;
  const url = new URL(anchor.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/ui/')) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}

export const href = {
  /** @param {URLSearchParams} [params] */
  traces: (params) => `/ui/traces${params && String(params) ? `?${params}` : ''}`,
  /** @param {string} traceId @param {string} [runId] */
  trace: (traceId, runId) =>
    `/ui/traces/${encodeURIComponent(traceId)}${runId ? `?run=${encodeURIComponent(runId)}` : ''}`,
  threads: () => '/ui/threads',
  /** @param {string} threadId */
  thread: (threadId) => `/ui/threads/${encodeURIComponent(threadId)}`,
  monitor: () => '/ui/monitor',
};

export function App() {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    window.addEventListener('popstate', update);
    window.addEventListener('tp:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('tp:navigate', update);
    };
  }, []);
  return html`
    <div onClick=${followLink}>
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="topbar">
        <span class="brand">tracepipe <span class="brand-sub">traces</span></span>
        <nav aria-label="Main">
          <a href=${href.traces()} aria-current=${route.page === 'traces' ? 'page' : undefined}>Traces</a>
          <a href=${href.threads()} aria-current=${route.page === 'threads' ? 'page' : undefined}>Threads</a>
          <a href=${href.monitor()} aria-current=${route.page === 'monitor' ? 'page' : undefined}>Monitoring</a>
        </nav>
      </header>
      <main id="main" tabindex="-1">
        ${
          route.page === 'trace'
            ? html`<${TracePage} key=${route.traceId} traceId=${/** @type {string} */ (route.traceId)} runId=${route.params.get('run') ?? undefined} />`
            : route.page === 'thread'
              ? html`<${ThreadPage} key=${route.threadId} threadId=${/** @type {string} */ (route.threadId)} />`
              : route.page === 'threads'
                ? html`<${ThreadsPage} params=${route.params} />`
                : route.page === 'monitor'
                  ? html`<${MonitorPage} params=${route.params} />`
                  : html`<${TracesPage} params=${route.params} />`
        }
      </main>
    </div>`;
}
