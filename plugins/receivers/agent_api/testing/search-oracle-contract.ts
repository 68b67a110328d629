// The searches of a storage against the oracle (`search-oracle.ts`: the in-process filters the
// storage used before its searches ran in SQL), on random data and random queries: every page and
// every total must be the same. Part of the storage contract, run on both backends by
// `storage.test.ts` and `storage-postgres.test.ts`.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import type { AuthFilters } from '../internal/auth/filters.ts';
import type { CronQuery, CronRecord, CronSortBy } from '../internal/storage/crons.ts';
import type {
  Assistant,
  AssistantQuery,
  AssistantVersion,
  JsonObject,
  RunQuery,
  RunRecord,
  Storage,
  Thread,
  ThreadQuery,
  ThreadStatus,
} from '../internal/storage/storage.ts';
import { assistantsPage, cronsPage, runsPage, threadsPage, versionsPage } from './search-oracle.ts';
import type { ContractDatabase } from './storage-contract.ts';
import { assistant, cron, run, thread } from './storage-contract.ts';

// Small alphabets, so that random filters often match random records, and ties happen.
const KEYS = ['owner', 'tag', 'n', 'list', 'nested', 'flag'];
const scalar = fc.oneof(
  fc.constantFrom('a', 'b', 'A', '', 'é', '1', 'true'),
  fc.constantFrom(0, 1, 2, -1, 1.5, 1e21),
  fc.boolean(),
  fc.constant(null),
);
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 3, noNullPrototype: true }),
  ),
})).value;
const object = fc.dictionary(fc.constantFrom(...KEYS), json, {
  maxKeys: 4,
  noNullPrototype: true,
}) as fc.Arbitrary<JsonObject>;

/** A filter: often a part of one of `records` (so that it matches something), else random. */
function filterOf(records: readonly JsonObject[]): fc.Arbitrary<JsonObject> {
  const part = (record: JsonObject) =>
    fc.subarray(Object.keys(record)).map((keys) => Object.fromEntries(keys.map((key) => [key, record[key]])));
  return records.length === 0 ? object : fc.oneof(fc.constantFrom(...records).chain(part), object);
}

const authFilters: fc.Arbitrary<AuthFilters> = fc.dictionary(
  fc.constantFrom(...KEYS),
  fc.oneof(
    scalar,
    scalar.map(($eq) => ({ $eq })),
    fc.oneof(scalar, fc.array(scalar, { maxLength: 2 })).map(($contains) => ({ $contains })),
  ),
  { maxKeys: 2, noNullPrototype: true },
) as fc.Arbitrary<AuthFilters>;

const at = (second: number): string => new Date(Date.UTC(2024, 4, 1, 10, 0, second)).toISOString();
const time = fc.integer({ min: 0, max: 5 }).map(at);
const page = { limit: fc.integer({ min: 0, max: 6 }), offset: fc.integer({ min: 0, max: 8 }) };
const order = fc.constantFrom('asc' as const, 'desc' as const);
const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

interface Data {
  assistants: Assistant[];
  versions: AssistantVersion[];
  threads: Thread[];
  runs: RunRecord[];
  crons: CronRecord[];
}

const data: fc.Arbitrary<Data> = fc
  .record({
    assistants: fc.array(
      fc.record({
        graph_id: fc.constantFrom('g1', 'g2'),
        name: fc.constantFrom('Alpha', 'beta', 'ÉCOLE', 'gamma Beta', ''),
        metadata: object,
        created_at: time,
        updated_at: time,
        versions: fc.array(object, { maxLength: 3 }),
      }),
      { maxLength: 6 },
    ),
    threads: fc.array(
      fc.record({
        metadata: object,
        values: fc.option(object, { nil: null }),
        status: fc.constantFrom<ThreadStatus>('idle', 'busy', 'interrupted', 'error'),
        created_at: time,
        updated_at: time,
        runs: fc.array(
          fc.record({ status: fc.constantFrom('pending' as const, 'success' as const), metadata: object }),
          { maxLength: 3 },
        ),
      }),
      { maxLength: 25 },
    ),
    crons: fc.array(
      fc.record({
        assistant: fc.nat(5),
        thread: fc.option(fc.nat(24), { nil: null }),
        enabled: fc.boolean(),
        metadata: object,
        created_at: time,
        updated_at: time,
        next_run_date: fc.option(time, { nil: null }),
        end_time: fc.option(time, { nil: null }),
      }),
      { maxLength: 8 },
    ),
  })
  .map((drawn) => {
    const assistants = drawn.assistants.map(({ versions: _versions, ...fields }, i) =>
      assistant(`a${i}`, { ...fields, version: 1 }),
    );
    const versions = drawn.assistants.flatMap(({ versions: more }, i) => {
      const { updated_at: _updated, ...first } = assistants[i]!;
      return [first, ...more.map((metadata, v) => ({ ...first, version: v + 2, metadata }))];
    });
    const threads = drawn.threads.map(({ runs: _runs, ...fields }, i) => thread(`t${i}`, fields));
    const runs = drawn.threads.flatMap(({ runs: drawnRuns }, i) =>
      drawnRuns.map((fields, r) => run(`r${i}-${r}`, `t${i}`, fields)),
    );
    const crons = drawn.crons.map(({ assistant: a, thread: t, ...fields }, i) =>
      cron(`c${i}`, {
        ...fields,
        assistant_id: `a${a}`,
        thread_id: t === null || t >= threads.length ? null : `t${t}`,
      }),
    );
    return { assistants, versions, threads, runs, crons };
  });

async function fill(storage: Storage, d: Data): Promise<void> {
  await storage.truncate({ runs: true, threads: true, assistants: true }, new Set());
  for (const c of (await storage.crons.search(allCrons)).items) await storage.crons.delete(c.cron_id);
  for (const a of d.assistants) await storage.assistants.insert(a);
  for (const v of d.versions) if (v.version > 1) await storage.assistants.insertVersion(v);
  for (const t of d.threads) await storage.threads.insert(t);
  for (const r of d.runs) await storage.runs.insert(r);
  for (const c of d.crons) await storage.crons.insert(c);
}

const allCrons: CronQuery = { limit: 1000, offset: 0, sort_by: 'cron_id', sort_order: 'asc' };

/** Random queries for the records of `d`. */
function queries(d: Data) {
  const threadIds = d.threads.map((t) => t.thread_id);
  const thread: fc.Arbitrary<ThreadQuery> = fc.record({
    ids: maybe(fc.subarray([...threadIds, 'missing'])),
    metadata: maybe(filterOf(d.threads.map((t) => t.metadata))),
    values: maybe(filterOf(d.threads.flatMap((t) => (t.values ? [t.values] : [])))),
    status: maybe(fc.constantFrom<ThreadStatus>('idle', 'busy', 'interrupted', 'error')),
    auth: maybe(authFilters),
    ...page,
    sort_by: fc.constantFrom('thread_id' as const, 'status' as const, 'created_at' as const, 'updated_at' as const),
    sort_order: order,
  });
  const assistantQuery: fc.Arbitrary<AssistantQuery> = fc.record({
    graph_id: maybe(fc.constantFrom('g1', 'g2', 'g3')),
    name: maybe(fc.constantFrom('a', 'BE', 'é', '', 'x', 'gamma')),
    metadata: maybe(filterOf(d.assistants.map((a) => a.metadata))),
    auth: maybe(authFilters),
    ...page,
    sort_by: fc.constantFrom(
      'assistant_id' as const,
      'graph_id' as const,
      'name' as const,
      'created_at' as const,
      'updated_at' as const,
    ),
    sort_order: order,
  });
  const cronQuery: fc.Arbitrary<CronQuery> = fc.record({
    assistant_id: maybe(fc.constantFrom('a0', 'a1', 'a9')),
    thread_id: maybe(fc.constantFrom('t0', 't1', 't2')),
    enabled: maybe(fc.boolean()),
    metadata: maybe(filterOf(d.crons.map((c) => c.metadata))),
    auth: maybe(authFilters),
    ...page,
    sort_by: fc.constantFrom<CronSortBy>(
      'cron_id',
      'assistant_id',
      'thread_id',
      'next_run_date',
      'end_time',
      'created_at',
      'updated_at',
    ),
    sort_order: order,
  });
  const runQuery = fc.record({
    thread_id: fc.constantFrom('t0', 't1', 't2', 'missing'),
    query: fc.record({
      status: maybe(fc.constantFrom('pending' as const, 'success' as const, 'error' as const)),
      metadata: maybe(filterOf(d.runs.map((r) => r.metadata))),
      ...page,
    }) as fc.Arbitrary<RunQuery>,
  });
  const versionQuery = fc.record({
    assistant_id: fc.constantFrom('a0', 'a1', 'missing'),
    query: fc.record({ metadata: maybe(filterOf(d.versions.map((v) => v.metadata))), ...page }),
  });
  return { thread, assistantQuery, cronQuery, runQuery, versionQuery };
}

const cleanQuery = <T extends object>(query: T): T =>
  Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as T;

/** Checks `queriesPerData` random queries of each kind on each of `runs` random data sets. */
export function searchOracleContract(
  name: string,
  open: () => Promise<ContractDatabase>,
  options: { runs: number; queriesPerData: number },
): void {
  it(`${name}: every search answers as the in-process filters did, on random data and queries`, async () => {
    const database = await open();
    const { storage } = database;
    try {
      await fc.assert(
        fc.asyncProperty(data, fc.gen(), async (d, generate) => {
          await fill(storage, d);
          const q = queries(d);
          // Drawn by the property's own generator, so that a failure replays and shrinks.
          const sample = <T extends object>(arbitrary: fc.Arbitrary<T>): T[] =>
            generate(() =>
              fc.array(arbitrary, { minLength: options.queriesPerData, maxLength: options.queriesPerData }),
            ).map(cleanQuery);
          for (const query of sample(q.thread)) {
            assert.deepEqual(
              await storage.threads.search(query),
              threadsPage([...d.threads], query),
              JSON.stringify(query),
            );
          }
          for (const query of sample(q.assistantQuery)) {
            assert.deepEqual(
              await storage.assistants.search(query),
              assistantsPage([...d.assistants], query),
              JSON.stringify(query),
            );
          }
          for (const query of sample(q.cronQuery)) {
            assert.deepEqual(await storage.crons.search(query), cronsPage([...d.crons], query), JSON.stringify(query));
          }
          for (const { thread_id: threadId, query } of sample(q.runQuery)) {
            const runs = d.runs.filter((r) => r.thread_id === threadId);
            const clean = cleanQuery(query);
            assert.deepEqual(await storage.runs.list(threadId, clean), runsPage(runs, clean), JSON.stringify(query));
          }
          for (const { assistant_id: assistantId, query } of sample(q.versionQuery)) {
            const versions = d.versions
              .filter((v) => v.assistant_id === assistantId)
              .sort((a, b) => b.version - a.version);
            const clean = cleanQuery(query);
            assert.deepEqual(
              await storage.assistants.listVersions(assistantId, clean),
              versionsPage(versions, clean),
              JSON.stringify(query),
            );
          }
        }),
        { numRuns: options.runs, endOnFailure: process.env.ORACLE_SHRINK !== '1' },
      );
    } finally {
      await database.drop();
    }
  });
}
