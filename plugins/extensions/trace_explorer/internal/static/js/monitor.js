// @ts-check
// The monitoring page: over a time range (`range`, ending now) in buckets (`bucket`), charts of the
// trace count, the error rate, latency percentiles, tokens and cost from `GET /api/stats`, each
// split by project, model or root name (`group_by`) when asked. The settings live in the URL. A
// click on a point opens the trace list of that bucket (and that series' project, model or name),
// sorted as the chart suggests: failed traces for the error rate, slowest first for latency, most
// tokens first for tokens and cost. Charts are uPlot, served from this origin.

import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { html } from '@tracepipe/webui/html.js';
import { getStats, listProjects } from './api.js';
import { href, navigate } from './app.js';
import { costSourceText, formatCost, formatDuration } from './format.js';
import { useRefresh } from './live.js';

const REFRESH_MS = 10_000;

/** The ranges offered: the URL's `range`, its label and its length. */
export const MONITOR_RANGES = [
  { value: '1h', label: 'Last hour', ms: 3600_000 },
  { value: '6h', label: 'Last 6 hours', ms: 6 * 3600_000 },
  { value: '24h', label: 'Last 24 hours', ms: 24 * 3600_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 24 * 3600_000 },
  { value: '30d', label: 'Last 30 days', ms: 30 * 24 * 3600_000 },
];
const BUCKETS = ['auto', '1m', '5m', '15m', '1h', '6h', '1d'];
const GROUPS = [
  { value: '', label: 'Nothing' },
  { value: 'project', label: 'Project' },
  { value: 'model', label: 'Model' },
  { value: 'name', label: 'Root name' },
];
const PALETTE = [
  '#2f5bd3',
  '#c62828',
  '#2e7d32',
  '#ef6c00',
  '#6a1b9a',
  '#00838f',
  '#ad1457',
  '#5d4037',
  '#546e7a',
  '#9e9d24',
];

/** @typedef {import('./api.js').Stats} Stats */
/** @typedef {import('./api.js').StatsSeries} StatsSeries */
/** @typedef {Event & { currentTarget: HTMLSelectElement }} SelectEvent */

/**
 * The stats query of the page's URL: the range becomes `start_after`/`start_before` ending now.
 * @param {URLSearchParams} params
 * @param {number} [now]
 */
export function statsQuery(params, now = Date.now()) {
  const range = MONITOR_RANGES.find((r) => r.value === params.get('range')) ?? MONITOR_RANGES[2];
  const query = new URLSearchParams();
  query.set('start_after', new Date(now - range.ms).toISOString());
  query.set('start_before', new Date(now).toISOString());
  for (const key of ['bucket', 'group_by', 'project']) {
    const value = params.get(key);
    if (value) query.set(key, value);
  }
  return query;
}

/**
 * The trace list behind one point: the bucket's time window, the series' group, and the chart's view.
 * @param {Stats} stats
 * @param {number} index The bucket.
 * @param {string | null | undefined} group The series' group, if the chart is split.
 * @param {Record<string, string>} view Extra list parameters (error=true, sort=duration, ...).
 * @param {string | null} project The page's project filter.
 */
export function tracesOfPoint(stats, index, group, view, project) {
  const start = Date.parse(stats.times[index]);
  const params = new URLSearchParams();
  params.set('start_after', new Date(start).toISOString());
  params.set('start_before', new Date(Math.min(start + stats.bucket_ms, Date.parse(stats.end_time))).toISOString());
  if (project) params.set('project', project);
  if (group !== null && group !== undefined && stats.group_by) params.set(stats.group_by, group);
  for (const [key, value] of Object.entries(view)) params.set(key, value);
  return href.traces(params);
}

/** @param {{ params: URLSearchParams }} props */
export function MonitorPage({ params }) {
  const [stats, setStats] = useState(/** @type {Stats | null} */ (null));
  const [error, setError] = useState('');
  const [projects, setProjects] = useState(/** @type {string[]} */ ([]));
  const key = String(params);

  useEffect(() => {
    document.title = 'Monitoring · tracepipe traces';
    listProjects().then(
      (body) => setProjects(body.projects.map((p) => p.project)),
      () => undefined,
    );
  }, []);
  useRefresh(
    (current) =>
      getStats(statsQuery(params)).then(
        (body) => current() && (setStats(body), setError('')),
        (failure) => current() && setError(/** @type {Error} */ (failure).message),
      ),
    key,
    REFRESH_MS,
  );

  /** @param {string} name @param {string} value */
  const set = (name, value) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    navigate(`/ui/monitor${String(next) ? `?${next}` : ''}`, { replace: true });
  };
  const grouped = Boolean(stats?.group_by);
  const project = params.get('project');
  /** @param {Record<string, string>} view */
  const open = (view) => (/** @type {number} */ index, /** @type {string | null | undefined} */ group) =>
    stats && navigate(tracesOfPoint(stats, index, group, view, project));
  const sum = (/** @type {(s: StatsSeries) => number[]} */ pick) =>
    (stats?.series ?? []).reduce((total, s) => total + pick(s).reduce((a, b) => a + b, 0), 0);
  const traces = sum((s) => s.traces);
  const errors = sum((s) => s.errors);
  const unpriced = sum((s) => s.unpriced_tokens);

  return html`
    <section class="page" aria-labelledby="monitor-title">
      <h1 id="monitor-title">Monitoring</h1>
      <div class="filters">
        <label>Time range
          <select value=${params.get('range') ?? '24h'} onChange=${(/** @type {SelectEvent} */ e) => set('range', e.currentTarget.value === '24h' ? '' : e.currentTarget.value)}>
            ${MONITOR_RANGES.map((r) => html`<option value=${r.value}>${r.label}</option>`)}
          </select>
        </label>
        <label>Bucket
          <select value=${params.get('bucket') ?? 'auto'} onChange=${(/** @type {SelectEvent} */ e) => set('bucket', e.currentTarget.value === 'auto' ? '' : e.currentTarget.value)}>
            ${BUCKETS.map((b) => html`<option value=${b}>${b === 'auto' ? 'Automatic' : b}</option>`)}
          </select>
        </label>
        <label>Split by
          <select value=${params.get('group_by') ?? ''} onChange=${(/** @type {SelectEvent} */ e) => set('group_by', e.currentTarget.value)}>
            ${GROUPS.map((g) => html`<option value=${g.value}>${g.label}</option>`)}
          </select>
        </label>
        <label>Project
          <select value=${project ?? ''} onChange=${(/** @type {SelectEvent} */ e) => set('project', e.currentTarget.value)}>
            <option value="">All</option>
            ${projects.map((p) => html`<option value=${p}>${p}</option>`)}
          </select>
        </label>
      </div>
      ${error && html`<div class="error-banner" role="alert">${error}</div>`}
      ${
        stats &&
        html`
        <dl class="facts inline monitor-totals" data-testid="monitor-totals">
          <dt>Traces</dt><dd>${traces}</dd>
          <dt>Failed</dt><dd>${errors}${traces > 0 ? ` (${((errors / traces) * 100).toFixed(1)}%)` : ''}</dd>
          <dt>Tokens</dt><dd>${sum((s) => s.total_tokens)}</dd>
          <dt>Cost</dt><dd>${formatCost(sum((s) => s.cost))}</dd>
          <dt>Bucket</dt><dd>${bucketLabel(stats.bucket_ms)}</dd>
        </dl>
        ${stats.series_left_out > 0 && html`<p class="muted small">${stats.series_left_out} smaller series are not drawn.</p>`}
        <div class="charts">
          <${Chart} title="Traces" testId="chart-traces" stats=${stats} format=${String}
            lines=${stats.series.map((s) => ({ label: label(s, grouped, 'traces'), group: s.group, values: s.traces }))}
            onPick=${open({})} />
          <${Chart} title="Error rate" testId="chart-errors" stats=${stats} format=${(/** @type {number} */ v) => `${(v * 100).toFixed(1)}%`}
            lines=${stats.series.map((s) => ({ label: label(s, grouped, 'error rate'), group: s.group, values: s.error_rate }))}
            onPick=${open({ error: 'true' })} />
          <${Chart} title=${grouped ? 'Latency p95' : 'Latency'} testId="chart-latency" stats=${stats} format=${formatDuration}
            lines=${
              grouped
                ? stats.series.map((s) => ({
                    label: label(s, grouped, 'p95'),
                    group: s.group,
                    values: s.latency_p95_ms,
                  }))
                : stats.series.flatMap((s) => [
                    { label: 'p50', group: s.group, values: s.latency_p50_ms },
                    { label: 'p95', group: s.group, values: s.latency_p95_ms },
                    { label: 'p99', group: s.group, values: s.latency_p99_ms },
                  ])
            }
            onPick=${open({ sort: 'duration', order: 'desc' })} />
          <${Chart} title="Tokens" testId="chart-tokens" stats=${stats} format=${String}
            lines=${stats.series.map((s) => ({ label: label(s, grouped, 'tokens'), group: s.group, values: s.total_tokens }))}
            onPick=${open({ sort: 'total_tokens', order: 'desc' })} />
          <${Chart} title="Cost" testId="chart-cost" stats=${stats} format=${formatCost}
            lines=${stats.series.map((s) => ({ label: label(s, grouped, 'cost'), group: s.group, values: s.cost }))}
            onPick=${open({ sort: 'total_tokens', order: 'desc' })}>
            <p class="muted small" data-testid="cost-sources">
              ${stats.cost_sources.length > 0 ? `Prices: ${stats.cost_sources.map(costSourceText).join('; ')}.` : 'No priced usage in this range.'}
              ${unpriced > 0 && ` ${unpriced} tokens of models without a price are not in the cost.`}
            </p>
          <//>
        </div>`
      }
    </section>`;
}

/**
 * A bucket width as people write it: 1m, 15m, 6h, 1d.
 * @param {number} ms
 */
export function bucketLabel(ms) {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}

/**
 * @param {StatsSeries} series
 * @param {boolean} grouped
 * @param {string} figure
 */
function label(series, grouped, figure) {
  return grouped ? (series.group ?? '(none)') : figure;
}

/**
 * One uPlot chart of aligned series; a click picks the bucket under the cursor and the focused
 * series.
 * @param {{
 *   title: string, testId: string, stats: Stats, format: (value: number) => string,
 *   lines: { label: string, group: string | null, values: (number | null)[] }[],
 *   onPick: (index: number, group: string | null | undefined) => void,
 *   children?: unknown,
 * }} props
 */
function Chart({ title, testId, stats, format, lines, onPick, children }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const pick = useRef(onPick);
  pick.current = onPick;
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const x = stats.times.map((t) => Date.parse(t) / 1000);
    /** @type {number | null} */
    let focused = null;
    const chart = new uPlot(
      {
        width: Math.max(element.clientWidth, 280),
        height: 200,
        cursor: { focus: { prox: 24 }, points: { size: 8 } },
        focus: { alpha: 0.35 },
        legend: { show: true },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [{}, { values: (_u, ticks) => ticks.map((v) => format(v)), size: 70 }],
        series: [
          {},
          ...lines.map((line, i) => ({
            label: line.label,
            stroke: PALETTE[i % PALETTE.length],
            width: 2,
            points: { show: true, size: 5 },
            spanGaps: false,
            value: (/** @type {uPlot} */ _u, /** @type {number | null} */ v) => (v === null ? '—' : format(v)),
          })),
        ],
        hooks: {
          setSeries: [(_u, index) => (focused = index)],
        },
      },
      /** @type {uPlot.AlignedData} */ ([x, ...lines.map((line) => line.values)]),
      element,
    );
    const click = () => {
      const index = chart.cursor.idx;
      if (index === null || index === undefined) return;
      const line = focused ? lines[focused - 1] : lines.length === 1 ? lines[0] : undefined;
      pick.current(index, line?.group);
    };
    chart.over.addEventListener('click', click);
    const resize = () => chart.setSize({ width: Math.max(element.clientWidth, 280), height: 200 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      chart.over.removeEventListener('click', click);
      chart.destroy();
    };
  }, [stats, lines.map((l) => l.label).join('\n')]);
  return html`<figure class="chart" data-testid=${testId}>
    <figcaption>${title}</figcaption>
    <div ref=${box} role="img" aria-label=${`${title} per ${bucketLabel(stats.bucket_ms)}; click a point for its traces`}></div>
    ${children}
  </figure>`;
}
