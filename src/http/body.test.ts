// readBody's onGrow: the caller sees the body's size as it is read and inflated, and a refusal
// there stops the read at once — a gzip bomb is refused after a bounded number of inflated bytes,
// having pulled only a small part of its compressed bytes — with the caller's own error.

import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { constants, deflateRawSync, gzipSync } from 'node:zlib';
import { compress as zstdCompress } from 'zstd-napi';
import type { BodyCoding } from './body.ts';
import { readBody } from './body.ts';

const MiB = 1024 * 1024;

/** A gzip stream of `mib` MiB of zeros, built from one flushed MiB repeated (no trailer needed to refuse it). */
function gzipZeros(mib: number): Buffer {
  const segment = deflateRawSync(Buffer.alloc(MiB), { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  return Buffer.concat([
    Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]),
    ...Array.from({ length: mib }, () => segment),
  ]);
}

/** `body` as a request stream in 16 KB chunks, counting the bytes the reader pulled. */
function counted(body: Buffer): { stream: Readable; pulled: () => number } {
  let offset = 0;
  const stream = new Readable({
    highWaterMark: 16 * 1024,
    read() {
      if (offset >= body.length) return void this.push(null);
      const chunk = body.subarray(offset, offset + 16 * 1024);
      offset += chunk.length;
      this.push(chunk);
    },
  });
  return { stream, pulled: () => offset };
}

class Refused extends Error {}

describe('readBody onGrow', () => {
  it('stops inflating a bomb as soon as the caller refuses its size, having read little of it', async () => {
    const bomb = gzipZeros(256); // 256 MiB of zeros in about 256 KB
    const { stream, pulled } = counted(bomb);
    let largest = 0;
    const refusal = new Refused('no room');
    await assert.rejects(
      readBody(stream, 'gzip', 512 * MiB, {
        onGrow: (bytes) => {
          largest = bytes;
          if (bytes > MiB) throw refusal;
        },
      }),
      (error) => error === refusal,
    );
    // One inflation step (64 KiB) past the refusal point, and a fraction of the compressed bytes.
    assert.ok(largest <= MiB + 64 * 1024, `inflated ${largest} bytes`);
    assert.ok(pulled() < bomb.length / 8, `pulled ${pulled()} of ${bomb.length} compressed bytes`);
  });

  it('reports the growing size for every coding, and the whole body when nothing refuses', async () => {
    const plain = Buffer.alloc(3 * MiB, 0x61);
    const encoded: Record<BodyCoding, Buffer> = {
      identity: plain,
      gzip: gzipSync(plain),
      deflate: deflateRawSync(plain),
      zstd: zstdCompress(plain),
    };
    for (const coding of ['identity', 'gzip', 'zstd'] as const) {
      const sizes: number[] = [];
      const body = await readBody(counted(encoded[coding]).stream, coding, 16 * MiB, { onGrow: (b) => sizes.push(b) });
      assert.equal(body.length, plain.length, coding);
      assert.ok(sizes.length > 1, `${coding}: ${sizes.length} reports`);
      assert.deepEqual(
        [...sizes].sort((x, y) => x - y),
        sizes,
        `${coding}: sizes only grow`,
      );
      assert.equal(sizes.at(-1), plain.length, coding);
    }
  });

  it('refuses a plain body without Content-Length once it grows past what the caller allows', async () => {
    const { stream, pulled } = counted(Buffer.alloc(64 * MiB));
    const refusal = new Refused('no room');
    await assert.rejects(
      readBody(stream, 'identity', 128 * MiB, {
        onGrow: (bytes) => {
          if (bytes > MiB) throw refusal;
        },
      }),
      (error) => error === refusal,
    );
    assert.ok(pulled() < 4 * MiB, `pulled ${pulled()} bytes`);
  });
});
