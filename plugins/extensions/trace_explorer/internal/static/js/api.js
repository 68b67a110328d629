// @ts-check
// The explorer's calls to its own query API (same origin): a failed call throws an Error with the
// API's message.

/**
 * @typedef {object} TraceSummary
 * @property {string} trace_id
 * @property {string} project
 * @property {string | null} name
 * @property {string} status
 * @property {string} start_time
 * @property {string | null} end_time
 * @property {number | null} duration_ms
 * @property {number} run_count
 * @property {number} error_count
 * @property {string | null} root_run_id
 * @property {number} prompt_tokens
 * @property {number} completion_tokens
 * @property {number} total_tokens
 * @property {number | null} cost
 * @property {CostSource | null} cost_source
 * @property {string | null} model
 * @property {string | null} thread_id
 * @property {string[]} tags
 * @property {Record<string, unknown>} metadata
 * @property {string | null} input_preview
 * @property {string | null} output_preview
 */

/**
 * A run as the API returns it.
 * @typedef {object} RunRecord
 * @property {string} id
 * @property {string} name
 * @property {string} run_type
 * @property {string} start_time
 * @property {string} [end_time]
 * @property {string} [parent_run_id]
 * @property {string} [status]
 * @property {string} [error]
 * @property {Record<string, unknown>} [inputs]
 * @property {Record<string, unknown>} [outputs]
 * @property {Record<string, unknown> & { metadata?: Record<string, unknown> }} [extra]
 * @property {string[]} [tags]
 * @property {Record<string, unknown>[]} [events]
 * @property {number | null} duration_ms
 * @property {number} prompt_tokens
 * @property {number} completion_tokens
 * @property {number} total_tokens
 * @property {number | null} cost
 * @property {boolean | null} usage_counted whether the trace's totals count the usage the run reported (null: it reported none)
 * @property {CostSource | null} cost_source
 */

/**
 * Where a cost comes from.
 * @typedef {object} CostSource
 * @property {'reported' | 'configured' | 'price_table' | 'mixed'} kind
 * @property {string} label
 * @property {string | null} as_of
 * @property {string | null} url
 */

/**
 * A conversation.
 * @typedef {object} ThreadSummary
 * @property {string} thread_id
 * @property {string} project
 * @property {number} turns
 * @property {string} start_time
 * @property {string} last_time
 * @property {number} error_turns
 * @property {number} total_tokens
 * @property {number} duration_ms
 * @property {number | null} cost
 * @property {CostSource | null} cost_source
 * @property {string | null} input_preview
 * @property {string | null} output_preview
 */

/**
 * One series of `GET /api/stats`: an array per figure, one value per bucket.
 * @typedef {object} StatsSeries
 * @property {string | null} group
 * @property {number[]} traces
 * @property {number[]} errors
 * @property {(number | null)[]} error_rate
 * @property {(number | null)[]} latency_p50_ms
 * @property {(number | null)[]} latency_p95_ms
 * @property {(number | null)[]} latency_p99_ms
 * @property {number[]} total_tokens
 * @property {number[]} cost
 * @property {number[]} unpriced_tokens
 */

/**
 * @typedef {object} Stats
 * @property {string} start_time
 * @property {string} end_time
 * @property {number} bucket_ms
 * @property {string | null} group_by
 * @property {string[]} times
 * @property {StatsSeries[]} series
 * @property {number} series_left_out
 * @property {(CostSource | null)[]} cost_sources
 */

/**
 * @param {string} path
 * @returns {Promise<any>}
 */
async function get(path) {
  const sent = sessionStorage.getItem(KEY_ITEM);
  let response = await fetch(path, { headers: requestHeaders() });
  // Protected by the agent server's auth: ask once for a key, keep it for this tab, and retry
  // (calls made meanwhile retry with the key the first one was given).
  if (response.status === 401 && (sessionStorage.getItem(KEY_ITEM) !== sent || askForKey()))
    response = await fetch(path, { headers: requestHeaders() });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body?.message ?? `${response.status} ${response.statusText}`);
  return body;
}

// The key lives in sessionStorage: it survives reloads of the tab, is gone with the tab, is not
// shared with other tabs and never written to disk (as the agent server's web interface keeps it).
const KEY_ITEM = 'tracepipe.explorer.key';
/** Asked at most once per page load: a dismissed prompt is not asked again on every call. */
let asked = false;

/** @returns {Record<string, string>} */
function requestHeaders() {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  const key = sessionStorage.getItem(KEY_ITEM);
  // A value starting with "Bearer " is a custom auth handler's token; anything else an API key.
  if (key && /^bearer /i.test(key)) headers.authorization = key;
  else if (key) headers['x-api-key'] = key;
  return headers;
}

/** Prompts for a key after a 401; whether one was given. */
function askForKey() {
  if (asked) return false;
  asked = true;
  const key = window.prompt(
    'These traces are protected by the agent server. Enter its API key (X-Api-Key), or "Bearer <token>" for its custom auth handler:',
  );
  if (!key?.trim()) return false;
  sessionStorage.setItem(KEY_ITEM, key.trim());
  return true;
}

/**
 * @param {URLSearchParams} params
 * @returns {Promise<{ traces: TraceSummary[], next_cursor: string | null }>}
 */
export const listTraces = (params) => get(`/api/traces?${params}`);

/**
 * @param {string} traceId
 * @returns {Promise<{ trace: TraceSummary, runs: RunRecord[] }>}
 */
export const getTrace = (traceId) => get(`/api/traces/${encodeURIComponent(traceId)}`);

/** @returns {Promise<{ projects: { project: string, traces: number }[] }>} */
export const listProjects = () => get('/api/projects');

/** @returns {Promise<{ studio_url: string | null }>} */
export const getConfig = () => get('/api/config');

/**
 * @param {URLSearchParams} params
 * @returns {Promise<Stats>}
 */
export const getStats = (params) => get(`/api/stats?${params}`);

/**
 * @param {URLSearchParams} params
 * @returns {Promise<{ threads: ThreadSummary[], next_cursor: string | null }>}
 */
export const listThreads = (params) => get(`/api/threads?${params}`);

/**
 * @param {string} threadId
 * @returns {Promise<{ thread: ThreadSummary, turns: TraceSummary[] }>}
 */
export const getThread = (threadId) => get(`/api/threads/${encodeURIComponent(threadId)}`);

/**
 * Saves an export as a file. Fetched (not a plain link) so that it carries the key the other
 * calls carry when the agent server protects the explorer.
 * @param {string} path
 * @param {string} filename
 */
export async function saveExport(path, filename) {
  let response = await fetch(path, { headers: requestHeaders() });
  if (response.status === 401 && askForKey()) response = await fetch(path, { headers: requestHeaders() });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new Error(body?.message ?? `${response.status} ${response.statusText}`);
  }
  const url = URL.createObjectURL(await response.blob());
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = filename;
  anchor.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** @param {string} traceId */
export const traceExportUrl = (traceId) => `/api/traces/${encodeURIComponent(traceId)}/export`;

/** @param {URLSearchParams} params The list's API query. */
export const listExportUrl = (params) => {
  const query = new URLSearchParams(params);
  query.delete('cursor');
  query.delete('limit');
  return `/api/export${String(query) ? `?${query}` : ''}`;
};
