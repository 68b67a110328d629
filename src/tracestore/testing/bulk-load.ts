// Fills a local trace store with many traces at once, for benchmarks and tests of large stores:
// the rows `insertRuns` would write (the same columns, search text and trace summaries), written
// with SQLite's bulk-loading habits instead of the exporter's per-batch upserts — secondary indexes
// dropped during the load and rebuilt by sorting afterwards, the stats rollups computed at the end, no journal, a large page cache, and
// each trace summarized from its runs in memory rather than by queries. A million runs load in
// about a minute where the exporter's path takes most of an hour.
//
// The traces must be new (no run replaces a stored one) and each trace's runs given together.

import Database from 'better-sqlite3';
import type { Run } from '../../model/runs.ts';
import { rebuildRollups } from '../rollup.ts';
import { LocalTraceStore, countedUsageRuns, rootColumns, runColumns, searchText } from '../store.ts';

export interface BulkLoadResult {
  readonly runs: number;
  readonly traces: number;
}

type RunRow = ReturnType<typeof runColumns>;

/** Runs per transaction: large enough that commits cost nothing, small enough to bound memory. */
const RUNS_PER_TRANSACTION = 50_000;

/** Writes `traces` (each the runs of one trace) into the store at `path`, creating it if needed. */
export function bulkLoad(path: string, traces: Iterable<readonly Run[]>, project = 'default'): BulkLoadResult {
  new LocalTraceStore(path).close(); // the schema, at the store's current version
  const db = new Database(path);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('cache_size = -1048576'); // 1 GiB
    const indexes = db
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('runs', 'traces')",
      )
      .all() as { name: string; sql: string }[];
    for (const { name } of indexes) db.exec(`DROP INDEX ${name}`);
    // The stats rollups are computed once at the end rather than row by row.
    const triggers = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all() as {
      name: string;
      sql: string;
    }[];
    for (const { name } of triggers) db.exec(`DROP TRIGGER ${name}`);

    const columns = Object.keys(runColumns(placeholderRun, project));
    const insertRun = db.prepare(
      `INSERT INTO runs (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`,
    );
    const insertText = db.prepare('INSERT INTO runs_fts (rowid, text) VALUES (?, ?)');
    const traceColumns = Object.keys(summaryRow([], [], undefined));
    const insertTrace = db.prepare(
      `INSERT INTO traces (${traceColumns.join(', ')}) VALUES (${traceColumns.map((c) => `@${c}`).join(', ')})`,
    );
    const loadChunk = db.transaction((chunk: (readonly Run[])[]) => {
      for (const runs of chunk) {
        const root = runs
          .filter((run) => !run.parent_run_id)
          .sort((a, b) => a.start_time.localeCompare(b.start_time))[0];
        const rows = withCountedUsage(
          runs.map((run) => ({ ...runColumns(run, project), root_name: root?.name ?? null })),
        );
        rows.forEach((row, i) => {
          const { lastInsertRowid } = insertRun.run(row);
          insertText.run(lastInsertRowid, searchText(runs[i]!));
        });
        insertTrace.run(summaryRow(runs, rows, root));
      }
    });

    let chunk: (readonly Run[])[] = [];
    let chunkRuns = 0;
    let runCount = 0;
    let traceCount = 0;
    for (const runs of traces) {
      chunk.push(runs);
      chunkRuns += runs.length;
      runCount += runs.length;
      traceCount++;
      if (chunkRuns >= RUNS_PER_TRANSACTION) {
        loadChunk(chunk);
        chunk = [];
        chunkRuns = 0;
      }
    }
    if (chunk.length > 0) loadChunk(chunk);
    for (const { sql } of indexes) db.exec(sql);
    rebuildRollups(db);
    for (const { sql } of triggers) db.exec(sql);
    db.exec("INSERT INTO runs_fts (runs_fts) VALUES ('optimize')");
    db.pragma('locking_mode = NORMAL');
    db.pragma('journal_mode = WAL');
    return { runs: runCount, traces: traceCount };
  } finally {
    db.close();
  }
}

const placeholderRun: Run = {
  id: '00000000-0000-0000-0000-000000000000',
  trace_id: '00000000-0000-0000-0000-000000000000',
  name: 'placeholder',
  run_type: 'chain',
  start_time: '2026-01-01T00:00:00Z',
};

/** A trace's run rows with `counts_usage` as the store's `summarize` marks it. */
function withCountedUsage(rows: readonly RunRow[]): RunRow[] {
  const counted = countedUsageRuns(rows.map((row) => ({ ...row, reports: row.total_tokens > 0 || row.cost !== null })));
  return rows.map((row) => ({ ...row, counts_usage: counted.has(row.id) ? 1 : 0 }));
}

/**
 * A trace's summary row from its runs' rows, as the store's `summarize` computes it in SQL: the
 * earliest start and latest end (their texts as sent), counts and sums (of the counted usage),
 * the root's columns, and the model that used most counted tokens (the earliest on a tie).
 */
function summaryRow(runs: readonly Run[], rows: readonly RunRow[], root: Run | undefined) {
  let first: number | undefined;
  let last: number | undefined;
  rows.forEach((row, i) => {
    if (first === undefined || row.start_us < rows[first]!.start_us) first = i;
    if (row.end_us !== null && (last === undefined || row.end_us > rows[last]!.end_us!)) last = i;
  });
  const sum = (pick: (row: RunRow) => number) => rows.reduce((total, row) => total + pick(row), 0);
  const costs = rows.filter((row) => row.cost !== null && row.counts_usage === 1);
  const byModel = new Map<string, { tokens: number; start: number }>();
  for (const row of rows) {
    if (row.model === null) continue;
    const seen = byModel.get(row.model) ?? { tokens: 0, start: Infinity };
    byModel.set(row.model, {
      tokens: seen.tokens + row.total_tokens * row.counts_usage,
      start: Math.min(seen.start, row.start_us),
    });
  }
  const model = [...byModel].sort(([, a], [, b]) => b.tokens - a.tokens || a.start - b.start)[0]?.[0] ?? null;
  const startUs = first === undefined ? 0 : rows[first]!.start_us;
  const endUs = last === undefined ? null : rows[last]!.end_us;
  const rootRow = rows.find((row) => row.id === root?.id);
  return {
    trace_id: runs[0]?.trace_id ?? '',
    project: rootRow?.project ?? rows.map((row) => row.project).sort()[0] ?? '',
    ...rootColumns(root),
    start_us: startUs,
    start_time: first === undefined ? '' : runs[first]!.start_time,
    end_us: endUs,
    end_time: last === undefined ? null : (runs[last]!.end_time ?? null),
    run_count: rows.length,
    last_us: Math.max(startUs, endUs ?? 0),
    duration_us: endUs === null ? null : endUs - startUs,
    error_count: rows.filter((row) => row.status === 'error').length,
    prompt_tokens: sum((row) => row.prompt_tokens * row.counts_usage),
    completion_tokens: sum((row) => row.completion_tokens * row.counts_usage),
    total_tokens: sum((row) => row.total_tokens * row.counts_usage),
    cost: costs.length > 0 ? costs.reduce((total, row) => total + row.cost!, 0) : null,
    bytes: sum((row) => row.bytes),
    model,
  };
}
