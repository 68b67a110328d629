// @ts-check
// One trace: a waterfall of its runs (a bar per run on the trace's time axis, nested under its
// parent, with its duration; failed runs in red) and the selected run's panel — status, timing,
// tokens, inputs and outputs as a chat when they hold messages (roles, tool calls with their
// arguments and the results that answered them), error, metadata, events, and the raw JSON on demand. The selected run
// is in the URL (`?run=<run_id>`), so it can be linked to.

import { useEffect, useState } from 'preact/hooks';
import { ChatView } from '@tracepipe/webui/chat.js';
import { formatTime } from '@tracepipe/webui/format.js';
import { html } from '@tracepipe/webui/html.js';
import { chatOf } from '@tracepipe/webui/messages.js';
import { getConfig, getTrace, saveExport, traceExportUrl } from './api.js';
import { href, navigate } from './app.js';
import { costSourceText, formatCost, formatDuration } from './format.js';
import { studioLink } from './studio-link.js';

/** @typedef {import('./api.js').RunRecord} RunRecord */
/** @typedef {{ run: RunRecord, depth: number }} Row */

/**
 * The runs in tree order (each parent followed by its children, by start time) with their depth.
 * @param {RunRecord[]} runs
 * @returns {Row[]}
 */
export function treeRows(runs) {
  const ids = new Set(runs.map((r) => r.id));
  /** @type {Map<string, RunRecord[]>} */
  const children = new Map();
  const roots = [];
  for (const run of runs) {
    if (run.parent_run_id && ids.has(run.parent_run_id)) {
      children.set(run.parent_run_id, [...(children.get(run.parent_run_id) ?? []), run]);
    } else roots.push(run);
  }
  const byStart = (/** @type {RunRecord} */ a, /** @type {RunRecord} */ b) =>
    Date.parse(a.start_time) - Date.parse(b.start_time);
  /** @type {Row[]} */
  const rows = [];
  /** @param {RunRecord} run @param {number} depth */
  const visit = (run, depth) => {
    rows.push({ run, depth });
    for (const child of (children.get(run.id) ?? []).sort(byStart)) visit(child, depth + 1);
  };
  for (const root of roots.sort(byStart)) visit(root, 0);
  return rows;
}

/** The pages' settings, read once per page load (they do not change while it runs). */
let config = /** @type {Promise<{ studio_url: string | null }> | null} */ (null);
const pageConfig = () => (config ??= getConfig().catch(() => ({ studio_url: null })));

/** @param {{ traceId: string, runId?: string }} props */
export function TracePage({ traceId, runId }) {
  const [data, setData] = useState(
    /** @type {{ trace: import('./api.js').TraceSummary, runs: RunRecord[] } | null} */ (null),
  );
  const [error, setError] = useState('');
  const [studioUrl, setStudioUrl] = useState(/** @type {string | null} */ (null));
  useEffect(() => {
    let stopped = false;
    void pageConfig().then((c) => !stopped && setStudioUrl(c.studio_url));
    return () => {
      stopped = true;
    };
  }, []);
  useEffect(() => {
    let stopped = false;
    const load = () =>
      getTrace(traceId).then(
        (body) => !stopped && (setData(body), setError('')),
        (failure) => !stopped && setError(/** @type {Error} */ (failure).message),
      );
    void load();
    // A trace still arriving (runs without an end) is read again until it is complete.
    const timer = setInterval(() => {
      if (!data || data.runs.some((r) => !r.end_time) || data.trace.status === 'pending') void load();
    }, 3000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [traceId, data === null]);
  useEffect(() => {
    document.title = `${data?.trace.name ?? 'Trace'} · tracepipe traces`;
  }, [data?.trace.name]);

  if (error && !data) {
    return html`<section class="page"><p><a href=${href.traces()}>← Traces</a></p><div class="error-banner" role="alert">${error}</div></section>`;
  }
  if (!data) return html`<p class="boot">Loading…</p>`;
  const rows = treeRows(data.runs);
  const selected = rows.find((row) => row.run.id === runId)?.run ?? rows[0]?.run;
  const start = Math.min(...data.runs.map((r) => Date.parse(r.start_time)));
  const end = Math.max(...data.runs.map((r) => Date.parse(r.end_time ?? r.start_time)), start + 1);
  const span = end - start;
  /** @param {string} id */
  const select = (id) => navigate(href.trace(traceId, id), { replace: true });
  /** @param {KeyboardEvent} event @param {number} index */
  const onKey = (event, index) => {
    const next = event.key === 'ArrowDown' ? index + 1 : event.key === 'ArrowUp' ? index - 1 : -1;
    if (next < 0 || next >= rows.length) return;
    event.preventDefault();
    select(rows[next].run.id);
    /** @type {HTMLElement | null} */ (document.querySelector(`[data-run-index="${next}"]`))?.focus();
  };
  const t = data.trace;
  const studio = studioLink(t.metadata, studioUrl);
  return html`
    <section class="page trace-page" aria-labelledby="trace-title">
      <p class="crumbs"><a href=${href.traces()}>← Traces</a>${t.thread_id && html` · <a href=${href.thread(t.thread_id)}>Thread</a>`}${studio && html` · <a href=${studio} data-testid="studio-link">Open in studio</a>`} · <a href=${traceExportUrl(t.trace_id)} onClick=${(
        /** @type {MouseEvent} */ e,
      ) => {
        e.preventDefault();
        saveExport(traceExportUrl(t.trace_id), `trace-${t.trace_id}.json`).catch((f) => setError(f.message));
      }}>Download JSON</a></p>
      <h1 id="trace-title">${t.name ?? '(root not received)'} <span class=${`status status-${t.status}`}>${t.status}</span></h1>
      <dl class="facts inline">
        <dt>Start</dt><dd>${formatTime(t.start_time)}</dd>
        <dt>Latency</dt><dd>${formatDuration(t.duration_ms)}</dd>
        <dt>Tokens</dt><dd>${t.total_tokens} (${t.prompt_tokens} in, ${t.completion_tokens} out)</dd>
        <dt>Cost</dt><dd data-testid="trace-cost">${formatCost(t.cost)}${t.cost_source && html` <span class="muted small">${costSourceText(t.cost_source)}</span>`}</dd>
        <dt>Runs</dt><dd>${t.run_count}</dd>
        <dt>Project</dt><dd>${t.project}</dd>
        <dt>Trace</dt><dd><code>${t.trace_id}</code></dd>
      </dl>
      <div class="trace-layout">
        <div class="waterfall" role="list" aria-label="Runs of this trace">
          ${rows.map(({ run, depth }, index) => {
            const left = ((Date.parse(run.start_time) - start) / span) * 100;
            const width = Math.max(
              (((run.end_time ? Date.parse(run.end_time) : end) - Date.parse(run.start_time)) / span) * 100,
              0.5,
            );
            const failed = run.status === 'error' || Boolean(run.error);
            return html`<div role="listitem" key=${run.id}>
              <button type="button" class=${`wf-row${run.id === selected?.id ? ' selected' : ''}${failed ? ' failed' : ''}`}
                data-run-index=${index} data-run-id=${run.id} aria-current=${run.id === selected?.id ? 'true' : undefined}
                onClick=${() => select(run.id)} onKeyDown=${(/** @type {KeyboardEvent} */ e) => onKey(e, index)}>
                <span class="wf-name" style=${{ paddingLeft: `${depth * 14}px` }}>
                  <span class=${`run-type type-${run.run_type}`}>${run.run_type}</span> ${run.name}
                </span>
                <span class="wf-track" aria-hidden="true"><span class="wf-bar" style=${{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }}></span></span>
                <span class="wf-time">${formatDuration(run.duration_ms)}${failed ? ' · error' : ''}</span>
              </button>
            </div>`;
          })}
        </div>
        ${selected && html`<${RunPanel} run=${selected} />`}
      </div>
    </section>`;
}

/**
 * Inputs or outputs: a chat when they hold messages, else JSON.
 * @param {{ title: string, value: Record<string, unknown> | undefined }} props
 */
function IoSection({ title, value }) {
  if (!value || Object.keys(value).length === 0) return null;
  const chat = chatOf(value);
  const { usage_metadata: _usage, ...rest } = value;
  return html`<section class="io" aria-label=${title}>
    <h3>${title}</h3>
    ${chat ? html`<${ChatView} messages=${chat} label=${`${title} messages`} />` : html`<pre class="code">${JSON.stringify(rest, null, 2)}</pre>`}
  </section>`;
}

/** @param {{ run: RunRecord }} props */
function RunPanel({ run }) {
  const failed = run.status === 'error' || Boolean(run.error);
  const metadata = run.extra?.metadata;
  return html`
    <aside class="run-panel" aria-labelledby="run-title" data-testid="run-panel">
      <h2 id="run-title">${run.name} <span class=${`status status-${failed ? 'error' : (run.status ?? 'pending')}`}>${failed ? 'error' : (run.status ?? 'pending')}</span></h2>
      <dl class="facts inline">
        <dt>Type</dt><dd>${run.run_type}</dd>
        <dt>Latency</dt><dd>${formatDuration(run.duration_ms)}</dd>
        ${run.total_tokens > 0 && html`<dt>Tokens</dt><dd data-testid="run-tokens">${run.total_tokens} (${run.prompt_tokens} in, ${run.completion_tokens} out)</dd>`}
        ${run.cost !== null && html`<dt>Cost</dt><dd>${formatCost(run.cost)} <span class="muted small">${costSourceText(run.cost_source)}</span></dd>`}
        ${run.usage_counted !== null && html`<dt>In trace totals</dt><dd data-testid="run-usage-counted">${run.usage_counted ? 'Counted' : html`Not counted <span class="muted small">(the same tokens count on the trace's model calls or an enclosing run)</span>`}</dd>`}
        ${metadata?.ls_model_name && html`<dt>Model</dt><dd>${String(metadata.ls_model_name)}</dd>`}
        <dt>Start</dt><dd>${formatTime(run.start_time)}</dd>
        <dt>Run</dt><dd><code>${run.id}</code></dd>
      </dl>
      ${run.error && html`<div class="error-banner" role="alert"><pre>${run.error}</pre></div>`}
      <${IoSection} title="Input" value=${run.inputs} />
      <${IoSection} title="Output" value=${run.outputs} />
      ${metadata && Object.keys(metadata).length > 0 && html`<details><summary>Metadata</summary><pre class="code">${JSON.stringify(metadata, null, 2)}</pre></details>`}
      ${run.events && run.events.length > 0 && html`<details><summary>Events (${run.events.length})</summary><pre class="code">${JSON.stringify(run.events, null, 2)}</pre></details>`}
      <details><summary>Raw JSON</summary><pre class="code" data-testid="run-json">${JSON.stringify(run, null, 2)}</pre></details>
    </aside>`;
}
