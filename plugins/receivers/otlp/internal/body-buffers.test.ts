// BodyBuffers: a buffer given back is lent again to a body that fits it, and nothing else is kept.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BodyBuffers } from './body-buffers.ts';

describe('BodyBuffers', () => {
  it('lends a buffer of the size asked for, and lends it again once it is given back', () => {
    const buffers = new BodyBuffers();
    const first = buffers.acquire(200_000);
    assert.equal(first.length, 200_000);
    buffers.release(first);
    const second = buffers.acquire(150_000);
    assert.equal(second.length, 150_000);
    assert.equal(second.buffer, first.buffer);
    // Still lent: a third body gets a buffer of its own.
    assert.notEqual(buffers.acquire(150_000).buffer, first.buffer);
  });

  it('ignores bodies it did not lend, and a buffer given back twice', () => {
    const buffers = new BodyBuffers();
    buffers.release(Buffer.alloc(100_000));
    assert.equal(buffers.freeBytes, 0);
    const lent = buffers.acquire(100_000);
    buffers.release(lent);
    buffers.release(lent);
    assert.equal(buffers.freeBytes, 128 * 1024);
  });

  it('keeps neither bodies over 4 MiB nor more than four free buffers', () => {
    const buffers = new BodyBuffers();
    buffers.release(buffers.acquire(5 * 1024 * 1024));
    assert.equal(buffers.freeBytes, 0);
    const lent = Array.from({ length: 6 }, () => buffers.acquire(64 * 1024));
    for (const body of lent) buffers.release(body);
    assert.equal(buffers.freeBytes, 4 * 64 * 1024);
  });
});
