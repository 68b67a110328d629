// The SSE framing (`writeSSE`): frames, the CR/LF rules, a property test that any JSON payload survives
// a parse back, and the client-abort path read from the raw body stream of a real server.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SseFramingError, formatSSE, writeSSE } from './internal/http/sse.ts';
import { parseFrames } from './testing/sse-client.ts';

describe('SSE framing', () => {
  it('writes event, one data line per payload line, id, and a blank line', () => {
    assert.equal(
      formatSSE({ event: 'metadata', data: { run_id: 'r' }, id: 0 }),
      'event: metadata\ndata: {"run_id":"r"}\nid: 0\n\n',
    );
    assert.equal(formatSSE({ event: 'values', data: null }), 'event: values\ndata: null\n\n');
  });

  it('escapes line breaks inside the payload, so a value cannot end its frame', () => {
    // JSON never holds raw newlines, but a pre-serialised value may arrive through `data` as a string.
    const frame = formatSSE({ event: 'custom', data: 'a\nb' });
    assert.equal(frame, 'event: custom\ndata: "a\\nb"\n\n');
  });

  it('rejects CR or LF in the event name or the id', () => {
    assert.throws(() => formatSSE({ event: 'bad\nevent', data: 1 }), SseFramingError);
    assert.throws(() => formatSSE({ event: 'bad\revent', data: 1 }), SseFramingError);
    assert.throws(() => formatSSE({ event: 'ok', data: 1, id: '1\n2' }), SseFramingError);
  });

  it('round-trips any JSON payload (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.stringMatching(/^[a-z|/:-]{1,20}$/), fc.nat(), (data, event, id) => {
        const [frame] = parseFrames(formatSSE({ event, data, id }));
        assert.equal(frame.event, event);
        assert.equal(frame.id, String(id));
        assert.deepEqual(frame.data, JSON.parse(JSON.stringify(data)));
      }),
    );
  });

  it('stops writing when the client aborts mid-stream', async () => {
    let finished!: (written: number) => void;
    const loopEnded = new Promise<number>((resolve) => (finished = resolve));
    const server = createServer(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      let written = 0;
      while (!response.destroyed && written < 100_000) {
        // Resolves on drain or on close: a gone client never leaves the writer waiting.
        await writeSSE(response, { event: 'tick', data: { i: written, padding: 'x'.repeat(1024) }, id: written });
        written++;
      }
      // Writing to the closed response is a harmless no-op.
      await writeSSE(response, { event: 'late', data: null });
      finished(written);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const controller = new AbortController();
    const response = await fetch(`http://127.0.0.1:${port}/`, { signal: controller.signal });
    const reader = response.body!.getReader();
    const { value } = await reader.read();
    assert.match(new TextDecoder().decode(value), /^event: tick\ndata: \{"i":0,/);
    controller.abort();
    const written = await loopEnded;
    assert.ok(written < 100_000, 'the writer stopped when the client left');
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
