// Tests of TtlMap: expiry by age, the entry bound, and refresh on write.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
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

  it('evicts by write order after a sweep found the oldest entry alive and it was written again', () => {
    const map = new TtlMap<string, number>(1000, 2, () => 0);
    map.set('a', 1);
    map.set('b', 2);
    map.sweep(); // looks at 'a', which stays
    map.set('a', 3); // 'a' is now the newest
    map.set('c', 4);
    assert.deepEqual([map.get('a'), map.get('b'), map.get('c')], [3, undefined, 4]);
  });

  it('agrees with a plain model through random writes, re-writes, deletes, sweeps, clears and expiry', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            {
              weight: 8,
              arbitrary: fc.record({ op: fc.constant('set' as const), key: fc.integer({ min: 0, max: 7 }) }),
            },
            {
              weight: 1,
              arbitrary: fc.record({ op: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 7 }) }),
            },
            {
              weight: 2,
              arbitrary: fc.record({ op: fc.constant('get' as const), key: fc.integer({ min: 0, max: 7 }) }),
            },
            {
              weight: 2,
              arbitrary: fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 40 }) }),
            },
            { weight: 3, arbitrary: fc.constant({ op: 'sweep' as const }) },
            { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
          ),
          { maxLength: 200 },
        ),
        (operations) => {
          let now = 0;
          const map = new TtlMap<number, number>(100, 5, () => now);
          // The model: entries in write order, the oldest first.
          let model: { key: number; value: number; at: number }[] = [];
          const live = (key: number) => model.find((entry) => entry.key === key && now - entry.at < 100);
          operations.forEach((operation, index) => {
            switch (operation.op) {
              case 'set':
                map.set(operation.key, index);
                model = model.filter((entry) => entry.key !== operation.key);
                model.push({ key: operation.key, value: index, at: now });
                model = model.slice(-5);
                break;
              case 'delete':
                map.delete(operation.key);
                model = model.filter((entry) => entry.key !== operation.key);
                break;
              case 'get':
                assert.equal(map.get(operation.key), live(operation.key)?.value);
                model = model.filter((entry) => entry.key !== operation.key || now - entry.at < 100);
                break;
              case 'tick':
                now += operation.ms;
                break;
              case 'sweep':
                map.sweep();
                model = model.filter((entry) => now - entry.at < 100);
                assert.equal(map.size, model.length);
                break;
              case 'clear':
                map.clear();
                model = [];
                break;
            }
          });
          for (let key = 0; key <= 7; key++) assert.equal(map.get(key), live(key)?.value);
        },
      ),
      { numRuns: 500 },
    );
  });
});
