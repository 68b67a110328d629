// Tests of UuidMap: it keeps TtlMap's rules (expiry since write, a cap evicting the oldest, a re-set
// entry becomes the newest) through hash collisions, table rebuilds, compaction, the 2^32 wrap of
// record indices and pairs that are not UUIDs. The last test drives it and a TtlMap with the same
// random operations and compares every answer.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TtlMap } from './ttl-map.ts';
import { UuidMap } from './uuid-map.ts';
import { hashWords, parseUuid } from './uuid-words.ts';

/** A clock the test moves. */
function clock(start = 1_700_000_000_000) {
  const state = { now: start };
  return { state, now: () => state.now };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What UuidMap promises: a TtlMap for pairs of UUIDs and one for other pairs, each with the cap. */
class Model {
  private readonly table: TtlMap<string, string>;
  private readonly texts: TtlMap<string, string>;

  constructor(now: () => number) {
    this.table = new TtlMap(100, 4, now);
    this.texts = new TtlMap(100, 4, now);
  }

  get(key: string): string | undefined {
    return this.table.get(key) ?? this.texts.get(key);
  }

  set(key: string, value: string): void {
    const [to, from] = UUID.test(key) && UUID.test(value) ? [this.table, this.texts] : [this.texts, this.table];
    from.delete(key);
    to.set(key, value);
  }

  delete(key: string): void {
    this.table.delete(key);
    this.texts.delete(key);
  }

  sweep(): void {
    this.table.sweep();
    this.texts.sweep();
  }

  clear(): void {
    this.table.clear();
    this.texts.clear();
  }
}

describe('UuidMap', () => {
  it('gives back UUID values, and keeps pairs that are not two UUIDs as they are', () => {
    const map = new UuidMap(1000, 10);
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    map.set(a, b);
    map.set('run-1', c);
    map.set(c, 'not a uuid');
    map.set(b.toUpperCase(), a);
    assert.equal(map.get(a), b);
    assert.equal(map.get('run-1'), c);
    assert.equal(map.get(c), 'not a uuid');
    assert.equal(map.get(b.toUpperCase()), a);
    assert.equal(map.get(b), undefined);
    assert.equal(map.size, 4);
    // A key moving between the table and the text map is in one of them only.
    map.set(c, a);
    assert.equal(map.get(c), a);
    map.set(a, 'text');
    assert.equal(map.get(a), 'text');
    assert.equal(map.size, 4);
  });

  it('forgets entries once their time to live has passed, counted from the last write', () => {
    const time = clock();
    const map = new UuidMap(100, 10, time.now);
    const [a, b] = [randomUUID(), randomUUID()];
    map.set(a, b);
    time.state.now += 60;
    map.set(a, a);
    time.state.now += 60;
    map.sweep();
    assert.equal(map.get(a), a);
    time.state.now += 40;
    assert.equal(map.get(a), undefined);
    assert.equal(map.size, 0);
  });

  it('evicts the oldest beyond its cap, and a re-set entry counts as the newest', () => {
    const map = new UuidMap(1000, 3, () => 0, { minSlots: 4, chunkRecords: 2 });
    const ids = Array.from({ length: 5 }, () => randomUUID());
    map.set(ids[0]!, ids[0]!);
    map.set(ids[1]!, ids[1]!);
    map.set(ids[2]!, ids[2]!);
    map.set(ids[0]!, ids[4]!); // now the newest
    map.set(ids[3]!, ids[3]!); // evicts ids[1]
    assert.deepEqual(
      ids.map((id) => map.get(id)),
      [ids[4], undefined, ids[2], ids[3], undefined],
    );
  });

  it('tells a byte budget its held bytes and oldest write, and forgets its oldest on demand, skipping dead records', () => {
    const time = clock();
    const map = new UuidMap(1000, 100, time.now, { minSlots: 16, chunkRecords: 4 });
    assert.equal(map.oldestWrittenAt(), undefined);
    const table = map.heldBytes;
    const ids = Array.from({ length: 4 }, () => randomUUID());
    ids.forEach((id, i) => {
      time.state.now = 1_700_000_000_000 + i;
      map.set(id, id);
    });
    assert.equal(map.heldBytes, table + 4 * 40);
    assert.equal(map.oldestWrittenAt(), 1_700_000_000_000);
    map.forgetOldest();
    map.delete(ids[1]!);
    assert.equal(map.oldestWrittenAt(), 1_700_000_000_002);
    assert.equal(map.heldBytes, table + 2 * 40);
    assert.deepEqual(
      ids.map((id) => map.get(id)),
      [undefined, undefined, ids[2], ids[3]],
    );
    map.forgetOldest();
    map.forgetOldest();
    map.forgetOldest(); // nothing left: no-op
    assert.equal(map.oldestWrittenAt(), undefined);
    assert.equal(map.heldBytes, table);
  });

  it('finds keys whose hashes collide, after deletes in the middle of their probe run', () => {
    // Keys that all land in the same slot of a 4096-slot table.
    const colliding: string[] = [];
    const words = new Uint32Array(4);
    while (colliding.length < 40) {
      const id = randomUUID();
      parseUuid(id, 0, words, 0);
      if ((hashWords(words, 0) & 4095) === 7) colliding.push(id);
    }
    const map = new UuidMap(1000, 1000, () => 0, { minSlots: 4096 });
    for (const id of colliding) map.set(id, id);
    for (let i = 0; i < colliding.length; i += 3) map.delete(colliding[i]!);
    colliding.forEach((id, i) => assert.equal(map.get(id), i % 3 === 0 ? undefined : id));
  });

  it('holds its memory outside the JS heap and gives it back as entries expire', () => {
    const time = clock();
    const map = new UuidMap(1000, 1_000_000, time.now);
    for (let i = 0; i < 100_000; i++) map.set(randomUUID(), randomUUID());
    const held = map.externalBytes;
    assert.ok(held < 100_000 * 64, `${held} bytes for 100,000 entries`);
    time.state.now += 1000;
    map.sweep();
    assert.equal(map.size, 0);
    assert.ok(map.externalBytes < 64 * 1024, `${map.externalBytes} bytes left`);
  });

  it('agrees with two TtlMaps (UUID pairs, other pairs) through random writes, re-writes, deletes, expiry, compaction and the index wrap', () => {
    const keys = [...Array.from({ length: 6 }, () => randomUUID()), 'span-a', 'span-b'];
    const values = [...Array.from({ length: 3 }, () => randomUUID()), 'root-a'];
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            {
              weight: 8,
              arbitrary: fc.record({
                op: fc.constant('set' as const),
                key: fc.integer({ min: 0, max: keys.length - 1 }),
                value: fc.integer({ min: 0, max: values.length - 1 }),
              }),
            },
            {
              weight: 1,
              arbitrary: fc.record({
                op: fc.constant('delete' as const),
                key: fc.integer({ min: 0, max: keys.length - 1 }),
              }),
            },
            {
              weight: 3,
              arbitrary: fc.record({
                op: fc.constant('get' as const),
                key: fc.integer({ min: 0, max: keys.length - 1 }),
              }),
            },
            {
              weight: 2,
              arbitrary: fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 40 }) }),
            },
            { weight: 2, arbitrary: fc.constant({ op: 'sweep' as const }) },
            { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
          ),
          { maxLength: 300 },
        ),
        fc.boolean(),
        (operations, nearWrap) => {
          const time = clock(0);
          const options = { minSlots: 4, chunkRecords: 3, startIndex: nearWrap ? 2 ** 32 - 20 : 0 };
          const map = new UuidMap(100, 4, time.now, options);
          const model = new Model(time.now);
          for (const operation of operations) {
            switch (operation.op) {
              case 'set':
                map.set(keys[operation.key]!, values[operation.value]!);
                model.set(keys[operation.key]!, values[operation.value]!);
                break;
              case 'delete':
                map.delete(keys[operation.key]!);
                model.delete(keys[operation.key]!);
                break;
              case 'get':
                assert.equal(map.get(keys[operation.key]!), model.get(keys[operation.key]!));
                break;
              case 'tick':
                time.state.now += operation.ms;
                break;
              case 'sweep':
                map.sweep();
                model.sweep();
                break;
              case 'clear':
                map.clear();
                model.clear();
                break;
            }
          }
          for (const key of keys) assert.equal(map.get(key), model.get(key));
        },
      ),
      { numRuns: 500 },
    );
  });
});
