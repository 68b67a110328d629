// The store's namespace listing in SQL (`internal/storage/store-namespaces.ts`) against the
// listing in process over every stored namespace (`namespacePage`), on random namespaces and
// random listings (prefix and suffix with wildcards, max_depth, limit, offset), on both backends.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { openPostgresStorage } from './internal/storage/postgres.ts';
import { PostgresItemStore } from './internal/storage/store/postgres.ts';
import { joinNamespace, namespacePage, namespacesOperation } from './internal/storage/store.ts';
import { SqliteStore } from './internal/storage/store/sqlite.ts';
import type { NamespaceOptions, ServerStore } from './internal/storage/store.ts';
import { freshDatabase, postgresAvailable } from './testing/postgres.ts';
import type { TestDatabase } from './testing/postgres.ts';
import { tempDir } from 'tracepipe/testing';

// Labels that sort around the separator: `a` < `a-b` < `a.…` < `a0` in byte order, and `B` < `a`;
// and labels that begin with the largest character, where SQLite's walk jumps to within a subtree.
const label = fc.constantFrom('a', 'a-b', 'a0', 'b', 'B', 'c', '\u{10FFFF}', '\u{10FFFF}a');
const namespace = fc.array(label, { minLength: 1, maxLength: 4 });

/** A condition's path: often the start or end of a stored namespace, some labels made `*`; else random. */
function pathOf(stored: readonly string[][], end: 'start' | 'end'): fc.Arbitrary<string[]> {
  const random = fc.array(fc.oneof(label, fc.constant('*')), { minLength: 1, maxLength: 3 });
  if (stored.length === 0) return random;
  const part = fc
    .tuple(fc.constantFrom(...stored), fc.integer({ min: 1, max: 4 }))
    .map(([labels, length]) => (end === 'start' ? labels.slice(0, length) : labels.slice(-length)))
    .chain((labels) =>
      fc.tuple(...labels.map((l) => fc.oneof({ weight: 3, arbitrary: fc.constant(l) }, fc.constant('*')))),
    );
  return fc.oneof({ weight: 3, arbitrary: part }, random);
}

function listingOf(stored: readonly string[][]): fc.Arbitrary<NamespaceOptions> {
  return fc.record(
    {
      prefix: pathOf(stored, 'start'),
      suffix: pathOf(stored, 'end'),
      maxDepth: fc.integer({ min: 1, max: 4 }),
      limit: fc.integer({ min: 1, max: 6 }),
      offset: fc.integer({ min: 0, max: 4 }),
    },
    { requiredKeys: [] },
  );
}

/** Checks `store` against the oracle on random contents and listings. */
async function agreesWithOracle(store: ServerStore): Promise<void> {
  await fc.assert(
    fc.asyncProperty(
      fc
        .uniqueArray(namespace, { maxLength: 12, selector: joinNamespace })
        .chain((namespaces) => fc.tuple(fc.constant(namespaces), fc.array(listingOf(namespaces), { maxLength: 6 }))),
      async ([namespaces, listings]) => {
        await store.truncate();
        for (const [i, labels] of namespaces.entries()) await store.put(labels, `k${i}`, { i });
        const stored = namespaces.map(joinNamespace);
        for (const options of listings) {
          const expected = namespacePage(stored, namespacesOperation(options));
          assert.deepEqual(await store.listNamespaces(options), expected, JSON.stringify(options));
          // A visibility check judges whole namespaces; here it hides those under `b`.
          const visible = (labels: string[]) => labels[0] !== 'b';
          assert.deepEqual(
            await store.listNamespacesVisible(options, visible),
            namespacePage(stored, namespacesOperation(options), visible),
            `visible: ${JSON.stringify(options)}`,
          );
        }
      },
    ),
    { numRuns: 60 },
  );
}

describe('store namespace listing, SQLite', () => {
  let dir: string;
  let store: SqliteStore;

  before(() => {
    dir = tempDir('agent-api-namespaces-');
    store = new SqliteStore(join(dir, 'store.sqlite'));
  });

  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists what the in-process listing lists', () => agreesWithOracle(store));
});

const available = await postgresAvailable();

describe('store namespace listing, PostgreSQL', { skip: available ? false : 'no PostgreSQL server' }, () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  before(async () => {
    database = await freshDatabase();
    await (await openPostgresStorage(database.uri)).close();
    pool = new pg.Pool({ connectionString: database.uri, max: 2 });
    pool.on('error', () => undefined);
  });

  after(async () => {
    await pool?.end();
    await database?.drop();
  });

  it('lists what the in-process listing lists', () => agreesWithOracle(new PostgresItemStore(pool)));
});
