// Tests of TtlMap: expiry by age, the entry bound, and refresh on write.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TtlMap } from './ttl-map.ts';

describe('TtlMap', () => {
  it('forgets entries once their time to live has passed', () => {
    let now = 0;
    const map = new TtlMap<string, number>(100, 10, () => now);
    map.set('a', 1);
    now = 99;
    assert.equal(map.get('a'), 1);
    now = 100;
    assert.equal(map.get('a'), undefined);
    assert.equal(map.has('a'), false);
  });

  it('evicts the oldest entries beyond its size bound', () => {
    const map = new TtlMap<number, number>(1000, 3, () => 0);
    for (let n = 0; n < 5; n++) map.set(n, n);
    assert.equal(map.size, 3);
    assert.equal(map.get(0), undefined);
    assert.equal(map.get(4), 4);
  });

  it('counts age from the last write, and sweep() drops only expired entries', () => {
    let now = 0;
    const map = new TtlMap<string, number>(100, 10, () => now);
    map.set('old', 1);
    map.set('kept', 2);
    now = 60;
    map.set('kept', 3);
    now = 120;
    map.sweep();
    assert.equal(map.size, 1);
    assert.equal(map.get('kept'), 3);
    map.delete('kept');
    assert.equal(map.size, 0);
  });
});
