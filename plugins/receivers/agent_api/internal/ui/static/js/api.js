// The interface's client for the Agent Deployment API of the same server. Every screen goes
// through here, so everything the interface does is an ordinary API call, and every failure
// becomes an ApiError carrying the server's own message for the screen to show.

const KEY_STORAGE = 'tracepipe.api_key';

export class ApiError extends Error {
  /** @param {number} status HTTP status, or 0 when the server could not be reached. */
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

/** The request headers that carry `key`. */
export function credentialHeaders(key) {
  if (!key) return {};
  return /^bearer\s/i.test(key) ? { authorization: key } : { 'x-api-key': key };
}

// Told about every 401, so the shell can ask for the key (once; see app.js).
const unauthorizedListeners = new Set();

/** Calls `listener` whenever the server answers 401; returns the unsubscribe function. */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
}

/** Turns a failed response into an ApiError, preferring the `message` of the JSON error body. */
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

/** Sends one request; resolves with the Response when it is a success, throws ApiError otherwise. */
export async function send(method, path, body, { signal } = {}) {
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
  } catch (error) {
    if (error?.name === 'AbortError') throw error;
    throw new ApiError(0, `The server could not be reached (${error?.message ?? error}).`);
  }
  if (!response.ok) throw await errorFromResponse(response);
  return response;
}

async function json(method, path, body) {
  const response = await send(method, path, body);
  if (response.status === 204) return null;
  return response.json();
}

const id = (value) => encodeURIComponent(value);

export const api = {
  info: () => json('GET', '/info'),
  searchAssistants: (query) => json('POST', '/assistants/search', query),
  getAssistant: (assistantId) => json('GET', `/assistants/${id(assistantId)}`),
  createAssistant: (body) => json('POST', '/assistants', body),
  updateAssistant: (assistantId, body) => json('PATCH', `/assistants/${id(assistantId)}`, body),
  deleteAssistant: (assistantId) => json('DELETE', `/assistants/${id(assistantId)}`),
  assistantVersions: (assistantId) => json('POST', `/assistants/${id(assistantId)}/versions`, { limit: 100 }),
  setLatestVersion: (assistantId, version) => json('POST', `/assistants/${id(assistantId)}/latest`, { version }),
  assistantSchemas: (assistantId) => json('GET', `/assistants/${id(assistantId)}/schemas`),
  createThread: (metadata) => json('POST', '/threads', { metadata }),
  searchThreads: (query) => json('POST', '/threads/search', query),
  threadState: (threadId) => json('GET', `/threads/${id(threadId)}/state`),
  getRun: (threadId, runId) => json('GET', `/threads/${id(threadId)}/runs/${id(runId)}`),
  /** Asks the server to stop a run (it ends as `interrupted`); answers at once. */
  cancelRun: (threadId, runId) => send('POST', `/threads/${id(threadId)}/runs/${id(runId)}/cancel?action=interrupt`),
  /** Starts a streamed run; the caller reads the SSE body (see sse.js). */
  streamRun: (threadId, body, signal) => send('POST', `/threads/${id(threadId)}/runs/stream`, body, { signal }),
};

/** The deployment's graph ids: from `/info` when it lists them, else from the system assistants. */
export async function listGraphs() {
  const info = await api.info().catch(() => null);
  if (Array.isArray(info?.graphs)) return [...info.graphs].sort();
  const system = await api.searchAssistants({ metadata: { created_by: 'system' }, limit: 1000 });
  return [...new Set(system.map((assistant) => assistant.graph_id))].sort();
}
