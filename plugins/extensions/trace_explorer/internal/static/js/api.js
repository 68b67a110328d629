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
 */

/**
 * @param {string} path
 * @returns {Promise<any>}
 */
async function get(path) {
  const response = await fetch(path, { headers: { accept: 'application/json' } });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body?.message ?? `${response.status} ${response.statusText}`);
  return body;
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
