// @ts-check
// Server-sent events from a fetch() response body. EventSource cannot POST a run request, so the
// studio reads the stream itself; the parser follows the WHATWG rules (fields per line, `data`
// lines joined with a newline, comments ignored, CR, LF and CRLF all end a line, an event ends at
// a blank line) and copes with chunks that split a line or a CRLF pair anywhere.

/** @typedef {import('./types.js').SseEvent} SseEvent */
/** @typedef {import('./types.js').StreamEvent} StreamEvent */

/**
 * Feeds text chunks in, calls `onEvent({event, data, id})` per complete event.
 * @param {(event: SseEvent) => void} onEvent
 * @returns {{ push(chunk: string): void, end(): void }}
 */
export function createSseParser(onEvent) {
  let buffer = '';
  let event = '';
  /** @type {string[]} */
  let data = [];
  /** @type {string | undefined} */
  let lastId;

  /** @param {string} text */
  const line = (text) => {
    if (text === '') {
      if (data.length > 0) onEvent({ event: event || 'message', data: data.join('\n'), id: lastId });
      event = '';
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) lastId = value;
  };

  return {
    push(chunk) {
      buffer += chunk;
      for (;;) {
        const match = /\r\n|\r|\n/.exec(buffer);
        if (!match) return;
        // A CR at the very end may be the first half of a CRLF still in transit.
        if (match[0] === '\r' && match.index === buffer.length - 1) return;
        line(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
      }
    },
    end() {
      if (buffer !== '') line(buffer.replace(/\r$/, ''));
      buffer = '';
      line('');
    },
  };
}

/**
 * Reads the whole stream; each event's data is parsed as JSON (kept as text when it is not).
 * @param {Response} response A response with a body (a streamed run's).
 * @param {(event: StreamEvent) => void} onEvent
 */
export async function readSse(response, onEvent) {
  const parser = createSseParser(({ event, data, id }) => {
    /** @type {unknown} */
    let value = data;
    try {
      value = JSON.parse(data);
    } catch {
      // Some servers send plain-text data; pass it through.
    }
    onEvent({ event, data: value, id });
  });
  // A streamed run's response always has a body.
  const reader = /** @type {NonNullable<Response['body']>} */ (response.body)
    .pipeThrough(new TextDecoderStream())
    .getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.push(value);
  }
  parser.end();
}
