// Raw-HTTP helpers for the agent server's acceptance tests (test/agent-api/): JSON requests that keep the status,
// headers and body text, and a server-sent-events reader that keeps each frame's lines in order,
// so tests can check the wire itself and not only what the SDK makes of it.

export interface RawResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON, or `undefined` when it is empty or not JSON. */
  readonly json: unknown;
}

/** Sends `body` as JSON (or `rawBody` verbatim) and reads the whole response. */
export async function request(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  // Raw HTTP clients ask for the JSON error body (without it, errors are their message as text,
  // as the SDKs expect).
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(new URL(path, baseUrl), { method, headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** One SSE frame as sent: its field lines in order, and the values decoded. */
export interface SseFrame {
  readonly lines: readonly string[];
  readonly event: string | undefined;
  readonly id: string | undefined;
  /** The `data:` lines joined with newlines, as the SSE specification assembles them. */
  readonly data: string;
}

/** Splits an SSE body into frames; comment-only blocks (heartbeats) are left out. */
export function parseSse(body: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of body.replace(/\r\n?/g, '\n').split('\n\n')) {
    const lines = block.split('\n').filter((line) => line !== '' && !line.startsWith(':'));
    if (lines.length === 0) continue;
    let event: string | undefined;
    let id: string | undefined;
    const data: string[] = [];
    for (const line of lines) {
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'id') id = value;
      else if (field === 'data') data.push(value);
    }
    frames.push({ lines, event, id, data: data.join('\n') });
  }
  return frames;
}

export interface RawStream extends RawResponse {
  readonly frames: SseFrame[];
}

/** POSTs (or GETs) a streaming route and reads the event stream to its end. */
export async function requestStream(
  baseUrl: string,
  method: 'GET' | 'POST',
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<RawStream> {
  const response = await request(baseUrl, method, path, options);
  return { ...response, frames: parseSse(response.text) };
}

/** Runs `action`, expecting it to fail; returns the error's message (the SDK's `HTTP <status>: <body>`). */
export async function failureOf(action: () => Promise<unknown>): Promise<string> {
  try {
    await action();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Collects every part of an SDK stream. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const parts: T[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

/**
 * `fetch` as a client that asks for JSON (`Accept: application/json`): its error answers are the
 * coded JSON body rather than the bare message the SDKs read.
 */
export function fetchAcceptingJson(input: string | URL, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has('accept')) headers.set('accept', 'application/json');
  return fetch(input, { ...init, headers });
}
