// Tests of estimateJsonBytes: exact for ASCII data without escapes, and short of the UTF-8 size
// only by the extra bytes of other characters and of escapes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateJsonBytes } from './json-size.ts';

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '');

describe('estimateJsonBytes', () => {
  it('is exact for ASCII runs, with nested objects, arrays, numbers, booleans and nulls', () => {
    const run = {
      id: '00000000-0000-0000-aac6-e17a81687dcb',
      name: 'chat gpt-4o-mini',
      start_time: '2026-11-24T07:26:05.586Z',
      inputs: { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] },
      outputs: { usage_metadata: { input_tokens: 412, output_tokens: 0, total_tokens: -5 } },
      extra: { invocation_params: { temperature: 0.2, top_p: 1e-7, max_tokens: 123456789012 }, stream: false },
      tags: [],
      error: null,
      events: [{}, [], [null, true, 3.5]],
    };
    assert.equal(estimateJsonBytes(run), jsonBytes(run));
  });

  it('leaves out what JSON leaves out, and writes what it writes as null', () => {
    const value = { kept: 1, gone: undefined, fn: () => 1, list: [undefined, () => 1, Number.NaN, Infinity] };
    assert.equal(estimateJsonBytes(value), jsonBytes(value));
    assert.equal(estimateJsonBytes(undefined), 0);
  });

  it('counts a character per byte: short by the extra UTF-8 bytes and escapes only', () => {
    const text = { content: 'Revenue 4.2 M€ — "up" 12%\n' };
    const estimate = estimateJsonBytes(text);
    assert.ok(estimate < jsonBytes(text));
    // € and — are 3 bytes each in UTF-8 (+4), the quotes and the newline take an escape each (+3).
    assert.equal(jsonBytes(text) - estimate, 7);
  });
});
