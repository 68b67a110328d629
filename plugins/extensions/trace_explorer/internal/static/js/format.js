// @ts-check
// Display formatting: durations and costs (times: @tracepipe/webui/format.js).

/**
 * @param {number | null | undefined} ms
 * @returns {string}
 */
export function formatDuration(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${Math.floor(ms / 60_000)} m ${Math.round((ms % 60_000) / 1000)} s`;
}

/**
 * @param {number | null | undefined} cost
 * @returns {string}
 */
export function formatCost(cost) {
  if (cost === null || cost === undefined) return '—';
  return cost < 0.01 ? `$${cost.toFixed(5)}` : `$${cost.toFixed(3)}`;
}

/**
 * Where a cost comes from, for a tooltip or a note beside the figure.
 * @param {import('./api.js').CostSource | null | undefined} source
 * @returns {string}
 */
export function costSourceText(source) {
  if (!source) return '';
  return source.as_of ? `${source.label} (prices of ${source.as_of})` : source.label;
}
