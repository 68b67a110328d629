// @ts-check
// Streams one run of the studio (`POST /threads/{id}/runs/stream`) and turns its server-sent
// events into studio actions: `metadata` names the run, `messages` chunks grow the answer,
// `values` replace the messages, `updates` list the nodes as they report, `error` fails the run,
// and the other modes (debug settings) are kept for the debug list.

import { api } from './api.js';
import { readSse } from './sse.js';

/** @typedef {import('./studio-state.js').StudioAction} StudioAction */
/** @typedef {import('./types.js').Message} Message */

/**
 * @param {string} threadId
 * @param {import('./types.js').RunStreamBody} body
 * @param {(action: StudioAction) => void} dispatch
 * @param {AbortSignal} signal
 * @returns {Promise<string | undefined>} The run id, once the stream named it.
 */
export async function streamRun(threadId, body, dispatch, signal) {
  /** @type {string | undefined} */
  let runId;
  const response = await api.streamRun(threadId, body, signal);
  await readSse(response, ({ event, data }) => {
    // `updates|<namespace>` and the like: subgraph events carry their namespace after a bar.
    const mode = event.split('|')[0];
    if (mode === 'metadata') {
      runId = /** @type {{ run_id?: string } | null} */ (data)?.run_id;
      if (runId) dispatch({ type: 'runIdentified', runId });
    } else if (mode === 'messages' && Array.isArray(data) && event === 'messages') {
      dispatch({ type: 'chunkReceived', chunk: data[0] });
    } else if (mode === 'values' && event === 'values') {
      const messages = /** @type {{ messages?: unknown } | null} */ (data)?.messages;
      if (Array.isArray(messages)) dispatch({ type: 'valuesReceived', messages: /** @type {Message[]} */ (messages) });
    } else if (mode === 'updates' && data && typeof data === 'object') {
      const updates = Object.entries(data).map(([node, value]) => ({ node, value }));
      dispatch({ type: 'updatesReceived', updates });
    } else if (mode === 'error') {
      const problem = /** @type {{ error?: string, message?: string } | null} */ (data);
      const message = typeof data === 'string' ? data : [problem?.error, problem?.message].filter(Boolean).join(': ');
      dispatch({ type: 'runFailed', error: message || 'The run failed.' });
    } else if (mode !== 'end') {
      dispatch({ type: 'otherEventReceived', event: { event, data } });
    }
  });
  return runId;
}

/**
 * The trace id of a run as the trace store keys it: the server derives a run's trace id from its
 * 16 bytes (`traceIdFromRunId`), and the store writes trace ids in the UUID form, so it is the run
 * id itself, lowercase. Runs of this server have UUID ids; anything else has no link.
 * @param {string} runId
 * @returns {string | undefined}
 */
export function traceIdOfRun(runId) {
  const hex = runId.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex) || /^0+$/.test(hex)) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The trace explorer's page of a run, or undefined when no explorer is configured.
 * @param {string | null} base The trace list URL (`<ui path>/config.json`).
 * @param {string} runId
 * @returns {string | undefined}
 */
export function traceUrl(base, runId) {
  const traceId = traceIdOfRun(runId);
  if (!base || !traceId) return undefined;
  return `${base}/${traceId}?run=${encodeURIComponent(runId)}`;
}
