// The latest-state cache: a second read is served from the cache; a write drops the thread's entry;
// a read that overlapped a write is answered but not kept; the bounds (threads, characters) hold.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StateCache } from './state-cache.ts';

describe('StateCache', () => {
  it('keeps a computed state until the thread is written, or its graph or config changes', async () => {
    const cache = new StateCache({ maxThreads: 10, maxChars: 1000 });
    let computed = 0;
    const compute = (json: string) => async () => (computed++, json);
    assert.equal(await cache.get('t', 'k', compute('"a"')), '"a"');
    assert.equal(await cache.get('t', 'k', compute('"b"')), '"a"', 'served from the cache');
    assert.equal(computed, 1);
    cache.invalidate('t');
    assert.equal(await cache.get('t', 'k', compute('"c"')), '"c"');
    assert.equal(await cache.get('t', 'other', compute('"d"')), '"d"', 'another graph or config');
    cache.invalidate(undefined);
    assert.equal(cache.size, 0);
  });

  it('does not keep a state read while the thread was being written', async () => {
    const cache = new StateCache({ maxThreads: 10, maxChars: 1000 });
    let release!: () => void;
    const reading = cache.get('t', 'k', () => new Promise<string>((resolve) => (release = () => resolve('"old"'))));
    cache.invalidate('t');
    release();
    assert.equal(await reading, '"old"');
    assert.equal(cache.size, 0, 'the overlapping read was not kept');
    assert.equal(await cache.get('t', 'k', async () => '"new"'), '"new"');
    assert.equal(cache.size, 1);
  });

  it('keeps at most maxThreads states and maxChars characters, dropping the least recently read', async () => {
    const cache = new StateCache({ maxThreads: 3, maxChars: 12 });
    for (const id of ['a', 'b', 'c']) await cache.get(id, 'k', async () => '"xx"');
    await cache.get('a', 'k', async () => 'unused');
    await cache.get('d', 'k', async () => '"xx"');
    assert.equal(cache.size, 3);
    assert.equal(await cache.get('a', 'k', async () => 'recomputed'), '"xx"', 'a was read recently: kept');
    assert.equal(await cache.get('b', 'k', async () => 'recomputed'), 'recomputed', 'b was the oldest: dropped');
    await cache.get('big', 'k', async () => '"0123456789ab"');
    assert.equal(await cache.get('big', 'k', async () => 'again'), 'again', 'larger than maxChars: never kept');
    assert.ok(cache.size <= 3);
  });
});
