// @ts-check
// The trace list: filters above (kept in the URL, so a filtered list can be shared), among them a
// time range (`range=15m|1h|24h|7d`, a window ending now that moves with each refresh; the API's
// own `start_after`/`start_before` in the URL pass through), a table of the traces newest first,
// refreshed every few seconds while the first page is shown, and more pages on demand.

import { useEffect, useState } from 'preact/hooks';
import { formatTime } from '@tracepipe/webui/format.js';
import { html } from '@tracepipe/webui/html.js';
import { listExportUrl, listProjects, listTraces, saveExport } from './api.js';
import { href, navigate } from './app.js';
import { costSourceText, formatCost, formatDuration } from './format.js';
import { usePagedList } from './live.js';

const REFRESH_MS = 2000;

/** @typedef {import('./api.js').TraceSummary} TraceSummary */
/** @typedef {Event & { currentTarget: HTMLInputElement | HTMLSelectElement }} FieldEvent */

/** The time ranges offered: the URL's `range` value, its label, and its length. */
export const TIME_RANGES = [
  { value: '15m', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { value: '1h', label: 'Last hour', ms: 60 * 60_000 },
  { value: '24h', label: 'Last 24 hours', ms: 24 * 60 * 60_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 24 * 60 * 60_000 },
];

/**
 * The API query of the page's URL: `range` (the page's own parameter) becomes `start_after`, the
 * range's length before `now`; everything else is the API's and passes through.
 * @param {URLSearchParams} params
 * @param {number} [now]
 * @returns {URLSearchParams}
 */
export function traceQuery(params, now = Date.now()) {
  const query = new URLSearchParams(params);
  const range = TIME_RANGES.find((r) => r.value === query.get('range'));
  query.delete('range');
  if (range) query.set('start_after', new Date(now - range.ms).toISOString());
  return query;
}

/** @param {{ params: URLSearchParams }} props */
export function TracesPage({ params }) {
  const [projects, setProjects] = useState(/** @type {string[]} */ ([]));
  const key = String(params);
  // The search box keeps its own text: the list re-renders on every live refresh, and a value
  // bound to the URL would put back the URL's text over what someone is typing. A new URL (a
  // submitted search, a link, back) sets it again.
  const [searchText, setSearchText] = useState(params.get('q') ?? '');
  useEffect(() => setSearchText(params.get('q') ?? ''), [params.get('q')]);

  useEffect(() => {
    listProjects().then(
      (body) => setProjects(body.projects.map((p) => p.project)),
      () => undefined,
    );
  }, []);

  // The first page, again every REFRESH_MS: new traces appear at the top as they arrive.
  const {
    items: rows,
    error,
    loaded,
    hasMore,
    loadMore,
  } = usePagedList(
    async (cursor) => {
      const query = traceQuery(params);
      if (cursor) query.set('cursor', cursor);
      const body = await listTraces(query);
      return { items: body.traces, next_cursor: body.next_cursor };
    },
    key,
    REFRESH_MS,
    (trace) => trace.trace_id,
  );

  /**
   * @param {string} name
   * @param {string} value
   */
  const setFilter = (name, value) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    next.delete('cursor');
    navigate(href.traces(next), { replace: true });
  };
  /** @param {string} range A value of TIME_RANGES, or empty for all time. */
  const setRange = (range) => {
    const next = new URLSearchParams(params);
    // A chosen range replaces bounds the URL gave the API directly.
    next.delete('start_after');
    next.delete('start_before');
    next.delete('cursor');
    if (range) next.set('range', range);
    else next.delete('range');
    navigate(href.traces(next), { replace: true });
  };
  const custom = !params.get('range') && Boolean(params.get('start_after') || params.get('start_before'));
  /** @param {SubmitEvent} event */
  const search = (event) => {
    event.preventDefault();
    const form = /** @type {HTMLFormElement} */ (event.currentTarget);
    setFilter('q', /** @type {HTMLInputElement} */ (form.elements.namedItem('q')).value.trim());
  };

  return html`
    <section class="page" aria-labelledby="traces-title">
      <h1 id="traces-title">Traces</h1>
      <div class="filters">
        <form class="search" role="search" onSubmit=${search}>
          <label for="trace-search">Search</label>
          <input id="trace-search" name="q" type="search" placeholder="Text in names, inputs, outputs, errors" value=${searchText} onInput=${(/** @type {FieldEvent} */ e) => setSearchText(e.currentTarget.value)} />
          <button type="submit">Search</button>
        </form>
        <label>Time range
          <select value=${custom ? 'custom' : (params.get('range') ?? '')} onChange=${(/** @type {FieldEvent} */ e) => setRange(e.currentTarget.value)}>
            <option value="">All time</option>
            ${TIME_RANGES.map((r) => html`<option value=${r.value}>${r.label}</option>`)}
            ${custom && html`<option value="custom" disabled>From the URL</option>`}
          </select>
        </label>
        <label>Project
          <select value=${params.get('project') ?? ''} onChange=${(/** @type {FieldEvent} */ e) => setFilter('project', e.currentTarget.value)}>
            <option value="">All</option>
            ${projects.map((p) => html`<option value=${p}>${p}</option>`)}
          </select>
        </label>
        <label>Status
          <select value=${params.get('status') ?? ''} onChange=${(/** @type {FieldEvent} */ e) => setFilter('status', e.currentTarget.value)}>
            <option value="">Any</option><option value="success">Success</option><option value="error">Error</option><option value="interrupted">Interrupted</option><option value="pending">Pending</option>
          </select>
        </label>
        <label class="check"><input type="checkbox" checked=${params.get('error') === 'true'} onChange=${(/** @type {FieldEvent} */ e) => setFilter('error', /** @type {HTMLInputElement} */ (e.currentTarget).checked ? 'true' : '')} /> With errors</label>
        <label>Sort
          <select value=${params.get('sort') ?? ''} onChange=${(/** @type {FieldEvent} */ e) => setFilter('sort', e.currentTarget.value)}>
            <option value="">Newest</option><option value="duration">Duration</option><option value="total_tokens">Tokens</option><option value="name">Name</option>
          </select>
        </label>
      </div>
      ${error && html`<div class="error-banner" role="alert">${error}</div>`}
      ${
        loaded && rows.length === 0 && !error
          ? html`<p class="empty">No traces${String(params) ? ' match these filters' : ' yet: send spans to the OTLP receiver or run an agent'}.</p>`
          : html`
          <div class="table-wrap">
            <table class="traces">
              <thead><tr><th scope="col">Name</th><th scope="col">Input</th><th scope="col">Start</th><th scope="col">Latency</th><th scope="col">Status</th><th scope="col">Tokens</th><th scope="col">Cost</th><th scope="col">Runs</th></tr></thead>
              <tbody>
                ${rows.map(
                  (
                    trace,
                  ) => html`<tr key=${trace.trace_id} class=${trace.status === 'error' || trace.error_count > 0 ? 'has-error' : ''}>
                    <td><a href=${href.trace(trace.trace_id)}>${trace.name ?? '(root not received)'}</a>${trace.project !== 'default' ? html` <span class="muted small">${trace.project}</span>` : ''}</td>
                    <td class="preview">${trace.input_preview ?? ''}</td>
                    <td><time datetime=${trace.start_time}>${formatTime(trace.start_time)}</time></td>
                    <td class="num">${formatDuration(trace.duration_ms)}</td>
                    <td><span class=${`status status-${trace.status}`}>${trace.status}</span>${trace.error_count > 0 && trace.status !== 'error' ? html` <span class="status status-error">${trace.error_count} failed</span>` : ''}</td>
                    <td class="num">${trace.total_tokens || '—'}</td>
                    <td class="num" title=${costSourceText(trace.cost_source)}>${formatCost(trace.cost)}</td>
                    <td class="num">${trace.run_count}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>
          ${hasMore && html`<button type="button" class="secondary" onClick=${loadMore}>Load more</button>`}
          <p class="muted small"><a href=${listExportUrl(traceQuery(params))} onClick=${(
            /** @type {MouseEvent} */ e,
          ) => {
            e.preventDefault();
            saveExport(listExportUrl(traceQuery(params)), 'traces.json').catch((f) => reportError(f.message));
          }}>Download these traces as JSON</a> (up to 1000)</p>`
      }
    </section>`;
}
