// Server-sent events framing, in one place: `event:` line, the JSON payload split into one
// `data:` line per line, an optional `id:` line, then a blank line. CR and LF are refused in
// `event` and `id` because they would end the field early and let a value inject frames.

import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

export interface SseFrame {
  readonly event: string;
  readonly data: unknown;
  readonly id?: string | number;
}

export class SseFramingError extends Error {
  override readonly name = 'SseFramingError';
}

export function formatSSE(frame: SseFrame): string {
  if (/[\r\n]/.test(frame.event)) throw new SseFramingError('SSE event names cannot contain CR or LF');
  const id = frame.id === undefined ? undefined : String(frame.id);
  if (id !== undefined && /[\r\n]/.test(id)) throw new SseFramingError('SSE ids cannot contain CR or LF');
  const text = JSON.stringify(frame.data === undefined ? null : frame.data);
  let out = `event: ${frame.event}\n`;
  for (const line of text.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  if (id !== undefined) out += `id: ${id}\n`;
  return `${out}\n`;
}

/**
 * Writes one frame; resolves when the socket can take more (back-pressure), or at once when the
 * client has gone (the caller notices `response.destroyed`).
 */
export async function writeSSE(response: ServerResponse, frame: SseFrame): Promise<void> {
  if (response.destroyed || response.writableEnded) return;
  // Sent now, not on the next tick: a write corks the socket until `process.nextTick`, and ticks
  // wait while promise jobs keep coming — a graph executing in this process is a long run of them,
  // during which every frame (the `metadata` of a run just created, each token) would sit in the
  // corked socket until the graph ends. Corking here ourselves makes the write leave the automatic
  // cork alone, and uncorking sends it.
  response.cork();
  const flowing = response.write(formatSSE(frame));
  response.uncork();
  if (flowing) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/**
 * A comment line, keeping idle proxies from closing the connection. It ends with one newline, not
 * a blank line: a blank line is where an event is dispatched, and a decoder that keeps the last
 * `id:` (every frame here has one) dispatches even an event without data there. The LangGraph SDK
 * does, and handed its callers `{event: "", data: null}` for every heartbeat. A lone comment line
 * only becomes part of the next frame, which clients skip.
 */
export const HEARTBEAT = ': heartbeat\n';

export function writeHeartbeat(response: ServerResponse): void {
  if (response.destroyed || response.writableEnded) return;
  response.cork();
  response.write(HEARTBEAT);
  response.uncork();
}

/** An SSE response that owns its socket: what `openEventStream` hands back. */
export interface EventStream {
  /** The response to write frames to; the caller ends it. */
  readonly raw: ServerResponse;
  /** Stops the heartbeat comments; call it before or as the response ends. */
  stopHeartbeat(): void;
}

/**
 * Takes the response over from Fastify (`hijack`), sends the SSE headers at once — the reply's own
 * headers (CORS and the like) first, `headers` last — and writes a heartbeat comment every
 * `heartbeatMs` until stopped. The headers leave now rather than with the first frame, so that a
 * client waiting on a stream with nothing to say yet sees it open; the heartbeat timer is unref'd,
 * so an idle stream does not keep the process up.
 */
export function openEventStream(
  reply: FastifyReply,
  heartbeatMs: number,
  headers: Readonly<Record<string, string>> = {},
): EventStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...headers,
  });
  raw.flushHeaders();
  const heartbeat = setInterval(() => writeHeartbeat(raw), heartbeatMs);
  heartbeat.unref();
  return { raw, stopHeartbeat: () => clearInterval(heartbeat) };
}
