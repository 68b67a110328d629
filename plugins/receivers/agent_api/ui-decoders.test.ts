// The decoders of the web interface, run in Node (they are plain ES modules with no DOM use):
// the SSE parser reads back exactly the frames the server's own SSE writer produced, however the
// network splits them; the JSON-object field accepts objects only; streamed message chunks add up
// to the whole message. The modules and their JSDoc types (types.js) are the interface's own, so
// the test and the interface share one definition of what they decode.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { HEARTBEAT, formatSSE } from './internal/http/sse.ts';
import type { SseEvent, StreamedMessage } from './internal/ui/static/js/types.js';
import { parseJsonObject } from './internal/ui/static/js/json-object.js';
import { messageText } from '@tracepipe/webui/messages.js';
import { addChunk, mergeMessages } from './internal/ui/static/js/messages.js';
import { createSseParser } from './internal/ui/static/js/sse.js';

function parseAll(chunks: readonly string[]): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = createSseParser((event) => events.push(event));
  for (const chunk of chunks) parser.push(chunk);
  parser.end();
  return events;
}

/** Cuts `text` at the given (sorted, deduplicated) positions. */
function cut(text: string, positions: readonly number[]): string[] {
  const points = [...new Set(positions.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let start = 0;
  for (const point of points) {
    pieces.push(text.slice(start, point));
    start = point;
  }
  pieces.push(text.slice(start));
  return pieces;
}

const frame = fc.record({
  event: fc.stringMatching(/^[a-z][a-z|/_-]{0,15}$/),
  data: fc.jsonValue(),
  id: fc.option(fc.nat({ max: 10_000 }), { nil: undefined }),
});

describe('web interface decoders', () => {
  it('the SSE parser reads back every frame the server writes, split anywhere, with heartbeats between', () => {
    fc.assert(
      fc.property(
        fc.array(frame, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        (frames, positions, heartbeats, crlf) => {
          let text = frames.map((f) => (heartbeats ? HEARTBEAT : '') + formatSSE(f)).join('');
          if (crlf) text = text.replace(/\n/g, '\r\n');
          const events = parseAll(cut(text, positions));
          assert.equal(events.length, frames.length);
          let lastId: string | undefined;
          events.forEach((event, index) => {
            const sent = frames[index];
            assert.equal(event.event, sent.event);
            assert.deepEqual(JSON.parse(event.data), JSON.parse(JSON.stringify(sent.data)));
            // An id is kept until the next one, as EventSource does.
            if (sent.id !== undefined) lastId = String(sent.id);
            assert.equal(event.id, lastId);
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the SSE parser follows the field rules: multi-line data, missing event name, no space, unknown fields, unterminated last frame', () => {
    assert.deepEqual(parseAll(['data: a\ndata:b\nretry: 5\nfoo\n\n']), [
      { event: 'message', data: 'a\nb', id: undefined },
    ]);
    assert.deepEqual(parseAll(['event: x\n\n']), [], 'a frame without data is no event');
    assert.deepEqual(parseAll(['event: values\ndata: {"a":1}']), [{ event: 'values', data: '{"a":1}', id: undefined }]);
    assert.deepEqual(parseAll(['event: a\r', '\ndata: 1\r', '\n\r', '\n']), [{ event: 'a', data: '1', id: undefined }]);
    assert.deepEqual(parseAll(['event: a\rdata: 1\r\r']), [{ event: 'a', data: '1', id: undefined }]);
  });

  it('the context field accepts exactly the JSON objects', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const parsed = parseJsonObject(text);
        assert.equal(parsed.error, undefined);
        assert.deepEqual(parsed.value, JSON.parse(text));
      }),
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(fc.jsonValue()),
          fc.string(),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.boolean(),
          fc.constant(null),
        ),
        (value) => {
          const parsed = parseJsonObject(JSON.stringify(value));
          assert.equal(parsed.value, undefined);
          assert.match(parsed.error!, /^Must be a JSON object/);
        },
      ),
    );
    assert.deepEqual(parseJsonObject('  '), { value: {} });
    assert.match(parseJsonObject('{"a": ').error!, /^Not valid JSON/);
    assert.match(parseJsonObject("{'a': 1}").error!, /^Not valid JSON/);
  });

  it('streamed chunks of one message add up to the whole message, and the final state replaces them', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 10 }), (tokens) => {
        let streamed: StreamedMessage[] = [];
        for (const token of tokens)
          streamed = addChunk(streamed, { id: 'run-1', type: 'AIMessageChunk', content: token });
        assert.equal(streamed.length, 1);
        assert.equal(streamed[0].content, tokens.join(''));
        const human = { id: 'h', type: 'human', content: 'hi' };
        assert.deepEqual(mergeMessages([human], streamed), [human, streamed[0]]);
        const final = { id: 'run-1', type: 'ai', content: tokens.join('') };
        assert.deepEqual(mergeMessages([human, final], streamed), [human, final]);
      }),
    );
    assert.equal(
      messageText([
        { type: 'text', text: 'a' },
        { type: 'tool_use', id: 't' },
        { type: 'text', text: 'b' },
      ]),
      'a[tool_use]b',
    );
  });
});
