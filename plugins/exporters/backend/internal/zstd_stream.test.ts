import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ZstdStreamCompressor, decompressZstd } from './zstd_stream.ts';

/** A body as the exporter stores it: written in pieces, so its frame has no content size. */
function batchBody(raw: Buffer): Buffer {
  const compressor = new ZstdStreamCompressor(3);
  for (let at = 0; at < raw.length; at += 10_000) compressor.write(raw.subarray(at, at + 10_000));
  return compressor.finish();
}

// Text-like, the same on every run, and large enough to span several decoder output buffers.
const raw = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `{"run":${i},"v":${(i * 7919) % 10007}}`).join(','));
const body = batchBody(raw);

describe('decompressZstd', () => {
  it('inflates what ZstdStreamCompressor wrote, and several frames one after the other', () => {
    assert.ok(decompressZstd(body).equals(raw));
    assert.ok(
      decompressZstd(Buffer.concat([body, batchBody(Buffer.from('tail'))])).equals(
        Buffer.concat([raw, Buffer.from('tail')]),
      ),
    );
    assert.equal(decompressZstd(Buffer.alloc(0)).length, 0);
  });

  it('inflates a frame whose end fills the output buffer exactly', () => {
    const exact = Buffer.alloc(128 * 1024 + 3, 'a'); // Any size near the buffer's: check a few.
    for (let size = exact.length - 6; size <= exact.length; size++) {
      assert.ok(decompressZstd(batchBody(exact.subarray(0, size))).equals(exact.subarray(0, size)));
    }
  });

  // zstd-napi's shared decompress() failed every call after one of these with "Operation not
  // authorized at current processing stage", and returned a truncated frame short without error.
  const broken: [string, Buffer][] = [
    ['a truncated batch', body.subarray(0, body.length - 5)],
    ['a batch cut after its header', body.subarray(0, 12)],
    // Without a checksum, changed bytes may well decode; a reserved block type (3) never does. The
    // first block header follows the 6-byte frame header (magic, descriptor, window).
    [
      'a batch with a corrupt block header',
      Buffer.concat([body.subarray(0, 6), Buffer.from([body[6]! | 0b110]), body.subarray(7)]),
    ],
    ['garbage', Buffer.from('not zstd at all')],
  ];
  for (const [name, bad] of broken) {
    it(`refuses ${name}, and the next valid batch still decompresses`, () => {
      for (let round = 0; round < 3; round++) {
        assert.throws(() => decompressZstd(bad));
        assert.ok(decompressZstd(body).equals(raw));
      }
    });
  }
});
