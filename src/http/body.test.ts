// readBody's onGrow: the caller sees the body's size as it is read and inflated, and a refusal
// there stops the read at once — a gzip bomb is refused after a bounded number of inflated bytes,
// having pulled only a small part of its compressed bytes — with the caller's own error. And the
// one-call inflation of small gzip and deflate bodies: the same bytes and errors as the steps, its
// size reported once, a trailer that lies about the size refused as zlib refuses it in steps.

import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { constants, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { compress as zstdCompress } from 'zstd-napi';
import type { BodyCoding } from './body.ts';
import { BodyCodingError, BodyTooLargeError, readBody } from './body.ts';

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
    const bomb = gzipZeros(8192); // 8 GiB of zeros in about 8 MB: more than one call inflates
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
    // One inflation step (64 KiB) past the refusal point, and of the compressed bytes the first MiB
    // (read before deciding whether one call may inflate the body) and a few chunks more.
    assert.ok(largest <= MiB + 64 * 1024, `inflated ${largest} bytes`);
    assert.ok(pulled() < 2 * MiB, `pulled ${pulled()} of ${bomb.length} compressed bytes`);
  });

  it('stops a bomb small enough for one call once the caller refuses its size', async () => {
    const bomb = gzipZeros(256); // 256 MiB of zeros in about 256 KB: read whole, inflated in one call
    let largest = 0;
    const refusal = new Refused('no room');
    await assert.rejects(
      readBody(counted(bomb).stream, 'gzip', 512 * MiB, {
        onGrow: (bytes) => {
          largest = bytes;
          if (bytes > MiB) throw refusal;
        },
      }),
      (error) => error === refusal,
    );
    // The call stops at its 4 MiB bound; the steps that count the body then stop at the refusal.
    assert.ok(largest <= MiB + 64 * 1024, `inflated ${largest} bytes`);
  });

  it('reports the growing size for every coding, and the whole body when nothing refuses', async () => {
    const plain = Buffer.alloc(6 * MiB, 0x61); // more than one call inflates
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

describe('readBody: small gzip and deflate bodies, inflated in one call', () => {
  const plain = Buffer.from(JSON.stringify({ spans: Array.from({ length: 2000 }, (_, i) => ({ name: `span ${i}` })) }));
  /** A body of several inflation steps (440 KB). */
  const several = Buffer.concat(Array.from({ length: 10 }, () => plain));
  /** `body` with gzip's size trailer (ISIZE) replaced. */
  const withTrailer = (body: Buffer, size: number) => {
    const copy = Buffer.from(body);
    copy.writeUInt32LE(size, copy.length - 4);
    return copy;
  };
  const read = (body: Buffer, coding: BodyCoding, maxBytes = 16 * MiB, onGrow?: (bytes: number) => void) =>
    readBody(counted(body).stream, coding, maxBytes, onGrow ? { onGrow } : {});

  it('returns the body, and reports its size once', async () => {
    for (const [coding, body] of [
      ['gzip', gzipSync(several)],
      ['deflate', deflateSync(several)],
    ] as const) {
      const sizes: number[] = [];
      assert.deepEqual(await read(body, coding, 16 * MiB, (b) => sizes.push(b)), several, coding);
      assert.deepEqual(sizes, [several.length], coding);
    }
  });

  it("passes on the caller's refusal of the size after the call, as the steps do", async () => {
    // The receivers' memory bound refuses here (429): the body fits one call, not the room left.
    const refusal = new Refused('no room');
    for (const [coding, body] of [
      ['gzip', gzipSync(several)],
      ['deflate', deflateSync(several)],
    ] as const) {
      const sizes: number[] = [];
      await assert.rejects(
        read(body, coding, 16 * MiB, (bytes) => {
          sizes.push(bytes);
          throw refusal;
        }),
        (error) => error === refusal,
        coding,
      );
      assert.deepEqual(sizes, [several.length], coding);
    }
  });

  it('refuses a gzip body whose trailer lies about its size, and inflates one of several members', async () => {
    const gzipped = gzipSync(plain);
    // A trailer checked by zlib only after the data: a wrong size is a coding error, as in steps.
    for (const size of [0, 1, plain.length - 1, 3 * MiB, 2 ** 32 - 1]) {
      await assert.rejects(read(withTrailer(gzipped, size), 'gzip'), BodyCodingError, `trailer ${size}`);
    }
    const members = Buffer.concat([gzipSync(plain.subarray(0, 1000)), gzipSync(plain.subarray(1000))]);
    assert.deepEqual(await read(members, 'gzip'), plain);
  });

  it('answers as the steps do: empty bodies, corrupt and truncated ones, and bodies over the limit', async () => {
    const gzipped = gzipSync(plain);
    // No bytes at all are no gzip stream (zlib says so in steps too).
    await assert.rejects(read(Buffer.alloc(0), 'gzip'), /invalid gzip stream: unexpected end of file/);
    assert.equal((await read(gzipSync(Buffer.alloc(0)), 'gzip')).length, 0);
    await assert.rejects(
      read(Buffer.from('not gzip at all'), 'gzip'),
      /^BodyCodingError: invalid gzip stream: incorrect header check$/,
    );
    await assert.rejects(read(deflateRawSync(plain), 'deflate'), /invalid deflate stream: incorrect header check/);
    await assert.rejects(
      read(gzipped.subarray(0, gzipped.length - 10), 'gzip'),
      /invalid gzip stream: unexpected end of file/,
    );
    // Over the limit, within one call's bound and beyond it: 413 either way, whatever the trailer says.
    // (Half of a body of several steps, so that the limit is passed before zlib reads the trailer.)
    const limit = Math.floor(several.length / 2);
    for (const trailer of [several.length, 10, 2 ** 32 - 1]) {
      await assert.rejects(
        read(withTrailer(gzipSync(several), trailer), 'gzip', limit),
        (error) => error instanceof BodyTooLargeError && error.decompressed && error.limit === limit,
      );
    }
    const large = Buffer.alloc(5 * MiB, 0x62);
    await assert.rejects(read(gzipSync(large), 'gzip', 5 * MiB - 1), BodyTooLargeError);
    assert.equal((await read(gzipSync(large), 'gzip', 5 * MiB)).length, large.length);
  });

  it('returns the body in a buffer of about its size, not in a larger piece of zlib output', async () => {
    const members = Buffer.concat([gzipSync(plain.subarray(0, 40_000)), gzipSync(plain.subarray(40_000))]);
    for (const [what, body, coding] of [
      ['gzip', gzipSync(plain), 'gzip'],
      ['a short gzip body', gzipSync(plain.subarray(0, 100)), 'gzip'],
      ['deflate', deflateSync(plain), 'deflate'],
      ['a short deflate body', deflateSync(plain.subarray(0, 1000)), 'deflate'],
      ['gzip members whose last trailer is small', members, 'gzip'],
    ] as const) {
      const result = await read(body, coding);
      assert.ok(
        result.buffer.byteLength <= Math.max(2 * result.byteLength, 8192),
        `${what}: ${result.byteLength} bytes in a buffer of ${result.buffer.byteLength}`,
      );
    }
  });
});
