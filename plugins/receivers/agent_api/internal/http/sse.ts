// Server-sent events framing, in one place: `event:` line, the JSON payload split into one
// `data:` line per line, an optional `id:` line, then a blank line. CR and LF are refused in
// `event` and `id` because they would end the field early and let a value inject frames.

import type { ServerResponse } from 'node:http';

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

/** A comment line: ignored by clients, keeps idle proxies from closing the connection. */
export function writeHeartbeat(response: ServerResponse): void {
  if (response.destroyed || response.writableEnded) return;
  response.cork();
  response.write(': heartbeat\n\n');
  response.uncork();
}
