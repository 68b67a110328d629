// utf8Text (src/http/utf8-text.ts) returns what Buffer#toString('utf8') returns, whichever way it
// decodes: ASCII, text with other characters early or late, invalid sequences (U+FFFD), bodies
// below and above the sizes it transcodes, ranges, and Uint8Array views that are not Buffers.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { utf8Text } from './utf8-text.ts';

const KiB = 1024;

/** `text` repeated up to about `bytes` bytes of UTF-8. */
function repeatedTo(text: string, bytes: number): Buffer {
  return Buffer.from(text.repeat(Math.ceil(bytes / Buffer.byteLength(text))));
}

describe('utf8Text', () => {
  it('reads ASCII as one byte a character', () => {
    const body = repeatedTo('{"key":"value","n":1}', 200 * KiB);
    assert.equal(utf8Text(body), body.toString('utf8'));
  });

  it('reads text with other characters at any size it decodes differently', () => {
    for (const bytes of [10, 1 * KiB, 64 * KiB, 300 * KiB, 5 * KiB * KiB]) {
      for (const body of [
        repeatedTo('price 12 € — naïve café 😀 ', bytes),
        Buffer.concat([Buffer.from('€'), repeatedTo('ascii ', bytes)]),
        Buffer.concat([repeatedTo('ascii ', bytes), Buffer.from('€')]),
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), repeatedTo('bom then ü ', bytes)]),
      ])
        assert.equal(utf8Text(body), body.toString('utf8'), `${body.length} bytes`);
    }
  });

  it('replaces invalid sequences with U+FFFD as toString does', () => {
    const invalid = [
      [0xc0, 0xaf], // overlong
      [0xed, 0xa0, 0x80], // an encoded surrogate
      [0xe2, 0x82], // truncated
      [0xf4, 0x90, 0x80, 0x80], // beyond U+10FFFF
      [0xff],
    ];
    for (const bytes of invalid) {
      const body = Buffer.concat([repeatedTo('€ text ', 8 * KiB), Buffer.from(bytes), Buffer.from('end')]);
      const text = utf8Text(body);
      assert.equal(text, body.toString('utf8'));
      assert.ok(text.includes('\ufffd'));
    }
  });

  it('reads a Uint8Array view at an offset of a larger buffer', () => {
    const whole = Buffer.concat([Buffer.from('before'), repeatedTo('€uro ', 4 * KiB), Buffer.from('after')]);
    const view = new Uint8Array(whole.buffer, whole.byteOffset + 6, whole.length - 11);
    assert.equal(utf8Text(view), Buffer.from(view).toString('utf8'));
  });

  it('reads a range of a buffer', () => {
    const whole = Buffer.concat([Buffer.from('€ before '), repeatedTo('Grüße ', 8 * KiB), Buffer.from(' after €')]);
    for (const [start, end] of [
      [0, whole.length],
      [3, whole.length - 3],
      [100, 100 + 2048],
      [11, 40],
    ] as const)
      assert.equal(utf8Text(whole, start, end), whole.toString('utf8', start, end), `${start}-${end}`);
  });

  it('agrees with toString on any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 3000 }), fc.string({ unit: 'binary' }), (bytes, text) => {
        for (const body of [Buffer.from(bytes), Buffer.from(text.repeat(8))])
          assert.equal(utf8Text(body), body.toString('utf8'));
      }),
      { numRuns: 300 },
    );
  });
});
