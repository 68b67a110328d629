// The local trace store: runs kept in one SQLite file (better-sqlite3), indexed for the questions a
// trace viewer asks — "the latest traces of a project, filtered and sorted" and "every run of this
// trace" — plus a per-trace summary row recomputed from its runs' columns as runs arrive, so that
// listing never parses run JSON. Retention (`enforceRetention`) deletes whole traces, oldest first,
// by age or by size, and remembers what it deleted so that a late run cannot bring back part of a
// trace.
//
// Times are stored as integer microseconds since the epoch: RFC 3339 texts with a variable number
// of fraction digits (`…00.5Z` vs `…00Z`) do not sort as text.
//
// The `local` exporter writes a store and the `trace_explorer` extension opens the same file to
// answer its HTTP API, both through `tracepipe/tracestore`.

import Database from 'better-sqlite3';
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import type { Run } from '../model/runs.ts';
import { storedUuidForm } from '../model/uuid-forms.ts';
import type { RangePart } from './rollup.ts';
import {
  LatencyHistograms,
  createRollups,
  histogramPercentiles,
  rangeParts,
  rebuildRollups,
  traceCountSql,
  traceRollupSql,
  usageRollupSql,
} from './rollup.ts';

export interface TraceSummary {
  readonly traceId: string;
  readonly project: string;
  /** The root run's name; undefined until the root arrives. */
  readonly name?: string;
  /** The root run's status; undefined until the root arrives. */
  readonly status?: string;
  /** Earliest run start and latest run end (RFC 3339). */
  readonly startTime: string;
  readonly endTime?: string;
  /** endTime − startTime in milliseconds; undefined while no run has ended. */
  readonly durationMs?: number;
  readonly runCount: number;
  /** Runs whose status is `error`. */
  readonly errorCount: number;
  readonly rootRunId?: string;
  /**
   * Sums of the counted runs' `outputs.usage_metadata` (0 when none reported usage): the model
   * calls', or other runs' when none reports usage (`countedUsageRuns`).
   */
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  /** Sum of the costs the counted runs reported themselves (`usage_metadata.total_cost`), if any did. */
  readonly reportedCost?: number;
  /** The conversation this trace is a turn of (see `threadIdOf`). */
  readonly threadId?: string;
  /** The model that used most of the trace's tokens. */
  readonly model?: string;
  /** The root run's tags and `extra.metadata`. */
  readonly tags: string[];
  readonly metadata: Record<string, unknown>;
  /** A short text of the root's inputs and outputs (the last message, or JSON), for a list. */
  readonly inputPreview?: string;
  readonly outputPreview?: string;
}

export const TRACE_SORT_FIELDS = ['start_time', 'duration', 'total_tokens', 'name', 'run_count'] as const;
export type TraceSortField = (typeof TRACE_SORT_FIELDS)[number];
export const TRACE_STATUSES = ['success', 'error', 'interrupted', 'pending'] as const;

export interface ListTracesQuery {
  readonly project?: string;
  /** Root names containing this text (case-insensitive). */
  readonly name?: string;
  /** The root's status; `pending` while the root has not arrived or has no status. */
  readonly status?: (typeof TRACE_STATUSES)[number];
  /** true: traces with at least one failed run; false: traces without. */
  readonly error?: boolean;
  /** Traces that started at or after / strictly before these RFC 3339 times. */
  readonly startAfter?: string;
  readonly startBefore?: string;
  /** The root run carries this tag. */
  readonly tag?: string;
  /** The root run's `extra.metadata` has these keys with these values (compared as text). */
  readonly metadata?: Readonly<Record<string, string>>;
  /**
   * Words anywhere in the trace: names, inputs, outputs, errors, metadata values, tags (full-text
   * search; each word matches words it begins, case- and accent-insensitive; all must occur).
   */
  readonly text?: string;
  /** The model that used most of the trace's tokens. */
  readonly model?: string;
  /** Turns of this conversation (thread) only. */
  readonly threadId?: string;
  readonly sort?: TraceSortField;
  readonly order?: 'asc' | 'desc';
  /** At most this many (default 50, at most 1000). */
  readonly limit?: number;
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
  /** Only traces that started strictly before this RFC 3339 time (the older cursor form). */
  readonly before?: string;
}

export interface TracePage {
  readonly traces: TraceSummary[];
  /** Pass as `cursor` for the next page; undefined on the last page. */
  readonly nextCursor?: string;
}

export interface StoredTrace {
  readonly summary: TraceSummary;
  /** Every run of the trace, parents before children (by dotted_order, then start time). */
  readonly runs: Run[];
  /** The ids of the runs whose usage counts toward the trace's totals (see the token usage rule). */
  readonly countedUsageRunIds: string[];
}

/** Tokens per model of some traces, for pricing (`modelUsage`). */
export interface ModelUsage {
  readonly traceId: string;
  readonly model: string;
  /** `extra.metadata.ls_provider` of the runs, if they named one. */
  readonly provider?: string;
  /** The earliest start of these runs (RFC 3339): prices can change with the date. */
  readonly startTime: string;
  /** Input tokens, including the cached ones counted below. */
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

export const STATS_GROUPS = ['project', 'model', 'name'] as const;
export type StatsGroup = (typeof STATS_GROUPS)[number];

export interface StatsQuery {
  /** The time range [startUs, endUs) in epoch microseconds, cut into buckets of bucketUs. */
  readonly startUs: number;
  readonly endUs: number;
  readonly bucketUs: number;
  /** One series per project, per model or per root name; one series (group null) without. */
  readonly groupBy?: StatsGroup;
  readonly project?: string;
  /**
   * Up to this many traces in the range (default EXACT_PERCENTILE_TRACES), latency percentiles
   * are computed exactly from the traces; above, from the rollup's latency histograms (within
   * 1% of the latency at their rank).
   */
  readonly exactPercentileTraces?: number;
}

/** Ranges of up to this many traces get exact latency percentiles (`StatsQuery`). */
export const EXACT_PERCENTILE_TRACES = 20_000;

/** Trace figures of one bucket and group (`traceStats`). */
export interface TraceStatsRow {
  /** The bucket's index from the range's start. */
  readonly bucket: number;
  readonly group: string | null;
  readonly traces: number;
  /** Traces with at least one failed run. */
  readonly errors: number;
  /** Latency percentiles of the finished traces, in ms (null when none finished). */
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
}

/** Token usage of one bucket, group and model, by the runs' start (`usageStats`). */
export interface UsageStatsRow {
  readonly bucket: number;
  readonly group: string | null;
  readonly model: string | null;
  readonly provider: string | null;
  readonly totalTokens: number;
  /** Costs the runs reported themselves (null when none did). */
  readonly reportedCost: number | null;
  /** Tokens of the runs that reported no cost, to be priced. */
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

export interface ThreadSummary {
  readonly threadId: string;
  readonly project: string;
  readonly turns: number;
  /** The first turn's start and the last turn's start (RFC 3339). */
  readonly startTime: string;
  readonly lastTime: string;
  readonly errorTurns: number;
  readonly totalTokens: number;
  /** The sum of the turns' latencies in ms. */
  readonly durationMs: number;
  /** The first turn's input and the last turn's output. */
  readonly inputPreview?: string;
  readonly outputPreview?: string;
}

export interface ThreadPage {
  readonly threads: ThreadSummary[];
  readonly nextCursor?: string;
}

export interface RetentionLimits {
  /** Delete traces whose last activity is older than this, in ms. */
  readonly maxAgeMs?: number;
  /** Keep the store's used bytes at or under this. */
  readonly maxBytes?: number;
}

/** What one `enforceRetention` deleted, by reason. */
export interface RetentionResult {
  readonly maxAge: { readonly traces: number; readonly runs: number };
  readonly maxBytes: { readonly traces: number; readonly runs: number };
}

export interface StoreOptions {
  /** The clock retention reads (epoch ms); `Date.now` by default. */
  readonly now?: () => number;
  /** Open without creating or migrating anything (a reader beside the writer). */
  readonly readonly?: boolean;
}

/** A time the store cannot order (not RFC 3339). */
export class InvalidTimeError extends Error {
  override readonly name = 'InvalidTimeError';
}

/** A cursor this store did not hand out, or one for another sort. */
export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
}

const SCHEMA_VERSION = 7;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  trace_id TEXT NOT NULL,
  project TEXT NOT NULL,
  dotted_order TEXT,
  start_us INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_trace ON runs (trace_id, dotted_order, start_us);
CREATE TABLE IF NOT EXISTS traces (
  trace_id TEXT PRIMARY KEY,
  project TEXT NOT NULL,
  name TEXT,
  status TEXT,
  root_run_id TEXT,
  start_us INTEGER NOT NULL,
  start_time TEXT NOT NULL,
  end_us INTEGER,
  end_time TEXT,
  run_count INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS traces_by_project_time ON traces (project, start_us DESC);
CREATE INDEX IF NOT EXISTS traces_by_time ON traces (start_us DESC);
CREATE TABLE IF NOT EXISTS deleted_traces (
  trace_id TEXT PRIMARY KEY,
  deleted_us INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS pending_updates (
  id TEXT PRIMARY KEY,
  trace_id TEXT,
  received_us INTEGER NOT NULL,
  data TEXT NOT NULL
);
`;

// Columns added in version 2 (an older file gains them and is recomputed from its runs' JSON).
const RUN_COLUMNS: Record<string, string> = {
  parent_run_id: 'TEXT',
  end_us: 'INTEGER',
  name: 'TEXT',
  status: 'TEXT',
  model: 'TEXT',
  prompt_tokens: 'INTEGER NOT NULL DEFAULT 0',
  completion_tokens: 'INTEGER NOT NULL DEFAULT 0',
  total_tokens: 'INTEGER NOT NULL DEFAULT 0',
  cost: 'REAL',
  bytes: 'INTEGER NOT NULL DEFAULT 0',
  // Version 3: what pricing needs besides the model (cached input tokens have their own price).
  provider: 'TEXT',
  cache_read_tokens: 'INTEGER NOT NULL DEFAULT 0',
  cache_write_tokens: 'INTEGER NOT NULL DEFAULT 0',
  // Version 4: the trace's root name on each of its runs, so that usage splits by it from an index.
  root_name: 'TEXT',
  // Version 5: whether the run's usage counts toward its trace's totals and the stats (see
  // `countedUsageRuns`), and the run type that decides it.
  run_type: 'TEXT',
  counts_usage: 'INTEGER NOT NULL DEFAULT 0',
  // Version 7: the fields updates have set (`updatedFields`), which a create sent again keeps.
  updated: 'TEXT',
};
const TRACE_COLUMNS: Record<string, string> = {
  last_us: 'INTEGER NOT NULL DEFAULT 0',
  duration_us: 'INTEGER',
  error_count: 'INTEGER NOT NULL DEFAULT 0',
  prompt_tokens: 'INTEGER NOT NULL DEFAULT 0',
  completion_tokens: 'INTEGER NOT NULL DEFAULT 0',
  total_tokens: 'INTEGER NOT NULL DEFAULT 0',
  cost: 'REAL',
  bytes: 'INTEGER NOT NULL DEFAULT 0',
  tags: "TEXT NOT NULL DEFAULT '[]'",
  metadata: "TEXT NOT NULL DEFAULT '{}'",
  input_preview: 'TEXT',
  output_preview: 'TEXT',
  // Version 3: the conversation the trace is a turn of, and the model that used most of its tokens.
  thread_id: 'TEXT',
  model: 'TEXT',
};
// The stats indexes cover every column their queries read: `runs.data` comes before the columns
// added later in each row, so a lookup into the table would read a run's JSON (often overflow
// pages) to reach them.
const INDEXES = `
CREATE INDEX IF NOT EXISTS traces_by_last ON traces (last_us);
CREATE INDEX IF NOT EXISTS traces_by_duration ON traces (duration_us, trace_id);
CREATE INDEX IF NOT EXISTS traces_by_tokens ON traces (total_tokens, trace_id);
CREATE INDEX IF NOT EXISTS deleted_by_time ON deleted_traces (deleted_us);
CREATE INDEX IF NOT EXISTS pending_by_trace ON pending_updates (trace_id);
CREATE INDEX IF NOT EXISTS pending_by_time ON pending_updates (received_us);
CREATE INDEX IF NOT EXISTS traces_by_thread ON traces (thread_id, start_us) WHERE thread_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS traces_stats ON traces (start_us, project, model, name, duration_us, error_count);
CREATE INDEX IF NOT EXISTS runs_usage_by_start ON runs (start_us, project, model, provider, root_name, prompt_tokens,
  completion_tokens, cache_read_tokens, cache_write_tokens, total_tokens, cost)
  WHERE counts_usage = 1 AND (total_tokens > 0 OR cost IS NOT NULL);
CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value);
`;
// Free-text search: one row per run (rowid = the run's rowid) holding the text of its name,
// inputs, outputs, error, metadata and tags. Contentless (the text is in runs.data already), with
// deletes allowed so that a replaced or deleted run leaves no stale entry.
const SEARCH_SCHEMA = `
CREATE VIRTUAL TABLE IF NOT EXISTS runs_fts USING fts5(text, content='', contentless_delete=1,
  tokenize='unicode61 remove_diacritics 2');
`;
/** `store_meta` key: runs whose rowid is at most this are not in runs_fts yet (a store of version 2). */
const SEARCH_BACKLOG = 'search_backlog_rowid';

interface TraceRow {
  trace_id: string;
  project: string;
  name: string | null;
  status: string | null;
  root_run_id: string | null;
  start_us: number;
  start_time: string;
  end_time: string | null;
  duration_us: number | null;
  run_count: number;
  error_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number | null;
  tags: string;
  metadata: string;
  input_preview: string | null;
  output_preview: string | null;
  thread_id: string | null;
  model: string | null;
}

/** A row of `usageStats`' query: bucket, group, model, provider, tokens, reported cost, the tokens to price. */
type UsageRow = [
  number,
  string | null,
  string | null,
  string | null,
  number,
  number | null,
  number,
  number,
  number,
  number,
];

/** The statements `insertOne` runs, prepared once by a writer. */
interface WriteStatements {
  readonly upsertRun: Statement;
  readonly storedRun: Statement<[string]>;
  readonly pending: Statement<[string]>;
  readonly holdPending: Statement;
  readonly dropPending: Statement<[string]>;
}

/**
 * The fields updates have set on a run (a `runs.updated` value): a Run field name, or
 * `extra.<member>` for a member of `extra` (which updates set member by member).
 */
type UpdatedFields = string[];

/** A trace row with the value the list is sorted by. */
type SortedRow = TraceRow & { sort_value: number | string };

/** The list's order: a SORT_COLUMN expression, then the trace id, both one way. */
interface TraceOrder {
  readonly column: string;
  readonly direction: 'ASC' | 'DESC';
}

/** The SQL expression each sort field orders by (NULLs as the smallest value). */
const SORT_COLUMN: Record<TraceSortField, string> = {
  start_time: 'start_us',
  duration: 'COALESCE(duration_us, -1)',
  total_tokens: 'total_tokens',
  name: "COALESCE(name, '')",
  run_count: 'run_count',
};

// Search (`searchTraces`): below this many matching runs, their traces are looked up run by run;
// from it, the traces are walked in the list's order, at most SEARCH_WINDOW of them.
const FEW_MATCHES = 2000;
const SEARCH_WINDOW = 5000;

/** How long deleted trace ids are remembered, so that late runs of them are dropped. */
const TOMBSTONE_MS = 24 * 3600_000;

export class LocalTraceStore {
  private readonly db: SqliteDatabase;
  private readonly now: () => number;
  /** The statements of the write path, prepared on the first write (`writes`). */
  private writeStatements?: WriteStatements;
  private readonly indexSearch: Statement<[number | bigint, string]>;
  private readonly isDeleted: Statement<[string]>;
  private readonly insertMany: (runs: readonly Run[], project: string) => number;
  /** Whether the stats rollups are there and complete (a reader may open a file not upgraded yet). */
  private readonly rollupsReady: boolean;

  constructor(path: string, options: StoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.db = new Database(path, options.readonly ? { fileMustExist: true } : {});
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    const version = options.readonly ? SCHEMA_VERSION : this.migrateSchema();
    this.rollupsReady = !options.readonly || (this.db.pragma('user_version', { simple: true }) as number) >= 6;
    this.indexSearch = this.db.prepare('INSERT OR REPLACE INTO runs_fts (rowid, text) VALUES (?, ?)');
    this.isDeleted = this.db.prepare('SELECT 1 FROM deleted_traces WHERE trace_id = ?');
    this.insertMany = this.db.transaction((runs: readonly Run[], project: string) => {
      const touched = new Set<string>();
      let dropped = 0;
      for (const run of runs) {
        // An update may leave out its trace id (the ingest API's `PATCH /runs/{id}` does not need it).
        const traceId = run.trace_id as string | undefined;
        if (traceId !== undefined && this.isDeleted.get(traceId)) {
          dropped++;
          continue;
        }
        for (const id of this.insertOne(run, project)) touched.add(id);
      }
      for (const traceId of touched) this.summarize(traceId);
      return dropped;
    });
    if (!options.readonly) this.migrateData(version);
  }

  /**
   * Stores runs and updates of runs (`insertOne`: a re-sent run replaces its earlier copy but what
   * updates set), all or none. Returns how many were dropped because retention has deleted their
   * trace.
   */
  insertRuns(runs: readonly Run[], project: string): number {
    return this.insertMany(runs, project);
  }

  /** The latest traces (or as `sort` says), newest first, filtered. */
  listTraces(query: ListTracesQuery = {}): TraceSummary[] {
    return this.queryTraces(query).traces;
  }

  /** A page of traces and the cursor of the next one. */
  queryTraces(query: ListTracesQuery = {}): TracePage {
    const limit = Math.min(Math.max(Math.trunc(query.limit ?? 50), 1), 1000);
    const sort = query.sort ?? 'start_time';
    const order = query.order ?? 'desc';
    const column = SORT_COLUMN[sort];
    const conditions: string[] = [];
    const params: Record<string, unknown> = { limit: limit + 1 };
    if (query.project !== undefined) {
      conditions.push('project = @project');
      params.project = query.project;
    }
    if (query.name !== undefined) {
      conditions.push("name LIKE @name ESCAPE '\\'");
      params.name = `%${likeEscape(query.name)}%`;
    }
    if (query.status === 'pending') conditions.push('status IS NULL');
    else if (query.status !== undefined) {
      conditions.push('status = @status');
      params.status = query.status;
    }
    if (query.error !== undefined) conditions.push(query.error ? 'error_count > 0' : 'error_count = 0');
    if (query.startAfter !== undefined) {
      conditions.push('start_us >= @startAfter');
      params.startAfter = toMicros(query.startAfter);
    }
    if (query.startBefore !== undefined) {
      conditions.push('start_us < @startBefore');
      params.startBefore = toMicros(query.startBefore);
    }
    if (query.before !== undefined) {
      conditions.push('start_us < @before');
      params.before = toMicros(query.before);
    }
    if (query.tag !== undefined) {
      conditions.push('EXISTS (SELECT 1 FROM json_each(traces.tags) WHERE value = @tag)');
      params.tag = query.tag;
    }
    Object.entries(query.metadata ?? {}).forEach(([key, value], index) => {
      conditions.push(`CAST(json_extract(metadata, @metaPath${index}) AS TEXT) = @metaValue${index}`);
      params[`metaPath${index}`] = `$."${key.replace(/["\\]/g, '')}"`;
      params[`metaValue${index}`] = value;
    });
    if (query.model !== undefined) {
      conditions.push('model = @model');
      params.model = query.model;
    }
    if (query.threadId !== undefined) {
      conditions.push('thread_id = @threadId');
      params.threadId = query.threadId;
    }
    const match = query.text === undefined ? undefined : ftsQuery(query.text);
    // Runs of a store of version 2 not indexed yet are searched the old way until they are.
    const backlog = match === undefined ? 0 : this.searchBacklog();
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor, sort, order);
      conditions.push(
        `(${column} ${order === 'desc' ? '<' : '>'} @cursorValue OR (${column} = @cursorValue AND trace_id ${order === 'desc' ? '<' : '>'} @cursorId))`,
      );
      params.cursorValue = cursor.value;
      params.cursorId = cursor.id;
    }
    const sorted: TraceOrder = { column, direction: order === 'desc' ? 'DESC' : 'ASC' };
    let rows: SortedRow[];
    if (match === undefined) rows = this.selectTraces(conditions, params, sorted);
    else if (backlog > 0) {
      rows = this.selectTraces(
        [
          ...conditions,
          `(trace_id IN (SELECT runs.trace_id FROM runs_fts JOIN runs ON runs.rowid = runs_fts.rowid WHERE runs_fts MATCH @match)
            OR EXISTS (SELECT 1 FROM runs WHERE runs.trace_id = traces.trace_id AND runs.rowid <= @backlog AND runs.data LIKE @text ESCAPE '\\'))`,
        ],
        { ...params, match, backlog, text: `%${likeEscape(query.text!)}%` },
        sorted,
      );
    } else rows = this.searchTraces(conditions, params, match, sorted);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page.at(-1);
    return {
      traces: page.map(summaryOf),
      ...(more && last ? { nextCursor: encodeCursor(sort, order, last.sort_value, last.trace_id) } : {}),
    };
  }

  /**
   * A page of the traces with runs that match an FTS5 query. Few matching runs: their traces are
   * looked up (a row read per run). Many: the traces are walked in the page's order, each tested
   * against the set of matching runs, which stops once the page is full — a word in one trace in
   * nine fills a page of 50 in about 450 traces — but within the first SEARCH_WINDOW traces only,
   * so that a word too rare to fill a page there is answered the first way.
   */
  private searchTraces(
    conditions: readonly string[],
    params: Record<string, unknown>,
    match: string,
    sorted: TraceOrder,
  ): SortedRow[] {
    const { column, direction } = sorted;
    const byRuns = () =>
      this.selectTraces(
        [
          ...conditions,
          'trace_id IN (SELECT runs.trace_id FROM runs_fts JOIN runs ON runs.rowid = runs_fts.rowid WHERE runs_fts MATCH @match)',
        ],
        { ...params, match },
        sorted,
      );
    const { hits } = this.db
      .prepare('SELECT COUNT(*) AS hits FROM (SELECT rowid FROM runs_fts WHERE runs_fts MATCH ? LIMIT ?)')
      .get(match, FEW_MATCHES) as { hits: number };
    if (hits < FEW_MATCHES) return byRuns();
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    // The window: the traces up to the sort value of the SEARCH_WINDOW-th (with all that tie with
    // it, so that it is a beginning of the list). By the value alone, which an index answers.
    const edge = this.db
      .prepare(
        `SELECT ${column} AS value FROM traces ${where} ORDER BY ${column} ${direction} LIMIT 1 OFFSET ${SEARCH_WINDOW}`,
      )
      .get(params) as { value: number | string } | undefined;
    const walked = this.selectTraces(
      [
        ...conditions,
        ...(edge ? [`${column} ${direction === 'DESC' ? '>=' : '<='} @edgeValue`] : []),
        `EXISTS (SELECT 1 FROM runs INDEXED BY runs_by_trace WHERE runs.trace_id = traces.trace_id
           AND runs.rowid IN (SELECT rowid FROM runs_fts WHERE runs_fts MATCH @match))`,
      ],
      { ...params, match, ...(edge ? { edgeValue: edge.value } : {}) },
      sorted,
    );
    // Exact when the page filled up within the window, or the window held every trace.
    return walked.length >= (params.limit as number) || !edge ? walked : byRuns();
  }

  /** Up to `@limit` trace rows where all of `where` holds, in the list's order. */
  private selectTraces(where: readonly string[], params: Record<string, unknown>, sorted: TraceOrder): SortedRow[] {
    const { column, direction } = sorted;
    return this.db
      .prepare(
        `SELECT *, ${column} AS sort_value FROM traces ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY ${column} ${direction}, trace_id ${direction} LIMIT @limit`,
      )
      .all(params) as SortedRow[];
  }

  /** Every project with the number of traces it holds, largest first. */
  projects(): { project: string; traces: number }[] {
    return (
      this.db.prepare('SELECT project, COUNT(*) AS traces FROM traces GROUP BY project ORDER BY traces DESC').all() as {
        project: string;
        traces: number;
      }[]
    ).map((row) => ({ project: row.project, traces: row.traces }));
  }

  /** Counted tokens per model of these traces (runs that reported no cost of their own), for pricing. */
  modelUsage(traceIds: readonly string[]): ModelUsage[] {
    if (traceIds.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT trace_id, model, provider, MIN(start_us) AS start_us, SUM(prompt_tokens) AS p,
           SUM(completion_tokens) AS c, SUM(cache_read_tokens) AS cr, SUM(cache_write_tokens) AS cw FROM runs
         WHERE trace_id IN (SELECT value FROM json_each(?)) AND model IS NOT NULL AND cost IS NULL AND counts_usage = 1
         GROUP BY trace_id, model, provider`,
      )
      .all(JSON.stringify(traceIds)) as {
      trace_id: string;
      model: string;
      provider: string | null;
      start_us: number;
      p: number;
      c: number;
      cr: number;
      cw: number;
    }[];
    return rows.map((row) => ({
      traceId: row.trace_id,
      model: row.model,
      ...(row.provider !== null ? { provider: row.provider } : {}),
      startTime: fromMicros(row.start_us),
      promptTokens: row.p,
      completionTokens: row.c,
      cacheReadTokens: row.cr,
      cacheWriteTokens: row.cw,
    }));
  }

  /**
   * Trace count, failed traces and latency percentiles per bucket (by the trace's start) and
   * group. While the range holds few traces (`exactPercentileTraces`), all exactly from the
   * `traces_stats` index; above, from the rollups (`rollup.ts`) where the buckets allow, their
   * percentiles from the merged latency histograms.
   */
  traceStats(query: StatsQuery): TraceStatsRow[] {
    const group = query.groupBy === undefined ? 'NULL' : query.groupBy;
    const parts = this.rangeParts(query);
    const exact = this.tracesIn(parts, query) <= (query.exactPercentileTraces ?? EXACT_PERCENTILE_TRACES);
    const rows = exact ? this.exactTraceStats(query, group) : this.histogramTraceStats(parts, query, group);
    const byGroup = (a: string | null, b: string | null) =>
      a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1;
    return rows.sort((a, b) => a.bucket - b.bucket || byGroup(a.group, b.group));
  }

  /** How many traces started in the range (from the rollups' counts where it can). */
  private tracesIn(parts: readonly RangePart[], query: StatsQuery): number {
    const params = query.project !== undefined ? { project: query.project } : {};
    let traces = 0;
    for (const part of parts) {
      traces += this.db
        .prepare(traceCountSql(part, query.project !== undefined))
        .pluck()
        .get(params) as number;
    }
    return traces;
  }

  /**
   * The figures from the traces themselves, latency percentiles interpolated (SQLite's
   * percentile()): about 0.6 µs of CPU per trace, so some 12 ms at EXACT_PERCENTILE_TRACES.
   */
  private exactTraceStats(query: StatsQuery, group: string): TraceStatsRow[] {
    const rows = this.db
      .prepare(
        `SELECT CAST((start_us - @start) / @bucket AS INTEGER), ${group}, COUNT(*), SUM(error_count > 0),
           percentile(duration_us, 50), percentile(duration_us, 95), percentile(duration_us, 99)
         FROM traces INDEXED BY traces_stats
         WHERE start_us >= @start AND start_us < @end${query.project !== undefined ? ' AND project = @project' : ''}
         GROUP BY 1, 2`,
      )
      .raw()
      .all(statsParams(query)) as [
      number,
      string | null,
      number,
      number,
      number | null,
      number | null,
      number | null,
    ][];
    // Whole microseconds, as stored (interpolation leaves float noise: 3849.9999999999995).
    const ms = (us: number | null) => (us === null ? null : Math.round(us) / 1000);
    return rows.map(([bucket, group, traces, errors, p50, p95, p99]) => ({
      bucket,
      group,
      traces,
      errors,
      p50: ms(p50),
      p95: ms(p95),
      p99: ms(p99),
    }));
  }

  /** The figures from the rollups' rows, percentiles from their merged latency histograms. */
  private histogramTraceStats(parts: readonly RangePart[], query: StatsQuery, group: string): TraceStatsRow[] {
    const params = statsParams(query);
    const histograms = new LatencyHistograms();
    for (const part of parts) {
      const rows = this.db
        .prepare(traceRollupSql(part, group, query.project !== undefined))
        .raw()
        .all(params) as [number, string | null, number, number, string][];
      for (const [bucket, grp, traces, errors, latencies] of rows)
        histograms.add(bucket, grp, traces, errors, latencies);
    }
    const rows: TraceStatsRow[] = [];
    for (const figures of histograms.figures()) {
      const [p50, p95, p99] = histogramPercentiles(figures, [0.5, 0.95, 0.99]);
      rows.push({
        bucket: figures.bucket,
        group: figures.group,
        traces: figures.traces,
        errors: figures.errors,
        p50: p50 ?? null,
        p95: p95 ?? null,
        p99: p99 ?? null,
      });
    }
    return rows;
  }

  /** Where each part of a stats range is read from: a rollup, or the raw tables. */
  private rangeParts(query: StatsQuery): RangePart[] {
    return this.rollupsReady
      ? rangeParts(query.startUs, query.endUs, query.bucketUs)
      : [{ fromUs: query.startUs, toUs: query.endUs }];
  }

  /**
   * Counted token usage (`countedUsageRuns`) per bucket (by the run's start), group and model: from
   * the rollups where the buckets allow, else from the `runs_usage_by_start` index.
   */
  usageStats(query: StatsQuery): UsageStatsRow[] {
    const group = query.groupBy === undefined ? 'NULL' : query.groupBy === 'name' ? 'root_name' : query.groupBy;
    const parts = this.rangeParts(query).map((part) => usageRollupSql(part, group, query.project !== undefined));
    const rows = this.db
      .prepare(
        `SELECT CAST(bucket AS INTEGER), grp, model, provider, SUM(total),
           CASE WHEN SUM(costed) > 0 THEN SUM(cost) END, SUM(p), SUM(c), SUM(cr), SUM(cw)
         FROM (${parts.join(' UNION ALL ')})
         GROUP BY 1, grp, model, provider ORDER BY 1, grp, model, provider`,
      )
      // Arrays rather than objects: a week by root name is ~11,000 rows.
      .raw()
      .all(statsParams(query)) as UsageRow[];
    return rows.map(([bucket, group, model, provider, total, reported, p, c, cr, cw]) => ({
      bucket,
      group,
      model,
      provider,
      totalTokens: total,
      reportedCost: reported,
      promptTokens: p,
      completionTokens: c,
      cacheReadTokens: cr,
      cacheWriteTokens: cw,
    }));
  }

  /** Conversations (traces sharing a thread id), the latest activity first. */
  listThreads(query: { project?: string; limit?: number; cursor?: string } = {}): ThreadPage {
    const limit = Math.min(Math.max(Math.trunc(query.limit ?? 50), 1), 1000);
    const params: Record<string, unknown> = { limit: limit + 1 };
    const having: string[] = [];
    if (query.project !== undefined) params.project = query.project;
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor, 'threads', 'desc');
      having.push('(last_us < @cursorValue OR (last_us = @cursorValue AND thread_id < @cursorId))');
      params.cursorValue = cursor.value;
      params.cursorId = cursor.id;
    }
    const rows = this.db
      .prepare(
        `SELECT thread_id, MIN(project) AS project, COUNT(*) AS turns, MIN(start_us) AS first_us, MAX(start_us) AS last_us,
           SUM(error_count > 0) AS error_turns, SUM(total_tokens) AS total_tokens, SUM(COALESCE(duration_us, 0)) AS duration_us
         FROM traces INDEXED BY traces_by_thread
         WHERE thread_id IS NOT NULL${query.project !== undefined ? ' AND project = @project' : ''}
         GROUP BY thread_id ${having.length > 0 ? `HAVING ${having.join(' AND ')}` : ''}
         ORDER BY last_us DESC, thread_id DESC LIMIT @limit`,
      )
      .all(params) as ThreadRow[];
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page.at(-1);
    return {
      threads: page.map((row) => this.threadSummaryOf(row)),
      ...(more && last ? { nextCursor: encodeCursor('threads', 'desc', last.last_us, last.thread_id) } : {}),
    };
  }

  /** One conversation: its summary and its turns (trace summaries), oldest first. */
  getThread(threadId: string): { thread: ThreadSummary; turns: TraceSummary[] } | undefined {
    const row = this.db
      .prepare(
        `SELECT thread_id, MIN(project) AS project, COUNT(*) AS turns, MIN(start_us) AS first_us, MAX(start_us) AS last_us,
           SUM(error_count > 0) AS error_turns, SUM(total_tokens) AS total_tokens, SUM(COALESCE(duration_us, 0)) AS duration_us
         FROM traces WHERE thread_id = ? GROUP BY thread_id`,
      )
      .get(threadId) as ThreadRow | undefined;
    if (!row) return undefined;
    const turns = (
      this.db
        .prepare('SELECT * FROM traces WHERE thread_id = ? ORDER BY start_us, trace_id LIMIT 10000')
        .all(threadId) as TraceRow[]
    ).map(summaryOf);
    return { thread: this.threadSummaryOf(row), turns };
  }

  /** The runs of these traces as stored (parents before children within a trace), trace by trace. */
  *exportRuns(traceIds: readonly string[]): Generator<Run> {
    const statement = this.db.prepare('SELECT data FROM runs WHERE trace_id = ? ORDER BY dotted_order, start_us');
    for (const traceId of traceIds) {
      for (const row of statement.iterate(traceId) as Iterable<{ data: string }>) yield JSON.parse(row.data) as Run;
    }
  }

  /**
   * Indexes for search up to `maxRuns` runs a store of version 2 holds from before search was
   * indexed (newest first); returns how many remain. Searching is correct meanwhile (those runs are
   * searched without the index), only slower.
   */
  indexSearchBacklog(maxRuns = 2000): number {
    return this.db.transaction(() => {
      const backlog = this.searchBacklog();
      if (backlog <= 0) return 0;
      const rows = this.db
        .prepare('SELECT rowid, data FROM runs WHERE rowid <= ? ORDER BY rowid DESC LIMIT ?')
        .all(backlog, maxRuns) as { rowid: number; data: string }[];
      for (const row of rows) this.indexSearch.run(row.rowid, searchText(JSON.parse(row.data) as Run));
      const next = rows.length < maxRuns ? 0 : rows.at(-1)!.rowid - 1;
      if (next <= 0) this.db.prepare('DELETE FROM store_meta WHERE key = ?').run(SEARCH_BACKLOG);
      else this.db.prepare('UPDATE store_meta SET value = ? WHERE key = ?').run(next, SEARCH_BACKLOG);
      return next <= 0
        ? 0
        : (this.db.prepare('SELECT COUNT(*) AS n FROM runs WHERE rowid <= ?').get(next) as { n: number }).n;
    })();
  }

  /** The highest rowid of the runs not yet indexed for search (0: none). */
  private searchBacklog(): number {
    const row = this.db.prepare('SELECT value FROM store_meta WHERE key = ?').get(SEARCH_BACKLOG) as
      { value: number } | undefined;
    return row?.value ?? 0;
  }

  private threadSummaryOf(row: ThreadRow): ThreadSummary {
    const previews = this.db
      .prepare(
        `SELECT (SELECT input_preview FROM traces WHERE thread_id = @t ORDER BY start_us ASC LIMIT 1) AS input,
                (SELECT output_preview FROM traces WHERE thread_id = @t ORDER BY start_us DESC LIMIT 1) AS output`,
      )
      .get({ t: row.thread_id }) as { input: string | null; output: string | null };
    return {
      threadId: row.thread_id,
      project: row.project,
      turns: row.turns,
      startTime: fromMicros(row.first_us),
      lastTime: fromMicros(row.last_us),
      errorTurns: row.error_turns,
      totalTokens: row.total_tokens,
      durationMs: row.duration_us / 1000,
      ...(previews.input !== null ? { inputPreview: previews.input } : {}),
      ...(previews.output !== null ? { outputPreview: previews.output } : {}),
    };
  }

  /** One trace by its id, in the stored (dashed) form or as OTLP's 32 hex digits. */
  getTrace(id: string): StoredTrace | undefined {
    const traceId = storedUuidForm(id);
    const row = this.db.prepare('SELECT * FROM traces WHERE trace_id = ?').get(traceId) as TraceRow | undefined;
    if (!row) return undefined;
    const rows = this.db
      .prepare('SELECT id, data, counts_usage FROM runs WHERE trace_id = ? ORDER BY dotted_order, start_us')
      .all(traceId) as { id: string; data: string; counts_usage: number }[];
    return {
      summary: summaryOf(row),
      runs: rows.map((r) => JSON.parse(r.data) as Run),
      countedUsageRunIds: rows.filter((r) => r.counts_usage === 1).map((r) => r.id),
    };
  }

  /** Bytes the database's pages hold (free pages excluded): what `maxBytes` limits. */
  usedBytes(): number {
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    return (pages - free) * pageSize;
  }

  /** The number of traces stored. */
  traceCount(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM traces').get() as { n: number }).n;
  }

  /**
   * Deletes whole traces: those whose last activity is older than `maxAgeMs`, then the oldest
   * until the used bytes fit `maxBytes` (the newest trace is never deleted for size alone, so a
   * limit below one trace does not empty the store on every write).
   */
  enforceRetention(limits: RetentionLimits): RetentionResult {
    const result = { maxAge: { traces: 0, runs: 0 }, maxBytes: { traces: 0, runs: 0 } };
    const nowUs = this.now() * 1000;
    this.db.prepare('DELETE FROM deleted_traces WHERE deleted_us < ?').run(nowUs - TOMBSTONE_MS * 1000);
    if (limits.maxAgeMs !== undefined) {
      const cutoff = nowUs - limits.maxAgeMs * 1000;
      for (;;) {
        const ids = (
          this.db.prepare('SELECT trace_id FROM traces WHERE last_us < ? LIMIT 500').all(cutoff) as {
            trace_id: string;
          }[]
        ).map((row) => row.trace_id);
        if (ids.length === 0) break;
        const runs = this.deleteTraces(ids, nowUs);
        result.maxAge.traces += ids.length;
        result.maxAge.runs += runs;
      }
      // Updates that have waited longer than the age limit for their run's create.
      this.db.prepare('DELETE FROM pending_updates WHERE received_us < ?').run(cutoff);
    }
    if (limits.maxBytes !== undefined) {
      for (let round = 0; round < 20; round++) {
        const excess = this.usedBytes() - limits.maxBytes;
        if (excess <= 0) break;
        // The oldest traces whose JSON adds up to the excess (pages hold a little more than the
        // JSON, so this converges in a few rounds); never the newest one.
        const candidates = this.db
          .prepare(
            'SELECT trace_id, bytes FROM traces WHERE trace_id != (SELECT trace_id FROM traces ORDER BY last_us DESC LIMIT 1) ORDER BY last_us ASC LIMIT 1000',
          )
          .all() as { trace_id: string; bytes: number }[];
        if (candidates.length === 0) break;
        const ids: string[] = [];
        let freed = 0;
        for (const candidate of candidates) {
          ids.push(candidate.trace_id);
          freed += Math.max(candidate.bytes, 1);
          if (freed >= excess) break;
        }
        const runs = this.deleteTraces(ids, nowUs);
        result.maxBytes.traces += ids.length;
        result.maxBytes.runs += runs;
      }
    }
    if (result.maxAge.traces + result.maxBytes.traces > 0) {
      // Give freed pages back to the file system when the file allows it (new files do).
      this.db.pragma('incremental_vacuum');
    }
    return result;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Deletes traces and their runs in one transaction; returns the runs deleted. */
  private deleteTraces(ids: readonly string[], nowUs: number): number {
    return this.db.transaction(() => {
      const list = JSON.stringify(ids);
      this.db
        .prepare(
          'DELETE FROM runs_fts WHERE rowid IN (SELECT rowid FROM runs WHERE trace_id IN (SELECT value FROM json_each(?)))',
        )
        .run(list);
      const { changes } = this.db
        .prepare('DELETE FROM runs WHERE trace_id IN (SELECT value FROM json_each(?))')
        .run(list);
      this.db.prepare('DELETE FROM pending_updates WHERE trace_id IN (SELECT value FROM json_each(?))').run(list);
      this.db.prepare('DELETE FROM traces WHERE trace_id IN (SELECT value FROM json_each(?))').run(list);
      this.db
        .prepare('INSERT OR REPLACE INTO deleted_traces (trace_id, deleted_us) SELECT value, ? FROM json_each(?)')
        .run(nowUs, list);
      return changes;
    })();
  }

  /** Creates or upgrades the tables and indexes; returns the file's version before. */
  private migrateSchema(): number {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version >= SCHEMA_VERSION) return version;
    const fresh = !this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'runs'").get();
    // Only a new file can switch to incremental vacuum (it needs to be set before the first table).
    if (fresh) this.db.pragma('auto_vacuum = INCREMENTAL');
    const addMissing = (table: string, columns: Record<string, string>) => {
      const existing = new Set(
        (this.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name),
      );
      for (const [name, type] of Object.entries(columns)) {
        if (!existing.has(name)) this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
      }
    };
    this.db.transaction(() => {
      this.db.exec(SCHEMA);
      addMissing('runs', RUN_COLUMNS);
      addMissing('traces', TRACE_COLUMNS);
      this.db.exec(INDEXES);
      this.db.exec(SEARCH_SCHEMA);
      createRollups(this.db);
      // A new file has nothing to fill in: it is current as soon as its tables exist.
      if (fresh) this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
    })();
    return fresh ? SCHEMA_VERSION : version;
  }

  /** Fills what a file of an older version lacks, then marks it current. */
  private migrateData(version: number): void {
    if (version >= SCHEMA_VERSION) return;
    this.db.transaction(() => {
      if (version <= 1) {
        // Version 1: every derived column from the runs' JSON (which also indexes them for search).
        const all = this.db.prepare('SELECT data, project FROM runs').all() as { data: string; project: string }[];
        for (const row of all) this.insertOne(JSON.parse(row.data) as Run, row.project);
        const ids = this.db.prepare('SELECT DISTINCT trace_id FROM runs').all() as { trace_id: string }[];
        for (const { trace_id } of ids) this.summarize(trace_id);
      } else if (version === 2) {
        // Version 2: the new columns in SQL (runs with usage only; threads from the roots'
        // metadata); the search index is built in the background (`indexSearchBacklog`), since
        // parsing every run's JSON at open would keep the writer waiting on a large store.
        this.db.exec(`
          UPDATE runs SET provider = json_extract(data, '$.extra.metadata.ls_provider'),
            cache_read_tokens = COALESCE(json_extract(data, '$.outputs.usage_metadata.input_token_details.cache_read'), 0),
            cache_write_tokens = COALESCE(json_extract(data, '$.outputs.usage_metadata.input_token_details.cache_creation'), 0)
          WHERE model IS NOT NULL OR total_tokens > 0;
          UPDATE traces SET thread_id = ${THREAD_ID_SQL},
            model = (SELECT model FROM runs WHERE runs.trace_id = traces.trace_id AND model IS NOT NULL
              GROUP BY model ORDER BY SUM(total_tokens) DESC, MIN(start_us) LIMIT 1);
          INSERT OR REPLACE INTO store_meta (key, value) SELECT '${SEARCH_BACKLOG}', MAX(rowid) FROM runs HAVING MAX(rowid) > 0;
        `);
      }
      if (version >= 2 && version <= 3) {
        // Version 4: the root name on each run (a version 1 file got it above, run by run), and the
        // usage index that covers it in place of the one that did not.
        this.db.exec(`
          DROP INDEX IF EXISTS runs_usage_by_time;
          UPDATE runs SET root_name = (SELECT name FROM traces WHERE traces.trace_id = runs.trace_id);
        `);
      }
      if (version >= 2 && version <= 4) {
        // Version 5: which runs' usage counts. Only runs that report usage need their run type (the
        // others never count), so the JSON of the rest is not read; then the traces where a run
        // other than a model call reported usage are summarized again (the others' sums stay).
        this.db.exec(`
          UPDATE runs SET run_type = json_extract(data, '$.run_type'),
            counts_usage = json_extract(data, '$.run_type') IS 'llm'
          WHERE total_tokens > 0 OR cost IS NOT NULL;
        `);
        const recount = this.db
          .prepare(
            `SELECT DISTINCT trace_id FROM runs
             WHERE run_type IS NOT 'llm' AND (total_tokens > 0 OR cost IS NOT NULL)`,
          )
          .all() as { trace_id: string }[];
        for (const { trace_id } of recount) this.summarize(trace_id);
      }
      if (version <= 4) {
        // The usage index of version 4 covered every run with usage; this one only the counted ones.
        this.db.exec('DROP INDEX IF EXISTS runs_usage_by_start');
        this.db.exec(INDEXES);
      }
      // Version 6: the stats rollups, from the traces and runs as they now are.
      if (version <= 5) rebuildRollups(this.db);
      // Version 7: `runs.updated` and `pending_updates`, empty in a file written before (its
      // updates were merged into their runs, or stored as runs of their own).
      this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
    })();
  }

  /** The statements of the write path (a reader never needs them; an older file may lack their columns). */
  private get writes(): WriteStatements {
    this.writeStatements ??= {
      upsertRun: this.db.prepare(`
        INSERT INTO runs (id, trace_id, project, dotted_order, start_us, data, parent_run_id, end_us, name, status,
          model, prompt_tokens, completion_tokens, total_tokens, cost, bytes, provider, cache_read_tokens,
          cache_write_tokens, root_name, run_type, counts_usage, updated)
        VALUES (@id, @trace_id, @project, @dotted_order, @start_us, @data, @parent_run_id, @end_us, @name, @status,
          @model, @prompt_tokens, @completion_tokens, @total_tokens, @cost, @bytes, @provider, @cache_read_tokens,
          @cache_write_tokens, @root_name, @run_type, @counts_usage, @updated)
        ON CONFLICT (id) DO UPDATE SET trace_id = excluded.trace_id, project = excluded.project,
          dotted_order = excluded.dotted_order, start_us = excluded.start_us, data = excluded.data,
          parent_run_id = excluded.parent_run_id, end_us = excluded.end_us, name = excluded.name,
          status = excluded.status, model = excluded.model, prompt_tokens = excluded.prompt_tokens,
          completion_tokens = excluded.completion_tokens, total_tokens = excluded.total_tokens,
          cost = excluded.cost, bytes = excluded.bytes, provider = excluded.provider,
          cache_read_tokens = excluded.cache_read_tokens, cache_write_tokens = excluded.cache_write_tokens,
          root_name = COALESCE(excluded.root_name, runs.root_name), run_type = excluded.run_type,
          counts_usage = excluded.counts_usage, updated = excluded.updated
        RETURNING rowid`),
      storedRun: this.db.prepare('SELECT trace_id, data, updated FROM runs WHERE id = ?'),
      pending: this.db.prepare('SELECT data FROM pending_updates WHERE id = ?'),
      holdPending: this.db.prepare(
        `INSERT INTO pending_updates (id, trace_id, received_us, data) VALUES (@id, @trace_id, @received_us, @data)
         ON CONFLICT (id) DO UPDATE SET trace_id = COALESCE(excluded.trace_id, pending_updates.trace_id),
           received_us = excluded.received_us, data = excluded.data`,
      ),
      dropPending: this.db.prepare('DELETE FROM pending_updates WHERE id = ?'),
    };
    return this.writeStatements;
  }

  /**
   * Stores a run, or an update of one (Run.update), the same whichever order they come in: the
   * stored run is the latest create with every update since applied over it (`withUpdate`). An
   * update of a run whose create has not come yet waits in `pending_updates`, shown nowhere, and is
   * applied when the create comes; the fields updates have set are remembered with the run
   * (`updated`), so that a create sent again (an SDK's retry, a journal replayed after a crash)
   * replaces the create's fields only. Returns the traces whose summaries need recomputing.
   */
  private insertOne(incoming: Run, project: string): string[] {
    const writes = this.writes;
    const row = writes.storedRun.get(incoming.id) as
      { trace_id: string; data: string; updated: string | null } | undefined;
    const stored = row ? (JSON.parse(row.data) as Run) : undefined;
    let updated: UpdatedFields = row?.updated ? (JSON.parse(row.updated) as UpdatedFields) : [];
    let run: Run;
    if (incoming.update) {
      const update = updateFields(incoming);
      if (!stored) {
        const held = writes.pending.get(incoming.id) as { data: string } | undefined;
        const fields = held ? withUpdate(JSON.parse(held.data) as Partial<Run>, update) : update;
        writes.holdPending.run({
          id: incoming.id,
          trace_id: fields.trace_id ?? null,
          received_us: this.now() * 1000,
          data: JSON.stringify(fields),
        });
        return [];
      }
      run = withUpdate(stored, update);
      updated = [...new Set([...updated, ...updatedFields(update)])];
    } else {
      run = stored && updated.length > 0 ? keepUpdated(incoming, stored, updated) : incoming;
      const held = writes.pending.get(incoming.id) as { data: string } | undefined;
      if (held) {
        const update = JSON.parse(held.data) as Partial<Run>;
        run = withUpdate(run, update);
        updated = [...new Set([...updated, ...updatedFields(update)])];
        writes.dropPending.run(incoming.id);
      }
    }
    const columns = { ...runColumns(run, project), updated: updated.length > 0 ? JSON.stringify(updated) : null };
    const { rowid } = writes.upsertRun.get(columns) as { rowid: number | bigint };
    this.indexSearch.run(rowid, searchText(run));
    // A run that moved to another trace leaves its old trace to be summarized (or removed) too.
    return row && row.trace_id !== run.trace_id ? [run.trace_id, row.trace_id] : [run.trace_id];
  }

  /**
   * Marks which of a trace's runs have their usage counted (`countedUsageRuns`), from the runs
   * that report usage and, when none of them is a model call, every run's parent.
   */
  private recountUsage(traceId: string): void {
    const reporting = this.db
      .prepare(
        `SELECT id, parent_run_id, run_type, 1 AS reports, counts_usage FROM runs
         WHERE trace_id = ? AND (total_tokens > 0 OR cost IS NOT NULL)`,
      )
      .all(traceId) as (UsageFacts & { counts_usage: number })[];
    if (reporting.length === 0) return;
    const facts: UsageFacts[] = reporting.some((run) => run.run_type === 'llm')
      ? reporting
      : [
          ...reporting,
          ...(this.db
            .prepare(
              `SELECT id, parent_run_id, run_type, 0 AS reports FROM runs
               WHERE trace_id = ? AND total_tokens = 0 AND cost IS NULL`,
            )
            .all(traceId) as UsageFacts[]),
        ];
    const counted = countedUsageRuns(facts);
    const mark = this.db.prepare('UPDATE runs SET counts_usage = ? WHERE id = ?');
    for (const run of reporting) {
      const counts = counted.has(run.id) ? 1 : 0;
      if (run.counts_usage !== counts) mark.run(counts, run.id);
    }
  }

  /** Recomputes a trace's summary row from its runs' columns (and the root's JSON). */
  private summarize(traceId: string): void {
    if (!this.db.prepare('SELECT 1 FROM runs WHERE trace_id = ? LIMIT 1').get(traceId)) {
      // Its runs all moved to another trace.
      this.db.prepare('DELETE FROM traces WHERE trace_id = ?').run(traceId);
      return;
    }
    this.recountUsage(traceId);
    const agg = this.db
      .prepare(
        `SELECT MIN(project) AS project, MIN(start_us) AS start_us, MAX(end_us) AS end_us, COUNT(*) AS run_count,
           SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END) AS error_count,
           SUM(prompt_tokens * counts_usage) AS prompt_tokens, SUM(completion_tokens * counts_usage) AS completion_tokens,
           SUM(total_tokens * counts_usage) AS total_tokens, SUM(CASE WHEN counts_usage = 1 THEN cost END) AS cost,
           SUM(bytes) AS bytes
         FROM runs WHERE trace_id = ?`,
      )
      .get(traceId) as {
      project: string;
      start_us: number;
      end_us: number | null;
      run_count: number;
      error_count: number;
      prompt_tokens: number;
      completion_tokens: number;
      total_tokens: number;
      cost: number | null;
      bytes: number;
    };
    const times = this.db
      .prepare(
        `SELECT (SELECT json_extract(data, '$.start_time') FROM runs WHERE trace_id = @t ORDER BY start_us ASC LIMIT 1) AS start_time,
                (SELECT json_extract(data, '$.end_time') FROM runs WHERE trace_id = @t AND end_us IS NOT NULL ORDER BY end_us DESC LIMIT 1) AS end_time`,
      )
      .get({ t: traceId }) as { start_time: string; end_time: string | null };
    const rootRow = this.db
      .prepare('SELECT data, project FROM runs WHERE trace_id = ? AND parent_run_id IS NULL ORDER BY start_us LIMIT 1')
      .get(traceId) as { data: string; project: string } | undefined;
    const root = rootRow ? (JSON.parse(rootRow.data) as Run) : undefined;
    this.db
      .prepare('UPDATE runs SET root_name = @name WHERE trace_id = @t AND root_name IS NOT @name')
      .run({ t: traceId, name: root?.name ?? null });
    const model = this.db
      .prepare(
        `SELECT model FROM runs WHERE trace_id = ? AND model IS NOT NULL
         GROUP BY model ORDER BY SUM(total_tokens * counts_usage) DESC, MIN(start_us) LIMIT 1`,
      )
      .get(traceId) as { model: string } | undefined;
    this.db
      .prepare(
        // An update rather than a replacement of the row, so that the rollup's update trigger
        // sees the trace's old and new figures.
        `INSERT INTO traces (trace_id, project, name, status, root_run_id, start_us, start_time, end_us, end_time,
           run_count, last_us, duration_us, error_count, prompt_tokens, completion_tokens, total_tokens, cost, bytes,
           tags, metadata, input_preview, output_preview, thread_id, model)
         VALUES (@trace_id, @project, @name, @status, @root_run_id, @start_us, @start_time, @end_us, @end_time,
           @run_count, @last_us, @duration_us, @error_count, @prompt_tokens, @completion_tokens, @total_tokens, @cost,
           @bytes, @tags, @metadata, @input_preview, @output_preview, @thread_id, @model)
         ON CONFLICT (trace_id) DO UPDATE SET
           project = excluded.project, name = excluded.name, status = excluded.status,
           root_run_id = excluded.root_run_id, start_us = excluded.start_us, start_time = excluded.start_time,
           end_us = excluded.end_us, end_time = excluded.end_time, run_count = excluded.run_count,
           last_us = excluded.last_us, duration_us = excluded.duration_us, error_count = excluded.error_count,
           prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
           total_tokens = excluded.total_tokens, cost = excluded.cost, bytes = excluded.bytes, tags = excluded.tags,
           metadata = excluded.metadata, input_preview = excluded.input_preview,
           output_preview = excluded.output_preview, thread_id = excluded.thread_id, model = excluded.model`,
      )
      .run({
        trace_id: traceId,
        project: rootRow?.project ?? agg.project,
        ...rootColumns(root),
        start_us: agg.start_us,
        start_time: times.start_time,
        end_us: agg.end_us,
        end_time: times.end_time,
        run_count: agg.run_count,
        last_us: Math.max(agg.start_us, agg.end_us ?? 0),
        duration_us: agg.end_us === null ? null : agg.end_us - agg.start_us,
        error_count: agg.error_count,
        prompt_tokens: agg.prompt_tokens,
        completion_tokens: agg.completion_tokens,
        total_tokens: agg.total_tokens,
        cost: agg.cost,
        bytes: agg.bytes,
        model: model?.model ?? null,
      });
  }
}

/** The fields an update (Run.update) sets: those it has, without its marker. */
function updateFields(update: Run): Partial<Run> {
  const { update: _marker, ...fields } = update;
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<Run>;
}

/** `base` with an update's fields in place of its own (`extra` member by member), the rest kept. */
function withUpdate<T extends Partial<Run>>(base: T, update: Partial<Run>): T {
  const merged = { ...base, ...update };
  if (base.extra || update.extra) merged.extra = { ...base.extra, ...update.extra };
  return merged;
}

/** What of a run an update sets, as `runs.updated` records it. */
function updatedFields(update: Partial<Run>): UpdatedFields {
  return Object.keys(update).flatMap((key) =>
    key === 'extra' ? Object.keys(update.extra ?? {}).map((member) => `extra.${member}`) : [key],
  );
}

/** A create sent again, with the fields that updates of the stored run set kept from it. */
function keepUpdated(create: Run, stored: Run, updated: UpdatedFields): Run {
  const run: Record<string, unknown> = { ...create };
  let extra: Record<string, unknown> | undefined;
  for (const field of updated) {
    if (field.startsWith('extra.')) {
      const member = field.slice('extra.'.length);
      if (stored.extra && member in stored.extra) (extra ??= { ...create.extra })[member] = stored.extra[member];
    } else if ((stored as unknown as Record<string, unknown>)[field] !== undefined) {
      run[field] = (stored as unknown as Record<string, unknown>)[field];
    }
  }
  if (extra) run.extra = extra;
  return run as unknown as Run;
}

/** The `runs` row of a run (as `insertRuns` stores it; the search text is `searchText(run)`). */
export function runColumns(run: Run, project: string) {
  const data = JSON.stringify(run);
  const usage = usageOf(run);
  const metadata = (run.extra?.metadata ?? {}) as Record<string, unknown>;
  return {
    id: run.id,
    trace_id: run.trace_id,
    project: run.session_name ?? project,
    dotted_order: run.dotted_order ?? null,
    start_us: toMicros(run.start_time),
    end_us: run.end_time ? toMicros(run.end_time) : null,
    parent_run_id: run.parent_run_id ?? null,
    name: run.name ?? null,
    // A root's own name; the other runs of its trace get it when the trace is summarized.
    root_name: run.parent_run_id ? null : (run.name ?? null),
    status: run.status ?? (run.error ? 'error' : null),
    model: typeof metadata.ls_model_name === 'string' ? metadata.ls_model_name : null,
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.total,
    cost: usage.cost ?? null,
    bytes: Buffer.byteLength(data),
    provider: typeof metadata.ls_provider === 'string' ? metadata.ls_provider : null,
    cache_read_tokens: usage.cacheRead,
    cache_write_tokens: usage.cacheWrite,
    run_type: run.run_type ?? null,
    // A model call's usage always counts; another run's only as the trace's runs decide (`summarize`).
    counts_usage: run.run_type === 'llm' && reportsUsage(usage) ? 1 : 0,
    // The fields updates have set (`insertOne` fills it in).
    updated: null as string | null,
    data,
  };
}

/** The columns of a trace's summary row that come from its root run (all null before it arrives). */
export function rootColumns(root: Run | undefined) {
  return {
    name: root?.name ?? null,
    status: root ? traceStatus(root) : null,
    root_run_id: root?.id ?? null,
    tags: JSON.stringify(root?.tags ?? []),
    metadata: JSON.stringify(root?.extra?.metadata ?? {}),
    input_preview: root ? preview(root.inputs) : null,
    output_preview: root ? preview(root.outputs) : null,
    thread_id: root ? (threadIdOf(root.extra?.metadata as Record<string, unknown> | undefined) ?? null) : null,
  };
}

function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function encodeCursor(sort: string, order: string, value: number | string, id: string): string {
  return Buffer.from(JSON.stringify([sort, order, value, id])).toString('base64url');
}

function decodeCursor(cursor: string, sort: string, order: string): { value: number | string; id: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('not a cursor this API handed out');
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 4 ||
    (typeof parsed[2] !== 'number' && typeof parsed[2] !== 'string') ||
    typeof parsed[3] !== 'string'
  ) {
    throw new InvalidCursorError('not a cursor this API handed out');
  }
  if (parsed[0] !== sort || parsed[1] !== order) {
    throw new InvalidCursorError(`the cursor belongs to another sort (${parsed[0]} ${parsed[1]})`);
  }
  return { value: parsed[2] as number | string, id: parsed[3] };
}

export interface RunUsage {
  /** Input tokens, the cached ones included. */
  readonly prompt: number;
  readonly completion: number;
  readonly total: number;
  /** Input tokens read from / written to the provider's prompt cache. */
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** The cost the run reported itself (`usage_metadata.total_cost`). */
  readonly cost?: number;
}

/** What decides whether a run's usage counts toward its trace's (`countedUsageRuns`). */
export interface UsageFacts {
  readonly id: string;
  readonly parent_run_id: string | null;
  readonly run_type: string | null;
  /** Whether the run reported tokens or a cost (1 or 0 from SQL). */
  readonly reports: boolean | number;
}

/**
 * The runs of one trace whose usage counts toward its totals and the stats, as LangSmith counts
 * it: the model calls' (run type `llm`). A run around a model call that reports usage too — a
 * `traceable` function returning the model's result unchanged, an OTel GenAI `invoke_agent` span
 * with the turn's `gen_ai.usage.*` — repeats tokens already counted. Only when no model call in the
 * trace reports usage (an app that emits no model spans) do other runs count, and then only the
 * outermost ones: a run whose ancestor reports usage is part of it. Never two runs on one path,
 * so no token is counted twice. `facts` holds the runs that report usage and, for the outermost
 * test, the trace's other runs (only their parents are read).
 */
export function countedUsageRuns(facts: readonly UsageFacts[]): Set<string> {
  const reporting = facts.filter((run) => Boolean(run.reports));
  const models = reporting.filter((run) => run.run_type === 'llm');
  if (models.length > 0) return new Set(models.map((run) => run.id));
  const parentOf = new Map(facts.map((run) => [run.id, run.parent_run_id]));
  const reportingIds = new Set(reporting.map((run) => run.id));
  const outermost = (run: UsageFacts) => {
    const seen = new Set<string>();
    for (let parent = run.parent_run_id; parent && !seen.has(parent); parent = parentOf.get(parent) ?? null) {
      if (reportingIds.has(parent)) return false;
      seen.add(parent);
    }
    return true;
  };
  return new Set(reporting.filter(outermost).map((run) => run.id));
}

/** Whether a run reported any usage (tokens or a cost of its own). */
export function reportsUsage(usage: RunUsage): boolean {
  return usage.total > 0 || usage.cost !== undefined;
}

/** Token counts and a reported cost from `outputs.usage_metadata` (LangChain's usage shape). */
export function usageOf(run: Run): RunUsage {
  const usage = run.outputs?.usage_metadata as Record<string, unknown> | undefined;
  const num = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  if (!usage || typeof usage !== 'object') return { prompt: 0, completion: 0, total: 0, cacheRead: 0, cacheWrite: 0 };
  const prompt = num(usage.input_tokens ?? usage.prompt_tokens);
  const completion = num(usage.output_tokens ?? usage.completion_tokens);
  const total = num(usage.total_tokens) || prompt + completion;
  const details = (usage.input_token_details ?? {}) as Record<string, unknown>;
  const cost = typeof usage.total_cost === 'number' ? usage.total_cost : undefined;
  return {
    prompt,
    completion,
    total,
    cacheRead: num(details.cache_read),
    cacheWrite: num(details.cache_creation),
    ...(cost !== undefined ? { cost } : {}),
  };
}

/** Metadata keys naming the conversation a trace belongs to, by precedence (LangSmith's). */
export const THREAD_KEYS = ['thread_id', 'session_id', 'conversation_id'] as const;
// The same in SQL, over a summary's `metadata` column (for the upgrade of a version 2 file).
const THREAD_ID_SQL = `COALESCE(${THREAD_KEYS.map(
  (key) =>
    `CASE WHEN json_type(metadata, '$.${key}') IN ('integer', 'real') OR json_extract(metadata, '$.${key}') != '' THEN CAST(json_extract(metadata, '$.${key}') AS TEXT) END`,
).join(', ')})`;

/** The conversation id of a root run's metadata: its thread_id, session_id or conversation_id. */
export function threadIdOf(metadata: Record<string, unknown> | undefined): string | undefined {
  for (const key of THREAD_KEYS) {
    const value = metadata?.[key];
    if ((typeof value === 'string' && value !== '') || typeof value === 'number') return String(value);
  }
  return undefined;
}

/**
 * The words a run is found by: its name, error and tags, and the texts inside its inputs, outputs
 * and metadata (text values only: JSON keys such as "role" would match every message, and token
 * counts every number).
 */
export function searchText(run: Run): string {
  const parts: string[] = [run.name ?? '', run.error ?? '', ...(run.tags ?? [])];
  const walk = (value: unknown, depth: number) => {
    if (typeof value === 'string') parts.push(value);
    else if (value && typeof value === 'object' && depth < 64) {
      for (const item of Array.isArray(value) ? value : Object.values(value)) walk(item, depth + 1);
    }
  };
  walk(run.inputs, 0);
  walk(run.outputs, 0);
  walk(run.extra?.metadata, 0);
  return parts.filter((part) => part !== '').join('\n');
}

/**
 * A user's search text as an FTS5 query: each whitespace-separated term a quoted phrase (so that
 * FTS5 syntax in it is plain text) matching words it begins, all terms required; undefined when
 * nothing searchable is left.
 */
export function ftsQuery(text: string): string | undefined {
  const terms = text
    .split(/\s+/)
    .filter((term) => /[\p{L}\p{N}]/u.test(term))
    .map((term) => `"${term.replace(/"/g, '""')}"*`);
  return terms.length > 0 ? terms.join(' ') : undefined;
}

interface ThreadRow {
  thread_id: string;
  project: string;
  turns: number;
  first_us: number;
  last_us: number;
  error_turns: number;
  total_tokens: number;
  duration_us: number;
}

function statsParams(query: StatsQuery): { start: number; end: number; bucket: number; project?: string } {
  return {
    start: query.startUs,
    end: query.endUs,
    bucket: query.bucketUs,
    ...(query.project !== undefined ? { project: query.project } : {}),
  };
}

/**
 * A trace's status, its root run's: `interrupted` when the run stopped at an interrupt (a graph
 * run that paused for a person ends without an error; the agent server marks its root run's
 * metadata), else the run's own status.
 */
function traceStatus(root: Run): string | null {
  const status = root.status ?? (root.error ? 'error' : null);
  const metadata = root.extra?.metadata as Record<string, unknown> | undefined;
  return status === 'success' && metadata?.interrupted === true ? 'interrupted' : status;
}

/**
 * A short text of inputs or outputs: what a run that resumed an interrupt was resumed with, the
 * last message's text, a single text field, or JSON.
 */
function preview(value: Record<string, unknown> | undefined): string | null {
  if (!value) return null;
  // LangGraph's `Command` as a run's input, serialized (`lg_name`): the resume value is the input.
  if (value.lg_name === 'Command' && value.resume !== undefined && value.resume !== null) {
    const resume = value.resume;
    return `Resumed with: ${typeof resume === 'string' ? resume : JSON.stringify(resume)}`.slice(0, 200);
  }
  const lastMessage = (list: unknown) => (Array.isArray(list) && list.length > 0 ? list[list.length - 1] : undefined);
  const messages = value.messages ?? (value.choices as { message?: unknown }[] | undefined)?.map((c) => c?.message);
  const message = lastMessage(Array.isArray(messages) && Array.isArray(messages[0]) ? messages.at(-1) : messages) as
    { content?: unknown } | undefined;
  let text: string | undefined;
  if (message && typeof message === 'object') text = contentText(message.content);
  else {
    const keys = Object.keys(value).filter((key) => key !== 'usage_metadata');
    if (keys.length === 1 && typeof value[keys[0]!] === 'string') text = value[keys[0]!] as string;
    else if (keys.length > 0) text = JSON.stringify(Object.fromEntries(keys.map((key) => [key, value[key]])));
  }
  return text ? text.slice(0, 200) : null;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === 'string' ? part : (part as { text?: unknown })?.text))
      .filter((part) => typeof part === 'string')
      .join('');
  }
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

function summaryOf(row: TraceRow): TraceSummary {
  return {
    traceId: row.trace_id,
    project: row.project,
    startTime: row.start_time,
    runCount: row.run_count,
    errorCount: row.error_count,
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    totalTokens: row.total_tokens,
    tags: JSON.parse(row.tags) as string[],
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    ...(row.name !== null ? { name: row.name } : {}),
    ...(row.status !== null ? { status: row.status } : {}),
    ...(row.end_time !== null ? { endTime: row.end_time } : {}),
    ...(row.duration_us !== null ? { durationMs: row.duration_us / 1000 } : {}),
    ...(row.root_run_id !== null ? { rootRunId: row.root_run_id } : {}),
    ...(row.cost !== null ? { reportedCost: row.cost } : {}),
    ...(row.input_preview !== null ? { inputPreview: row.input_preview } : {}),
    ...(row.output_preview !== null ? { outputPreview: row.output_preview } : {}),
    ...(row.thread_id !== null ? { threadId: row.thread_id } : {}),
    ...(row.model !== null ? { model: row.model } : {}),
  };
}

/** RFC 3339 → integer microseconds since the epoch, keeping sub-millisecond digits. */
export function toMicros(time: string): number {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(time);
  const seconds = match ? Date.parse(`${match[1]}${match[3]}`) : NaN;
  if (!match || Number.isNaN(seconds)) throw new InvalidTimeError(`not an RFC 3339 time: ${JSON.stringify(time)}`);
  const fraction = (match[2] ?? '').padEnd(6, '0').slice(0, 6);
  return seconds * 1000 + Number(fraction);
}

/** Epoch microseconds → RFC 3339 with microseconds. */
export function fromMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  const micros = String(us - ms * 1000).padStart(3, '0');
  return new Date(ms).toISOString().replace(/Z$/, `${micros}Z`);
}
