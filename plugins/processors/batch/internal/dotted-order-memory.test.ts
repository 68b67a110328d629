// Tests of the batcher's dotted order memory: orders come back byte for byte, and it keeps a
// TtlMap's rules (expiry since write, a cap evicting the oldest, a re-set entry becomes the newest)
// through hash collisions, table rebuilds, compaction and run ids that are not UUIDs. The last test
// drives it and a TtlMap with the same random operations and compares every answer.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TtlMap, hashWords, parseUuid } from 'tracepipe/collections';
import type { RememberedOrder } from './dotted-order-memory.ts';
import { DottedOrderMemory, parseSegmentTime, writeSegmentTime } from './dotted-order-memory.ts';
import { segment, segmentTime } from './dotted-order.ts';

const TTL = 60_000;

/** A clock the test moves. */
function clock(start = 1_700_000_000_000) {
  const state = { now: start };
  return { state, now: () => state.now };
}

/** A seeded generator, so that a failure repeats. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

/** A segment time from a start time between 1971 and 2200, with microseconds. */
function randomTime(next: () => number): string {
  const millis = Math.floor(next() * 7_257_600_000_000) + 31_536_000_000;
  const micros = String(Math.floor(next() * 1000)).padStart(3, '0');
  return segmentTime(new Date(millis).toISOString().replace('Z', `${micros}Z`));
}

/** A chain of `depth` orders (root first) as the batcher builds them. */
function chain(depth: number, next: () => number): { id: string; order: RememberedOrder }[] {
  const result: { id: string; order: RememberedOrder }[] = [];
  let dotted = '';
  let traceId = '';
  for (let level = 0; level < depth; level++) {
    const id = randomUUID();
    if (level === 0) traceId = id;
    dotted = `${dotted}${level === 0 ? '' : '.'}${randomTime(next)}${id}`;
    result.push({ id, order: { dotted, traceId } });
  }
  return result;
}

function rootOrder(id: string, time = '20231114T221320100000Z'): RememberedOrder {
  return { dotted: `${time}${id}`, traceId: id };
}

function copy(order: RememberedOrder | undefined): RememberedOrder | undefined {
  return order && { dotted: order.dotted, traceId: order.traceId };
}

describe('DottedOrderMemory', () => {
  it('returns orders of depth 1 to 50 byte for byte', () => {
    const next = random(1);
    const memory = new DottedOrderMemory(TTL, 10_000);
    const all = Array.from({ length: 50 }, (_, index) => chain(index + 1, next)).flat();
    for (const { id, order } of all) memory.set(id, order);
    assert.equal(memory.size, all.length);
    for (const { id, order } of all) assert.deepEqual(copy(memory.get(id)), order);
  });

  it('returns ids with zero and all-ones groups, as the genai translator derives them from span ids', () => {
    const memory = new DottedOrderMemory(TTL, 100);
    const ids = [
      '00000000-0000-0000-0000-000000000000',
      '00000000-0000-0000-0000-000000000001',
      '00000000-0000-0000-2222-222222222222',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '0000ffff-ffff-0000-ffff-0000ffff0000',
      '01020304-0506-0708-090a-0b0c0d0e0f10',
    ];
    let parent = { dotted: `20231114T221320000000Z${ids[0]}`, traceId: ids[0]! };
    memory.set(ids[0]!, parent);
    for (const id of ids.slice(1)) {
      parent = { dotted: `${parent.dotted}.20231114T221320000001Z${id}`, traceId: ids[0]! };
      memory.set(id, parent);
    }
    // Each read formats the order anew (the entry read last is answered from memory).
    for (const id of [...ids, ...ids.toReversed()]) {
      assert.equal(memory.get(id)?.dotted.split('.').at(-1)?.slice(22), id);
    }
    assert.equal(memory.get(ids.at(-1)!)?.dotted, parent.dotted);
  });

  it('keeps segment times exactly, whatever start time format made them', () => {
    const memory = new DottedOrderMemory(TTL, 100);
    const starts = [
      '2023-11-14T22:13:20Z',
      '2023-11-14T22:13:20.1Z',
      '2023-11-14T22:13:20.123456789Z',
      '2024-02-29T23:59:59.999999Z',
      '2000-01-01T00:00:00.000000Z',
      '1970-01-01T00:00:00Z',
      '1969-12-31T23:59:59.999999Z',
      '1700-03-01T00:00:00.000001Z',
      '0001-01-01T00:00:00.000001Z',
      '9999-12-31T23:59:59.999999Z',
      '2023-11-14T23:13:20.5+01:00',
      'not a time',
    ];
    for (const start of starts) {
      const id = randomUUID();
      memory.set(id, { dotted: segment(start, id), traceId: id });
      assert.deepEqual(copy(memory.get(id)), { dotted: segment(start, id), traceId: id }, start);
    }
  });

  it('packs every segment time the batcher writes and formats it back unchanged', () => {
    const words = new Uint32Array(2);
    const out = new Uint8Array(22);
    fc.assert(
      fc.property(
        fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
        fc.nat(999),
        (date, extra) => {
          const time = segmentTime(date.toISOString().replace('Z', `${String(extra).padStart(3, '0')}Z`));
          assert.ok(parseSegmentTime(time, 0, words, 0), time);
          writeSegmentTime(words, 0, out, 0);
          assert.equal(Buffer.from(out).toString('latin1'), time);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('packs digits that are no calendar time too, and keeps what does not fit as text', () => {
    const memory = new DottedOrderMemory(TTL, 100);
    const words = new Uint32Array(2);
    const packed = ['20231399T315963999999Z', '00000000T000000000000Z', '99999999T313939999999Z'];
    const text = [
      '20231114T325900000000Z',
      '20231114T226400000000Z',
      '20231114T225964000000Z',
      '2023111xT225900000000Z',
    ];
    for (const time of [...packed, ...text]) {
      assert.equal(parseSegmentTime(time, 0, words, 0), packed.includes(time), time);
      const id = randomUUID();
      const child = randomUUID();
      memory.set(id, rootOrder(id, time));
      memory.set(child, { dotted: `${rootOrder(id, time).dotted}.${time}${child}`, traceId: id });
      assert.deepEqual(copy(memory.get(id)), rootOrder(id, time));
      assert.deepEqual(copy(memory.get(child)), {
        dotted: `${rootOrder(id, time).dotted}.${time}${child}`,
        traceId: id,
      });
    }
  });

  it('forgets an entry once the TTL has passed since it was written', () => {
    const time = clock();
    const memory = new DottedOrderMemory(TTL, 100, time.now);
    const [a, b] = [randomUUID(), randomUUID()];
    memory.set(a, rootOrder(a));
    time.state.now += 10_000;
    memory.set(b, rootOrder(b));
    time.state.now += TTL - 10_001;
    assert.ok(memory.has(a));
    time.state.now += 1;
    assert.equal(memory.get(a), undefined);
    assert.equal(memory.size, 1);
    assert.ok(memory.has(b));
    // A re-set restarts the TTL.
    memory.set(b, rootOrder(b, '20231114T221320200000Z'));
    time.state.now += TTL - 1;
    assert.equal(memory.get(b)?.dotted, rootOrder(b, '20231114T221320200000Z').dotted);
    time.state.now += 1;
    assert.equal(memory.get(b), undefined);
    assert.equal(memory.size, 0);
  });

  it('sweeps expired entries from the oldest and stops at the first live one', () => {
    const time = clock();
    const memory = new DottedOrderMemory(TTL, 1000, time.now);
    const ids = Array.from({ length: 300 }, () => randomUUID());
    ids.forEach((id, index) => {
      time.state.now += index === 200 ? TTL : 1;
      memory.set(id, rootOrder(id));
    });
    time.state.now += 1;
    memory.sweep();
    assert.equal(memory.size, 100);
    for (const id of ids.slice(200)) assert.ok(memory.has(id));
    time.state.now += TTL;
    memory.sweep();
    assert.equal(memory.size, 0);
    for (const id of ids) assert.equal(memory.get(id), undefined);
  });

  it('evicts the oldest entries past the cap; a re-set entry becomes the newest', () => {
    const memory = new DottedOrderMemory(TTL, 3);
    const [a, b, c, d, e] = Array.from({ length: 5 }, () => randomUUID());
    for (const id of [a!, b!, c!, d!]) memory.set(id, rootOrder(id));
    assert.equal(memory.size, 3);
    assert.equal(memory.get(a!), undefined);
    memory.set(b!, rootOrder(b!, '20231114T221320200000Z'));
    memory.set(e!, rootOrder(e!));
    assert.equal(memory.get(c!), undefined);
    assert.deepEqual(
      [b!, d!, e!].map((id) => memory.get(id)?.dotted),
      [rootOrder(b!, '20231114T221320200000Z').dotted, rootOrder(d!).dotted, rootOrder(e!).dotted],
    );
  });

  it('tells a byte budget its held bytes and oldest write, and forgets its oldest on demand, skipping dead records', () => {
    const time = clock();
    const memory = new DottedOrderMemory(TTL, 100, time.now, { minSlots: 16 });
    assert.equal(memory.oldestWrittenAt(), undefined);
    const table = memory.heldBytes;
    const [a, b, c] = Array.from({ length: 3 }, () => randomUUID());
    memory.set(a!, rootOrder(a!));
    time.state.now += 1;
    const child = { dotted: `${rootOrder(a!).dotted}.20231114T221320200000Z${b}`, traceId: a! };
    memory.set(b!, child);
    time.state.now += 1;
    memory.set(c!, rootOrder(c!));
    // A root is a header (2 words) and a segment (6); a child of a root written right after it
    // refers to its record (1 word) and adds its own segment.
    assert.equal(memory.heldBytes, table + (8 + 9 + 8) * 4);
    assert.equal(memory.oldestWrittenAt(), 1_700_000_000_000);
    memory.delete(a!);
    assert.equal(memory.oldestWrittenAt(), 1_700_000_000_001);
    assert.equal(memory.heldBytes, table + (9 + 8) * 4);
    memory.forgetOldest();
    assert.deepEqual(
      [a!, b!, c!].map((id) => memory.get(id)?.dotted),
      [undefined, undefined, rootOrder(c!).dotted],
    );
    memory.forgetOldest();
    memory.forgetOldest(); // nothing left: no-op
    assert.equal(memory.oldestWrittenAt(), undefined);
    assert.equal(memory.size, 0);
  });

  it('lets the real root overwrite a stand-in root, keeping children placed under the stand-in', () => {
    const memory = new DottedOrderMemory(TTL, 100);
    const [trace, child] = [randomUUID(), randomUUID()];
    const standIn = rootOrder(trace, '20231114T221320000000Z');
    memory.set(trace, standIn);
    const childOrder = { dotted: `${standIn.dotted}.20231114T221320500000Z${child}`, traceId: trace };
    memory.set(child, childOrder);
    memory.set(trace, rootOrder(trace, '20231114T221319000000Z'));
    assert.equal(memory.size, 2);
    assert.deepEqual(copy(memory.get(trace)), rootOrder(trace, '20231114T221319000000Z'));
    assert.deepEqual(copy(memory.get(child)), childOrder);
  });

  it("keeps a child that refers to its parent's record exact once the parent is forgotten, re-set or compacted away", () => {
    const memory = new DottedOrderMemory(TTL, 3, undefined, { minSlots: 16, compactAfterWords: 16 });
    const [a, b, c, d, e] = Array.from({ length: 5 }, () => randomUUID());
    const childOf = (parent: RememberedOrder, id: string, time: string) => ({
      dotted: `${parent.dotted}.${time}${id}`,
      traceId: parent.traceId,
    });
    const bOrder = childOf(rootOrder(a!), b!, '20231114T221320200000Z');
    memory.set(a!, rootOrder(a!));
    const table = memory.heldBytes - 8 * 4;
    memory.set(b!, bOrder);
    assert.equal(memory.heldBytes, table + (8 + 9) * 4);
    // Re-set: the old record is dead, its words stay for the child.
    memory.set(a!, rootOrder(a!, '20231114T221319000000Z'));
    assert.deepEqual(copy(memory.get(b!)), bOrder);
    // Forgotten past the cap (a is the oldest now that b came first): still exact.
    const dOrder = childOf(rootOrder(c!), d!, '20231114T221320300000Z');
    memory.set(c!, rootOrder(c!));
    memory.set(d!, dOrder);
    assert.equal(memory.get(b!), undefined);
    assert.deepEqual(copy(memory.get(d!)), dOrder);
    memory.delete(c!);
    assert.deepEqual(copy(memory.get(d!)), dOrder);
    // Dead records outweigh live ones: compaction copies d whole (its parent is not copied) and
    // e as a child of the copied a.
    const eOrder = childOf(rootOrder(a!, '20231114T221319000000Z'), e!, '20231114T221320400000Z');
    assert.deepEqual(copy(memory.get(a!)), rootOrder(a!, '20231114T221319000000Z'));
    memory.set(e!, eOrder);
    for (let round = 0; round < 3; round++) memory.set(e!, eOrder);
    assert.equal(memory.size, 3);
    assert.deepEqual(copy(memory.get(d!)), dOrder);
    assert.deepEqual(copy(memory.get(e!)), eOrder);
    assert.deepEqual(copy(memory.get(a!)), rootOrder(a!, '20231114T221319000000Z'));
    assert.equal(memory.heldBytes, table + (8 + (2 + 2 * 6) + 9) * 4);
  });

  it('stays exact and bounded while inserting ten times its capacity', () => {
    const cap = 2000;
    const memory = new DottedOrderMemory(TTL, cap, undefined, { minSlots: 16 });
    const next = random(2);
    const entries: { id: string; order: RememberedOrder }[] = [];
    for (let trace = 0; trace < (cap * 10) / 4; trace++) {
      const [root, ...children] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const rootEntry = { id: root!, order: rootOrder(root!, randomTime(next)) };
      entries.push(rootEntry);
      for (const id of children) {
        entries.push({ id, order: { dotted: `${rootEntry.order.dotted}.${randomTime(next)}${id}`, traceId: root! } });
      }
      for (const entry of entries.slice(-4)) memory.set(entry.id, entry.order);
    }
    assert.equal(memory.size, cap);
    for (const [index, { id, order }] of entries.entries()) {
      if (index < entries.length - cap) assert.equal(memory.get(id), undefined);
      else assert.deepEqual(copy(memory.get(id)), order);
    }
    // The table was rebuilt for its live entries (8192 slots for 2000), not grown with the churn, and
    // the arena holds the chunks of the head and of the tail.
    assert.ok(memory.externalBytes <= 2 * 1024 * 1024 + 8192 * 4, String(memory.externalBytes));
  });

  it('compacts when re-set entries leave mostly dead records behind', () => {
    const memory = new DottedOrderMemory(TTL, 1000, undefined, { minSlots: 16 });
    const ids = Array.from({ length: 100 }, () => randomUUID());
    for (let round = 0; round < 600; round++) {
      for (const id of ids)
        memory.set(id, rootOrder(id, `2023111${round % 10}T221320${String(round).padStart(6, '0')}Z`));
    }
    assert.equal(memory.size, 100);
    for (const id of ids) assert.equal(memory.get(id)?.dotted, rootOrder(id, '20231119T221320000599Z').dotted);
    // 60 000 records of 8 words were written; only the live ones (and at most a chunk of dead) stay.
    assert.ok(memory.externalBytes <= 3 * 1024 * 1024, String(memory.externalBytes));
  });

  it('keeps run ids that are not lower-case UUIDs, in order with the others', () => {
    const time = clock();
    const memory = new DottedOrderMemory(TTL, 3, time.now);
    const upper = randomUUID().toUpperCase();
    const plain = 'run-1';
    const uuid = randomUUID();
    memory.set(upper, rootOrder(upper));
    memory.set(plain, { dotted: `${rootOrder(upper).dotted}.20231114T221320200000Z${plain}`, traceId: upper });
    memory.set(uuid, { dotted: `${rootOrder(upper).dotted}.20231114T221320300000Z${uuid}`, traceId: upper });
    assert.equal(memory.get(upper)?.dotted, rootOrder(upper).dotted);
    assert.equal(memory.get(plain)?.traceId, upper);
    assert.equal(memory.get(uuid)?.dotted, `${rootOrder(upper).dotted}.20231114T221320300000Z${uuid}`);
    // A UUID whose trace id does not match its first segment is kept verbatim too.
    const odd = randomUUID();
    memory.set(odd, { dotted: rootOrder(odd).dotted, traceId: 'elsewhere' });
    assert.equal(memory.get(upper), undefined);
    assert.equal(memory.get(odd)?.traceId, 'elsewhere');
    memory.set(plain, rootOrder(plain));
    memory.set('run-2', rootOrder('run-2'));
    assert.equal(memory.get(uuid), undefined);
    assert.equal(memory.get(plain)?.dotted, rootOrder(plain).dotted);
    memory.delete(plain);
    assert.equal(memory.get(plain), undefined);
    assert.equal(memory.size, 2);
    time.state.now += TTL;
    memory.sweep();
    assert.equal(memory.size, 0);
    assert.equal(memory.get('run-2'), undefined);
  });

  it('finds every key among ids that collide in the hash', () => {
    // Ids whose hashes share their low 12 bits land on one probe chain in any table up to 4096.
    const key = new Uint32Array(4);
    const colliding: string[] = [];
    let wanted: number | undefined;
    while (colliding.length < 40) {
      const id = randomUUID();
      parseUuid(id, 0, key, 0);
      const low = hashWords(key, 0) & 4095;
      wanted ??= low;
      if (low === wanted) colliding.push(id);
    }
    const memory = new DottedOrderMemory(TTL, 30, undefined, { minSlots: 16 });
    for (const id of colliding) memory.set(id, rootOrder(id));
    assert.equal(memory.size, 30);
    for (const [index, id] of colliding.entries()) {
      assert.equal(memory.get(id)?.dotted, index < 10 ? undefined : rootOrder(id).dotted);
    }
    // Deleting in the middle of the chain hides nothing behind it; re-adding reuses the slot.
    memory.delete(colliding[20]!);
    for (const id of colliding.slice(21)) assert.ok(memory.has(id));
    memory.set(colliding[20]!, rootOrder(colliding[20]!, '20231114T221320200000Z'));
    memory.set(colliding[25]!, rootOrder(colliding[25]!, '20231114T221320200000Z'));
    assert.equal(memory.size, 30);
    assert.equal(memory.get(colliding[25]!)?.dotted, rootOrder(colliding[25]!, '20231114T221320200000Z').dotted);
    for (const id of colliding.slice(10)) assert.ok(memory.has(id));
  });

  it('answers as a TtlMap does under random operations', () => {
    for (const seed of [3, 4, 5]) {
      const next = random(seed);
      const time = clock();
      const cap = 50 + Math.floor(next() * 200);
      // Positions cross 2^32 early, and dead records are compacted away every few hundred words.
      const memory = new DottedOrderMemory(TTL, cap, time.now, {
        minSlots: 8,
        compactAfterWords: 500,
        startChunk: 2 ** 14 - 1,
      });
      const reference = new TtlMap<string, RememberedOrder>(TTL, cap, time.now);
      const ids = Array.from({ length: seed === 3 ? 600 : 120 }, (_, index) =>
        // Some ids are not UUIDs, some have the translator's zero groups (from 8-byte span ids).
        index % 10 === 9
          ? `run-${index}`
          : index % 10 === 8
            ? `00000000-0000-0000-${randomUUID().slice(-17)}`
            : randomUUID(),
      );
      for (let step = 0; step < 30_000; step++) {
        const id = ids[Math.floor(next() * ids.length)]!;
        const action = next();
        if (action < 0.45) {
          const parentId = ids[Math.floor(next() * ids.length)]!;
          const parent = reference.get(parentId);
          assert.deepEqual(copy(memory.get(parentId)), copy(parent), `seed ${seed}, step ${step}`);
          const dotted = `${parent ? `${parent.dotted}.` : ''}${randomTime(next)}${id}`;
          const order = { dotted, traceId: parent?.traceId ?? id };
          if (order.dotted.length < 3000) {
            memory.set(id, order);
            reference.set(id, order);
          }
        } else if (action < 0.9) {
          assert.deepEqual(copy(memory.get(id)), copy(reference.get(id)), `seed ${seed}, step ${step}`);
        } else if (action < 0.93) {
          memory.delete(id);
          reference.delete(id);
        } else if (action < 0.96) {
          memory.sweep();
          reference.sweep();
        } else {
          time.state.now += Math.floor(next() * TTL * 0.2);
        }
        assert.equal(memory.size, reference.size, `seed ${seed}, step ${step}`);
      }
    }
  });
});
