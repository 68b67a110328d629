// Fills a storage with threads at scale — each with a run, a cron every tenth, and a store item —
// in bulk SQL on the database itself (PostgreSQL `generate_series`, SQLite a recursive series in
// one transaction), not through the API, so that a million threads take minutes. The rows are
// shaped as a chat deployment's: ~1.5 KB of thread metadata (owner, graph, assistant, title,
// tags, a client object, a summary), statuses mostly idle, a few owners, the store's items in a
// few namespaces per owner. `search-plans.test.ts` checks the searches' plans on it and
// `bench/agent/data-scale.ts` times them.

import type Database from 'better-sqlite3';
import type pg from 'pg';

export interface SeedPlan {
  /** Threads (and as many runs and store items). */
  readonly threads: number;
  /** Owners (`metadata.owner`: `user-0` …), the threads dealt among them in turn. */
  readonly owners: number;
}

/** The names the seeded rows carry, for the searches that look them up. */
export const seeded = {
  /** The `i`th thread's id (ids sort as the threads were created). */
  threadId: (i: number): string => `thread-${String(i).padStart(8, '0')}`,
  owner: (i: number): string => `user-${i}`,
  /** The assistant of a run and of a cron: one of 50. */
  assistant: (i: number): string => `assistant-${i}`,
  /** A thread's `values.topic`: one of 300. */
  topic: (i: number): string => `topic-${i}`,
  /** The store namespaces of an owner: `users.<owner>.<kind>`. */
  storeKinds: ['memories', 'preferences', 'notes'] as const,
};

/** The statuses of threads, dealt in turn: mostly idle, as in a chat deployment. */
const STATUSES = ['idle', 'idle', 'idle', 'idle', 'idle', 'idle', 'interrupted', 'error', 'idle', 'busy'];

// A thread's summary: the bulk of its ~1.5 KB of metadata, different per thread (a number in it).
const SUMMARY =
  'The user asked for help planning a trip and the assistant proposed an itinerary, compared three options for ' +
  'flights and hotels, and listed the documents needed at the border. '.repeat(7);

const quote = (text: string): string => `'${text.replaceAll("'", "''")}'`;
const list = (items: readonly string[]): string => items.map(quote).join(', ');

interface SeedDialect {
  /** Wraps the body of an `INSERT … SELECT` over `i` in 0 … n − 1. */
  series(n: number, insert: string, select: string): string;
  object: string;
  array: string;
  text(expression: string): string;
  /** `i` seconds after 2024-01-01, as the ISO text the storage writes. */
  time(seconds: string): string;
  bool(value: boolean): string;
  /** The number `expression` in `width` digits. */
  digits(expression: string, width: number): string;
  /** The `index`th of `items` (`index` in 0 … length − 1). */
  pick(items: readonly string[], index: string): string;
  /** Whether the text `expression` ends with `suffix`. */
  endsWith(expression: string, suffix: string): string;
}

const POSTGRES: SeedDialect = {
  series: (n, insert, select) => `${insert} ${select} FROM generate_series(0, ${n - 1}) i`,
  object: 'jsonb_build_object',
  array: 'jsonb_build_array',
  text: (expression) => `(${expression})::text`,
  time: (seconds) =>
    `to_char(timestamp '2024-01-01' + (${seconds}) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  bool: (value) => String(value),
  digits: (expression, width) => `lpad((${expression})::text, ${width}, '0')`,
  pick: (items, index) => `(ARRAY[${list(items)}])[${index} + 1]`,
  endsWith: (expression, suffix) => `right(${expression}, ${suffix.length}) = ${quote(suffix)}`,
};

const SQLITE: SeedDialect = {
  series: (n, insert, select) =>
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${n - 1}) ${insert} ${select} FROM n`,
  object: 'json_object',
  array: 'json_array',
  text: (expression) => `CAST(${expression} AS TEXT)`,
  time: (seconds) => `strftime('%Y-%m-%dT%H:%M:%fZ', '2024-01-01', '+' || (${seconds}) || ' seconds')`,
  bool: (value) => String(Number(value)),
  digits: (expression, width) => `substr('${'0'.repeat(width)}' || (${expression}), -${width}, ${width})`,
  pick: (items, index) => `CASE ${index} ${items.map((item, n) => `WHEN ${n} THEN ${quote(item)}`).join(' ')} END`,
  endsWith: (expression, suffix) => `substr(${expression}, -${suffix.length}) = ${quote(suffix)}`,
};

/** The statements that fill the agent database's threads, runs and crons. */
function agentStatements(d: SeedDialect, plan: SeedPlan): string[] {
  const owner = `'user-' || ${d.text(`i % ${plan.owners}`)}`;
  const metadata = `${d.object}(
      'owner', ${owner}, 'graph_id', 'chat', 'assistant_id', 'assistant-' || ${d.text('i % 50')},
      'title', 'Conversation ' || ${d.text('i')} || ' about topic ' || ${d.text('i % 300')},
      'tags', ${d.array}('travel', 'support'), 'source', 'web',
      'client', ${d.object}('locale', 'en-US', 'user_agent', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36',
        'version', '1.42.0'),
      'summary', ${d.text('i')} || ': ' || ${quote(SUMMARY)})`;
  const values = `${d.object}('topic', 'topic-' || ${d.text('i % 300')}, 'messages', ${d.array}(
      ${d.object}('type', 'human', 'content', 'Where should I go in spring?'),
      ${d.object}('type', 'ai', 'content', 'Lisbon, Kyoto or Oaxaca, depending on what you like.')))`;
  return [
    d.series(
      plan.threads,
      'INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts)',
      `SELECT 'thread-' || ${d.digits('i', 8)}, ${d.time('i')}, ${d.time('i + 60')}, ${metadata},
        ${d.pick(STATUSES, `i % ${STATUSES.length}`)}, '{}', ${values}, NULL`,
    ),
    `INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
       multitask_strategy, error, attempt, temporary)
     SELECT 'run-' || thread_id, thread_id, metadata->>'assistant_id', created_at, updated_at, 'success',
       ${d.object}('owner', metadata->>'owner'), '{}', 'enqueue', NULL, 1, ${d.bool(false)} FROM threads`,
    `INSERT INTO crons (cron_id, assistant_id, thread_id, end_time, schedule, created_at, updated_at, payload,
       next_run_date, metadata, enabled)
     SELECT 'cron-' || thread_id, metadata->>'assistant_id', thread_id, NULL, '0 * * * *', created_at, updated_at,
       '{}', created_at, ${d.object}('owner', metadata->>'owner'), ${d.bool(true)} FROM threads
     WHERE ${d.endsWith('thread_id', '0')}`,
  ];
}

/** The statement that fills the store: one item per thread, in `users.<owner>.<kind>`. */
function storeStatement(d: SeedDialect, plan: SeedPlan): string {
  const kind = d.pick(seeded.storeKinds, `i % ${seeded.storeKinds.length}`);
  return d.series(
    plan.threads,
    'INSERT INTO store_items (namespace, key, value, created_at, updated_at)',
    `SELECT 'users.user-' || ${d.text(`i % ${plan.owners}`)} || '.' || ${kind}, 'item-' || ${d.text('i')},
      ${d.object}('n', i, 'text', 'Prefers window seats and vegetarian meals; travels in spring.'),
      ${d.time('i')}, ${d.time('i')}`,
  );
}

/** Fills a migrated PostgreSQL database (agent tables and store items), then vacuums and analyses it. */
export async function seedPostgres(client: pg.ClientBase | pg.Pool, plan: SeedPlan): Promise<void> {
  for (const statement of [...agentStatements(POSTGRES, plan), storeStatement(POSTGRES, plan)])
    await client.query(statement);
  await client.query('VACUUM ANALYZE');
}

/**
 * Fills a migrated `agent.sqlite` (threads, runs, crons; `thread_fields` by its triggers) and
 * `store.sqlite`, each in one transaction, then analyses them.
 */
export function seedSqlite(agent: Database.Database, store: Database.Database, plan: SeedPlan): void {
  // A page cache of 256 MiB for the fill: the indexes of a million threads, updated in random
  // order (`thread_fields` by value), thrash the default 2 MiB.
  for (const db of [agent, store]) db.pragma('cache_size = -262144');
  agent.transaction(() => {
    for (const statement of agentStatements(SQLITE, plan)) agent.exec(statement);
  })();
  agent.exec('ANALYZE');
  store.transaction(() => store.exec(storeStatement(SQLITE, plan)))();
  store.exec('ANALYZE');
}
