// For tests: reads a raw SSE response body into frames `{event, data, id}` without the SDK, so
// tests can check the framing itself (ids, order) and abort mid-stream.

export interface RawFrame {
  event: string;
  data: unknown;
  id?: string;
}

/** Parses complete frames from SSE text; comment lines are skipped. */
export function parseFrames(text: string): RawFrame[] {
  const frames: RawFrame[] = [];
  for (const block of text.split('\n\n')) {
    if (block.trim() === '') continue;
    let event = 'message';
    const data: string[] = [];
    let id: string | undefined;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
      else if (line.startsWith('id: ')) id = line.slice(4);
    }
    if (data.length === 0) continue;
    frames.push({ event, data: JSON.parse(data.join('\n')), ...(id !== undefined ? { id } : {}) });
  }
  return frames;
}

/** Reads the whole SSE body of a response. */
export async function readFrames(response: Response): Promise<RawFrame[]> {
  return parseFrames(await response.text());
}

/** Reads until `count` frames arrived, then returns them (the rest of the body is left unread). */
export async function readFirstFrames(response: Response, count: number): Promise<RawFrame[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const frames = parseFrames(text.slice(0, text.lastIndexOf('\n\n') + 2));
    if (frames.length >= count) {
      reader.releaseLock();
      return frames.slice(0, count);
    }
    const { value, done } = await reader.read();
    if (done) return parseFrames(text);
    text += decoder.decode(value, { stream: true });
  }
}
