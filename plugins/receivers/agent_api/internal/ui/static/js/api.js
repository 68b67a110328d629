// @ts-check
// The interface's client for the Agent Deployment API of the same server. Every screen goes
// through here, so everything the interface does is an ordinary API call, and every failure
// becomes an ApiError carrying the server's own message for the screen to show.

/** @typedef {import('./types.js').Assistant} Assistant */
/** @typedef {import('./types.js').AssistantBody} AssistantBody */
/** @typedef {import('./types.js').AssistantQuery} AssistantQuery */
/** @typedef {import('./types.js').AssistantSchemas} AssistantSchemas */
/** @typedef {import('./types.js').AssistantVersion} AssistantVersion */
/** @typedef {import('./types.js').JsonObject} JsonObject */
/** @typedef {import('./types.js').Run} Run */
/** @typedef {import('./types.js').RunStreamBody} RunStreamBody */
/** @typedef {import('./types.js').ServerInfo} ServerInfo */
/** @typedef {import('./types.js').Thread} Thread */
/** @typedef {import('./types.js').ThreadQuery} ThreadQuery */
/** @typedef {import('./types.js').ThreadState} ThreadState */
/** @typedef {import('./types.js').GraphDrawing} GraphDrawing */
/** @typedef {import('./types.js').PageConfig} PageConfig */
/** @typedef {import('./types.js').StateUpdate} StateUpdate */

const KEY_STORAGE = 'tracepipe.api_key';

export class ApiError extends Error {
  /**
   * @param {number} status HTTP status, or 0 when the server could not be reached.
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/**
 * The credential the page sends: an API key (as `X-Api-Key`), or `Bearer <token>` (as the
 * `Authorization` header, for a server whose custom auth handler reads a bearer token). Kept in
 * sessionStorage: it survives reloads of this tab, is gone when the tab closes, and is never shared
 * with other tabs or written to disk as localStorage would be.
 */
export function getApiKey() {
  return sessionStorage.getItem(KEY_STORAGE) ?? '';
}

/**
 * The request headers that carry `key`.
 * @param {string} key
 * @returns {Record<string, string>}
 */
export function credentialHeaders(key) {
  if (!key) return {};
  return /^bearer\s/i.test(key) ? { authorization: key } : { 'x-api-key': key };
}

// Told about every 401, so the shell can ask for the key (once; see app.js).
/** @type {Set<(message: string) => void>} */
const unauthorizedListeners = new Set();

/**
 * Calls `listener` whenever the server answers 401; returns the unsubscribe function.
 * @param {(message: string) => void} listener
 * @returns {() => boolean}
 */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** @param {string} key The new credential; empty forgets it. */
export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
}

/**
 * Turns a failed response into an ApiError, preferring the `message` of the JSON error body.
 * @param {Response} response
 * @returns {Promise<ApiError>}
 */
export async function errorFromResponse(response) {
  const text = await response.text().catch(() => '');
  let message = text.trim();
  try {
    const body = JSON.parse(text);
    if (body && typeof body.message === 'string') message = body.message;
    else if (body && typeof body.detail === 'string') message = body.detail;
  } catch {
    // Not JSON: the text itself is the message.
  }
  if (response.status === 401) {
    message = `${message || 'Unauthorized'}. Set the API key (top right) and try again.`;
    for (const listener of unauthorizedListeners) listener(message);
  }
  return new ApiError(response.status, message || `The server answered ${response.status} ${response.statusText}.`);
}

/**
 * Sends one request; resolves with the Response when it is a success, throws ApiError otherwise.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body] Sent as JSON.
 * @param {{ signal?: AbortSignal }} [options]
 * @returns {Promise<Response>}
 */
export async function send(method, path, body, { signal } = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  Object.assign(headers, credentialHeaders(getApiKey()));
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (caught) {
    const error = /** @type {Error | undefined} */ (caught);
    if (error?.name === 'AbortError') throw error;
    throw new ApiError(0, `The server could not be reached (${error?.message ?? error}).`);
  }
  if (!response.ok) throw await errorFromResponse(response);
  return response;
}

/**
 * Sends one request and reads its JSON answer (`null` for a 204). The type parameter is what the
 * endpoint answers; nothing checks it at run time.
 * @template T
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
async function json(method, path, body) {
  const response = await send(method, path, body);
  if (response.status === 204) return /** @type {T} */ (null);
  return response.json();
}

/** @param {string} value */
const id = (value) => encodeURIComponent(value);

export const api = {
  /** @returns {Promise<ServerInfo>} */
  info: () => json('GET', '/info'),
  /** @param {AssistantQuery} query @returns {Promise<Assistant[]>} */
  searchAssistants: (query) => json('POST', '/assistants/search', query),
  /** @param {string} assistantId An assistant id, or a graph id (its system assistant). @returns {Promise<Assistant>} */
  getAssistant: (assistantId) => json('GET', `/assistants/${id(assistantId)}`),
  /** @param {AssistantBody} body @returns {Promise<Assistant>} */
  createAssistant: (body) => json('POST', '/assistants', body),
  /** @param {string} assistantId @param {AssistantBody} body @returns {Promise<Assistant>} */
  updateAssistant: (assistantId, body) => json('PATCH', `/assistants/${id(assistantId)}`, body),
  /** @param {string} assistantId @returns {Promise<unknown>} */
  deleteAssistant: (assistantId) => json('DELETE', `/assistants/${id(assistantId)}`),
  /** @param {string} assistantId @returns {Promise<AssistantVersion[]>} */
  assistantVersions: (assistantId) => json('POST', `/assistants/${id(assistantId)}/versions`, { limit: 100 }),
  /** @param {string} assistantId @param {number} version @returns {Promise<Assistant | null>} */
  setLatestVersion: (assistantId, version) => json('POST', `/assistants/${id(assistantId)}/latest`, { version }),
  /** @param {string} assistantId An assistant id, or a graph id. @returns {Promise<AssistantSchemas>} */
  assistantSchemas: (assistantId) => json('GET', `/assistants/${id(assistantId)}/schemas`),
  /** @param {JsonObject} metadata @returns {Promise<Thread>} */
  createThread: (metadata) => json('POST', '/threads', { metadata }),
  /** @param {ThreadQuery} query @returns {Promise<Thread[]>} */
  searchThreads: (query) => json('POST', '/threads/search', query),
  /** @param {string} threadId @returns {Promise<ThreadState>} */
  threadState: (threadId) => json('GET', `/threads/${id(threadId)}/state`),
  /** @param {string} threadId Checkpoints, newest first. @returns {Promise<ThreadState[]>} */
  threadHistory: (threadId) => json('POST', `/threads/${id(threadId)}/history`, { limit: 100 }),
  /** @param {string} threadId @param {StateUpdate} body @returns {Promise<{ checkpoint?: JsonObject }>} */
  updateState: (threadId, body) => json('POST', `/threads/${id(threadId)}/state`, body),
  /** @param {string} threadId Newest first. @returns {Promise<Run[]>} */
  listRuns: (threadId) => json('GET', `/threads/${id(threadId)}/runs?limit=100`),
  /** @param {string} assistantId @returns {Promise<GraphDrawing>} */
  assistantGraph: (assistantId) => json('GET', `/assistants/${id(assistantId)}/graph`),
  /**
   * The page's own settings, served beside it (not part of the API).
   * @returns {Promise<PageConfig>}
   */
  pageConfig: async () => {
    const response = await fetch('./config.json').catch(() => null);
    return response?.ok ? response.json() : { trace_explorer_url: null };
  },
  /** @param {string} threadId @param {string} runId @returns {Promise<Run>} */
  getRun: (threadId, runId) => json('GET', `/threads/${id(threadId)}/runs/${id(runId)}`),
  /**
   * Asks the server to stop a run (it ends as `interrupted`); answers at once.
   * @param {string} threadId
   * @param {string} runId
   */
  cancelRun: (threadId, runId) => send('POST', `/threads/${id(threadId)}/runs/${id(runId)}/cancel?action=interrupt`),
  /**
   * Starts a streamed run; the caller reads the SSE body (see sse.js).
   * @param {string} threadId
   * @param {RunStreamBody} body
   * @param {AbortSignal} signal
   */
  streamRun: (threadId, body, signal) => send('POST', `/threads/${id(threadId)}/runs/stream`, body, { signal }),
};

/**
 * The deployment's graph ids: from `/info` when it lists them, else from the system assistants.
 * @returns {Promise<string[]>}
 */
export async function listGraphs() {
  const info = await api.info().catch(() => null);
  if (Array.isArray(info?.graphs)) return [...info.graphs].sort();
  const system = await api.searchAssistants({ metadata: { created_by: 'system' }, limit: 1000 });
  return [...new Set(system.map((assistant) => assistant.graph_id))].sort();
}
