// The store's search filters with operators (`internal/storage/store/filter.ts`) through
// `BaseStore.search`, the store as graphs see it (`config.store`), on both backends: each
// operator, operators combined on one key and with equality on another, paging with a filter, the
// filters it refuses; random filters against the rule in process and against LangGraph's
// `InMemoryStore` where the two agree.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InMemoryStore } from '@langchain/langgraph';
import fc from 'fast-check';
import pg from 'pg';
import { tempDir } from 'tracepipe/testing';
import { openPostgresStorage } from './internal/storage/postgres.ts';
import { matchesStoreFilter } from './internal/storage/store/filter.ts';
import { PostgresItemStore } from './internal/storage/store/postgres.ts';
import { SqliteStore } from './internal/storage/store/sqlite.ts';
import type { ServerStore } from './internal/storage/store.ts';
import { freshDatabase, postgresAvailable } from './testing/postgres.ts';
import type { TestDatabase } from './testing/postgres.ts';

/** The values of `a` the items hold, by key (`missing`: no `a` at all). */
const A: Record<string, unknown> = {
  one: 1,
  two: 2,
  three: 3,
  half: 2.5,
  negative: -1,
  twoText: '2',
  apple: 'apple',
  banana: 'banana',
  yes: true,
  nothing: null,
  list: [2],
  object: { x: 2 },
};
const ALL = [...Object.keys(A), 'missing'].sort();

async function seed(store: ServerStore): Promise<void> {
  await store.truncate();
  for (const [key, a] of Object.entries(A)) await store.put(['docs'], key, { a, tag: key.length % 2 ? 'odd' : 'even' });
  await store.put(['docs'], 'missing', { tag: 'odd' });
}

async function keys(store: ServerStore, filter: Record<string, unknown>): Promise<string[]> {
  return (await store.search(['docs'], { filter, limit: 100 })).map((item) => item.key).sort();
}

const except = (...left: string[]) => ALL.filter((key) => !left.includes(key));

/**
 * Random items and filters, `store`'s answer against the rule in process (`matchesStoreFilter`)
 * and, with `numeric` (numbers and missing members only, numeric operands), against
 * LangGraph's `InMemoryStore`, which converts range operands and members with `Number()` and
 * compares `$eq`, `$in` and plain values by identity: on numbers, the same rule.
 */
async function agrees(store: ServerStore, options: { numeric: boolean; runs: number }): Promise<void> {
  const number = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(0.5, 2.5, -1e-7));
  const scalar = options.numeric
    ? number
    : fc.oneof(
        number,
        fc.constantFrom('', 'a', 'b', 'ab', 'B', '2', '10', 'é', '\u{1F600}', '\uFFFD'),
        fc.boolean(),
        fc.constant(null),
      );
  const member = options.numeric
    ? fc.oneof({ weight: 4, arbitrary: scalar }, fc.constant(undefined))
    : fc.oneof({ weight: 4, arbitrary: scalar }, fc.array(scalar, { maxLength: 2 }), fc.constant(undefined));
  const rangeOperand = options.numeric ? number : fc.oneof(number, fc.constantFrom('a', 'b', '10', '', '\uFFFD'));
  const operand = fc.oneof(
    fc.record({ op: fc.constantFrom('$gt', '$gte', '$lt', '$lte'), value: rangeOperand }),
    fc.record({ op: fc.constantFrom('$eq', '$ne'), value: scalar }),
    fc.record({ op: fc.constantFrom('$in', '$nin'), value: fc.array(scalar, { maxLength: 3 }) }),
  );
  const operators = (max: number) =>
    fc
      .uniqueArray(operand, { minLength: 1, maxLength: max, selector: (o) => o.op })
      .map((list) => Object.fromEntries(list.map((o) => [o.op, o.value])));
  const filterOf = fc.record({ a: fc.oneof(operators(3), scalar), b: operators(2) }, { requiredKeys: [] });
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ a: member, b: member }), { minLength: 1, maxLength: 10 }),
      fc.array(filterOf, { minLength: 1, maxLength: 5 }),
      async (values, filters) => {
        await store.truncate();
        const memory = new InMemoryStore();
        const stored = values.map((value) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>);
        for (const [i, value] of stored.entries()) {
          await store.put(['r'], `k${i}`, value);
          await memory.put(['r'], `k${i}`, value);
        }
        for (const filter of filters) {
          const found = (await store.search(['r'], { filter, limit: 100 })).map((item) => item.key).sort();
          const expected = stored.flatMap((value, i) => (matchesStoreFilter(value, filter) ? [`k${i}`] : [])).sort();
          assert.deepEqual(found, expected, JSON.stringify({ filter, stored }));
          if (options.numeric) {
            const reference = (await memory.search(['r'], { filter, limit: 100 })).map((item) => item.key).sort();
            assert.deepEqual(found, reference, `InMemoryStore: ${JSON.stringify({ filter, stored })}`);
          }
        }
      },
    ),
    { numRuns: options.runs },
  );
}

function contract(name: string, open: () => Promise<ServerStore>): void {
  describe(name, () => {
    let store: ServerStore;
    before(async () => {
      store = await open();
    });

    it('each operator, on numbers and on strings', async () => {
      await seed(store);
      assert.deepEqual(await keys(store, { a: { $gt: 1 } }), ['half', 'three', 'two']);
      assert.deepEqual(await keys(store, { a: { $gte: 2 } }), ['half', 'three', 'two']);
      assert.deepEqual(await keys(store, { a: { $gte: 2.5 } }), ['half', 'three']);
      assert.deepEqual(await keys(store, { a: { $lt: 2 } }), ['negative', 'one']);
      assert.deepEqual(await keys(store, { a: { $lte: 2 } }), ['negative', 'one', 'two']);
      assert.deepEqual(await keys(store, { a: { $eq: 2 } }), ['two'], 'the number only: not "2", not [2]');
      assert.deepEqual(await keys(store, { a: { $ne: 2 } }), except('two'), 'a missing member is not 2');
      // Strings by code point: '2' < 'apple' < 'b' < 'banana'.
      assert.deepEqual(await keys(store, { a: { $gt: 'b' } }), ['banana']);
      assert.deepEqual(await keys(store, { a: { $gte: 'apple' } }), ['apple', 'banana']);
      assert.deepEqual(await keys(store, { a: { $lt: 'apple' } }), ['twoText']);
      assert.deepEqual(await keys(store, { a: { $lte: 'apple' } }), ['apple', 'twoText']);
      assert.deepEqual(await keys(store, { a: { $eq: '2' } }), ['twoText']);
      assert.deepEqual(await keys(store, { a: { $in: [1, 'apple', null] } }), ['apple', 'nothing', 'one']);
      assert.deepEqual(await keys(store, { a: { $nin: [1, 'apple', null] } }), except('apple', 'nothing', 'one'));
      assert.deepEqual(await keys(store, { a: { $in: [] } }), []);
    });

    it('a number never compares with a string, nor anything else with a range', async () => {
      await seed(store);
      // '2' is not > 1 (InMemoryStore's Number('2') would be); 3 is not > '1'.
      assert.ok(!(await keys(store, { a: { $gt: 1 } })).includes('twoText'));
      assert.deepEqual(await keys(store, { a: { $gt: '1' } }), ['apple', 'banana', 'twoText']);
      // true, null, [2], {x: 2} and a missing member are outside every range.
      assert.deepEqual(await keys(store, { a: { $gte: -1e9 } }), ['half', 'negative', 'one', 'three', 'two']);
      assert.deepEqual(await keys(store, { a: { $gte: '' } }), ['apple', 'banana', 'twoText']);
    });

    it('$eq and $ne compare JSON deeply; null is a JSON null, not a missing member', async () => {
      await seed(store);
      assert.deepEqual(await keys(store, { a: { $eq: { x: 2 } } }), ['object']);
      assert.deepEqual(await keys(store, { a: { $eq: [2] } }), ['list']);
      assert.deepEqual(await keys(store, { a: { $eq: null } }), ['nothing']);
      assert.deepEqual(await keys(store, { a: { $ne: null } }), except('nothing'));
      assert.deepEqual(await keys(store, { a: { $eq: true } }), ['yes']);
    });

    it('operators combined on one key, and with equality on another', async () => {
      await seed(store);
      assert.deepEqual(await keys(store, { a: { $gt: 1, $lt: 3 } }), ['half', 'two']);
      assert.deepEqual(await keys(store, { a: { $gte: 1, $lte: 3, $ne: 2 } }), ['half', 'one', 'three']);
      assert.deepEqual(await keys(store, { a: { $gt: 3, $lt: 1 } }), []);
      // `seed` tags keys of odd length 'odd' (one, two, three), of even length 'even' (half, negative).
      assert.deepEqual(await keys(store, { a: { $gte: 1 }, tag: 'odd' }), ['one', 'three', 'two']);
      assert.deepEqual(await keys(store, { tag: 'even', a: { $lt: 3 } }), ['half', 'negative']);
    });

    it('equality filters match as before', async () => {
      await seed(store);
      assert.deepEqual(await keys(store, { a: 2 }), ['two']);
      assert.deepEqual(await keys(store, { a: '2' }), ['twoText']);
      assert.deepEqual(await keys(store, { a: { x: 2 } }), ['object']);
      assert.deepEqual(await keys(store, { a: {} }), ['object'], 'an empty object asks for an object');
      assert.deepEqual(await keys(store, { a: [2] }), ['list']);
      assert.deepEqual(await keys(store, { a: null }), ['nothing']);
      assert.deepEqual(await keys(store, { tag: 'odd', a: 1 }), ['one']);
    });

    it('pages a filtered search in SQL: every page is full while matches remain', async () => {
      await store.truncate();
      // Newest first: the non-matching items are written last, so a filter applied after LIMIT
      // would find nothing on the first pages.
      for (let n = 0; n < 20; n++) await store.put(['paged'], `m${String(n).padStart(2, '0')}`, { n });
      for (let n = 0; n < 30; n++) await store.put(['paged'], `x${String(n).padStart(2, '0')}`, { n: -n - 1 });
      const filter = { n: { $gte: 0, $lt: 20 } };
      const whole = await store.search(['paged'], { filter, limit: 100 });
      assert.equal(whole.length, 20);
      const paged: string[] = [];
      for (let offset = 0; offset < 25; offset += 6) {
        const page = await store.search(['paged'], { filter, limit: 6, offset });
        assert.equal(page.length, Math.max(0, Math.min(6, 20 - offset)), `offset ${offset}`);
        paged.push(...page.map((item) => item.key));
      }
      assert.deepEqual(
        paged,
        whole.map((item) => item.key),
      );
      const visible = await store.searchVisible(
        ['paged'],
        { filter, limit: 5, offset: 3 },
        (item) => item.key !== 'm05',
      );
      assert.equal(visible.length, 5);
      assert.ok(visible.every((item) => item.key.startsWith('m') && item.key !== 'm05'));
    });

    it('refuses a filter it cannot apply, naming the key, instead of matching nothing', async () => {
      const refused: [Record<string, unknown>, RegExp][] = [
        [{ a: { $regex: 'x' } }, /^filter\.a: unknown operator "\$regex"/],
        [{ a: { $gt: 1, $like: 'x' } }, /^filter\.a: unknown operator "\$like"/],
        [{ score: { $gt: true } }, /^filter\.score: \$gt needs a number or a string \(got true\)/],
        [{ score: { $lte: null } }, /^filter\.score: \$lte needs a number or a string/],
        [{ score: { $lt: [1] } }, /^filter\.score: \$lt needs a number or a string/],
        [{ score: { $gte: { n: 1 } } }, /^filter\.score: \$gte needs a number or a string/],
        [{ tags: { $in: 'x' } }, /^filter\.tags: \$in needs an array/],
        [{ tags: { $nin: 1 } }, /^filter\.tags: \$nin needs an array/],
        [{ a: { $gt: 1, b: 2 } }, /^filter\.a: cannot mix operators/],
        [{ a: { b: { $gt: 1 } } }, /^filter\.a: operators apply to top-level keys only/],
      ];
      for (const [filter, message] of refused) {
        await assert.rejects(store.search(['docs'], { filter }), (error: Error) => {
          assert.equal(error.name, 'InvalidStoreFilterError', JSON.stringify(filter));
          assert.match(error.message, message);
          return true;
        });
      }
    });

    it('agrees with the rule in process on random values and filters', () =>
      agrees(store, { numeric: false, runs: 40 }));

    it('agrees with InMemoryStore on numbers, where the two rules are one', () =>
      agrees(store, { numeric: true, runs: 30 }));
  });
}

let dir: string;
let sqlite: SqliteStore | undefined;
after(async () => {
  await sqlite?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

contract('store search filters, SQLite', async () => {
  dir = tempDir('agent-api-store-filters-');
  sqlite = new SqliteStore(join(dir, 'store.sqlite'));
  return sqlite;
});

const available = await postgresAvailable();
if (available) {
  let database: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  after(async () => {
    await pool?.end();
    await database?.drop();
  });
  contract('store search filters, PostgreSQL', async () => {
    database = await freshDatabase();
    await (await openPostgresStorage(database.uri)).close();
    pool = new pg.Pool({ connectionString: database.uri, max: 2 });
    pool.on('error', () => undefined);
    return new PostgresItemStore(pool);
  });
} else {
  describe('store search filters, PostgreSQL', { skip: 'no PostgreSQL server' }, () => {
    it('skipped', () => undefined);
  });
}
