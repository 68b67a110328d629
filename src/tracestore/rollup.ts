// The monitoring rollups of the local trace store: per-minute, per-15-minute and per-hour rows that the stats
// (`traceStats`, `usageStats`) read instead of every trace and run of a long range. Kept by
// triggers on `traces` and `runs`, so that every write that changes a trace's summary or a run's
// counted usage — a new run, a re-sent one, a recount, a root name arriving, retention — changes
// the rollups in the same transaction, whichever code path made it.
//
//   trace_rollup: per slot (the trace's start), project, root name and model: traces, traces with
//     a failed run, and a histogram of the finished traces' latencies in logarithmic buckets.
//   usage_rollup: per slot (the run's start), project, root name, model and provider: the sums of
//     the counted usage (`countedUsageRuns`) that `usageStats` reports.
//
// Counts and sums are exact. Latency percentiles from histograms are within LATENCY_ERROR
// (relative) of the latency at their rank; the stats compute them exactly from the traces instead
// while a range holds few enough traces for that to be quick.
//
// A range is answered from the coarsest rollup its buckets allow, its ragged end (after the last
// whole minute) from the raw tables.

import type { Database } from 'better-sqlite3';

/**
 * The slot widths kept, in microseconds, coarsest first: an hour (buckets of 1 h to 7 d), 15
 * minutes (15 min buckets: a day of them reads 96 slots rather than 1,440) and a minute.
 */
export const ROLLUP_WIDTHS_US = [3600_000_000, 900_000_000, 60_000_000] as const;

/** The largest relative error of a latency percentile read from the histograms. */
export const LATENCY_ERROR = 0.01;
// Bucket i ≥ 1 holds latencies in [γ^(i−1), γ^i) µs, read back as 2γ^i / (γ + 1): no latency in
// the bucket is further than (γ − 1) / (γ + 1) = LATENCY_ERROR from it. Bucket 0 holds 0 µs.
const GAMMA = (1 + LATENCY_ERROR) / (1 - LATENCY_ERROR);
const LN_GAMMA = Math.log(GAMMA);

/** The histogram bucket of a latency column, in SQL (the triggers, the rebuild and the raw edge agree). */
const latencyBucket = (us: string) =>
  `(CASE WHEN ${us} IS NULL THEN NULL WHEN ${us} < 1 THEN 0 ELSE CAST(floor(ln(${us}) / ${LN_GAMMA}) AS INTEGER) + 1 END)`;

/** The latency (µs) a histogram bucket is read back as. */
export function bucketLatencyUs(bucket: number): number {
  return bucket <= 0 ? 0 : (2 * GAMMA ** bucket) / (GAMMA + 1);
}

const slot = (width: number, row: string) => `(${row}.start_us / ${width}) * ${width}`;

const TABLES = `
CREATE TABLE IF NOT EXISTS trace_rollup (
  width_us INTEGER NOT NULL,
  slot_us INTEGER NOT NULL,
  project TEXT NOT NULL,
  name TEXT,
  model TEXT,
  traces INTEGER NOT NULL DEFAULT 0,
  errors INTEGER NOT NULL DEFAULT 0,
  latencies TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS trace_rollup_by_slot ON trace_rollup (width_us, slot_us, project, name, model);
CREATE TABLE IF NOT EXISTS usage_rollup (
  width_us INTEGER NOT NULL,
  slot_us INTEGER NOT NULL,
  project TEXT NOT NULL,
  root_name TEXT,
  model TEXT,
  provider TEXT,
  runs INTEGER NOT NULL DEFAULT 0,
  total_tokens INTEGER NOT NULL DEFAULT 0,
  cost REAL NOT NULL DEFAULT 0,
  costed_runs INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS usage_rollup_by_slot ON usage_rollup (width_us, slot_us, project, root_name, model, provider);
`;

// ---- traces → trace_rollup ------------------------------------------------------------------

const traceKey = (width: number, row: string) =>
  `width_us = ${width} AND slot_us = ${slot(width, row)} AND project IS ${row}.project AND name IS ${row}.name AND model IS ${row}.model`;
const latencyPath = (row: string) => `'$."' || ${latencyBucket(`${row}.duration_us`)} || '"'`;

function addTrace(width: number, row: string): string {
  const path = latencyPath(row);
  return `
    INSERT INTO trace_rollup (width_us, slot_us, project, name, model)
      SELECT ${width}, ${slot(width, row)}, ${row}.project, ${row}.name, ${row}.model
      WHERE NOT EXISTS (SELECT 1 FROM trace_rollup WHERE ${traceKey(width, row)});
    UPDATE trace_rollup SET traces = traces + 1, errors = errors + (${row}.error_count > 0),
      latencies = CASE WHEN ${row}.duration_us IS NULL THEN latencies
        ELSE json_set(latencies, ${path}, COALESCE(json_extract(latencies, ${path}), 0) + 1) END
      WHERE ${traceKey(width, row)};`;
}

function removeTrace(width: number, row: string): string {
  const path = latencyPath(row);
  return `
    UPDATE trace_rollup SET traces = traces - 1, errors = errors - (${row}.error_count > 0),
      latencies = CASE WHEN ${row}.duration_us IS NULL THEN latencies
        WHEN json_extract(latencies, ${path}) > 1 THEN json_set(latencies, ${path}, json_extract(latencies, ${path}) - 1)
        ELSE json_remove(latencies, ${path}) END
      WHERE ${traceKey(width, row)};
    DELETE FROM trace_rollup WHERE ${traceKey(width, row)} AND traces <= 0;`;
}

const TRACE_FIELDS = ['start_us', 'project', 'name', 'model', 'error_count', 'duration_us'];

// ---- runs → usage_rollup --------------------------------------------------------------------

/** Whether a run's usage is in the stats: counted, and reporting tokens or a cost. */
const countsIn = (row: string) => `${row}.counts_usage = 1 AND (${row}.total_tokens > 0 OR ${row}.cost IS NOT NULL)`;
const usageKey = (width: number, row: string) =>
  `width_us = ${width} AND slot_us = ${slot(width, row)} AND project IS ${row}.project AND root_name IS ${row}.root_name
   AND model IS ${row}.model AND provider IS ${row}.provider`;
/** The SET list adding (sign +) or removing (sign −) a run's usage. */
const usageSums = (row: string, sign: '+' | '-') => {
  const uncosted = (column: string) => `CASE WHEN ${row}.cost IS NULL THEN ${row}.${column} ELSE 0 END`;
  return `runs = runs ${sign} 1, total_tokens = total_tokens ${sign} ${row}.total_tokens,
    costed_runs = costed_runs ${sign} (${row}.cost IS NOT NULL),
    cost = CASE WHEN costed_runs ${sign} (${row}.cost IS NOT NULL) = 0 THEN 0 ELSE cost ${sign} COALESCE(${row}.cost, 0) END,
    prompt_tokens = prompt_tokens ${sign} ${uncosted('prompt_tokens')},
    completion_tokens = completion_tokens ${sign} ${uncosted('completion_tokens')},
    cache_read_tokens = cache_read_tokens ${sign} ${uncosted('cache_read_tokens')},
    cache_write_tokens = cache_write_tokens ${sign} ${uncosted('cache_write_tokens')}`;
};

function addUsage(width: number, row: string): string {
  return `
    INSERT INTO usage_rollup (width_us, slot_us, project, root_name, model, provider)
      SELECT ${width}, ${slot(width, row)}, ${row}.project, ${row}.root_name, ${row}.model, ${row}.provider
      WHERE ${countsIn(row)} AND NOT EXISTS (SELECT 1 FROM usage_rollup WHERE ${usageKey(width, row)});
    UPDATE usage_rollup SET ${usageSums(row, '+')} WHERE ${countsIn(row)} AND ${usageKey(width, row)};`;
}

function removeUsage(width: number, row: string): string {
  return `
    UPDATE usage_rollup SET ${usageSums(row, '-')} WHERE ${countsIn(row)} AND ${usageKey(width, row)};
    DELETE FROM usage_rollup WHERE ${countsIn(row)} AND ${usageKey(width, row)} AND runs <= 0;`;
}

const USAGE_FIELDS = [
  'start_us',
  'project',
  'root_name',
  'model',
  'provider',
  'counts_usage',
  'total_tokens',
  'cost',
  'prompt_tokens',
  'completion_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
];

const each = (statement: (width: number, row: string) => string, row: string) =>
  ROLLUP_WIDTHS_US.map((width) => statement(width, row)).join('\n');
const changed = (fields: readonly string[]) => fields.map((f) => `OLD.${f} IS NOT NEW.${f}`).join(' OR ');

const TRIGGERS = `
CREATE TRIGGER IF NOT EXISTS trace_rollup_insert AFTER INSERT ON traces BEGIN ${each(addTrace, 'NEW')} END;
CREATE TRIGGER IF NOT EXISTS trace_rollup_delete AFTER DELETE ON traces BEGIN ${each(removeTrace, 'OLD')} END;
CREATE TRIGGER IF NOT EXISTS trace_rollup_update AFTER UPDATE OF ${TRACE_FIELDS.join(', ')} ON traces
  WHEN ${changed(TRACE_FIELDS)}
  BEGIN ${each(removeTrace, 'OLD')} ${each(addTrace, 'NEW')} END;
CREATE TRIGGER IF NOT EXISTS usage_rollup_insert AFTER INSERT ON runs WHEN ${countsIn('NEW')}
  BEGIN ${each(addUsage, 'NEW')} END;
CREATE TRIGGER IF NOT EXISTS usage_rollup_delete AFTER DELETE ON runs WHEN ${countsIn('OLD')}
  BEGIN ${each(removeUsage, 'OLD')} END;
CREATE TRIGGER IF NOT EXISTS usage_rollup_update AFTER UPDATE OF ${USAGE_FIELDS.join(', ')} ON runs
  WHEN ((${countsIn('OLD')}) OR (${countsIn('NEW')})) AND (${changed(USAGE_FIELDS)})
  BEGIN ${each(removeUsage, 'OLD')} ${each(addUsage, 'NEW')} END;
`;

export const ROLLUP_TRIGGERS = [
  'trace_rollup_insert',
  'trace_rollup_delete',
  'trace_rollup_update',
  'usage_rollup_insert',
  'usage_rollup_delete',
  'usage_rollup_update',
];

/** Creates the rollup tables and the triggers that keep them (both idempotent). */
export function createRollups(db: Database): void {
  db.exec(TABLES);
  db.exec(TRIGGERS);
}

/** Recomputes both rollups from the traces and runs (an upgraded file, a bulk load). */
export function rebuildRollups(db: Database): void {
  db.exec('DELETE FROM trace_rollup; DELETE FROM usage_rollup;');
  for (const width of ROLLUP_WIDTHS_US) {
    db.exec(`
      INSERT INTO trace_rollup (width_us, slot_us, project, name, model, traces, errors, latencies)
      SELECT ${width}, slot, project, name, model, SUM(n), SUM(e),
        COALESCE(json_group_object(CAST(bucket AS TEXT), n) FILTER (WHERE bucket IS NOT NULL), '{}')
      FROM (SELECT (start_us / ${width}) * ${width} AS slot, project, name, model,
              ${latencyBucket('duration_us')} AS bucket, COUNT(*) AS n, SUM(error_count > 0) AS e
            FROM traces GROUP BY slot, project, name, model, bucket)
      GROUP BY slot, project, name, model;
      INSERT INTO usage_rollup (width_us, slot_us, project, root_name, model, provider, runs, total_tokens, cost,
        costed_runs, prompt_tokens, completion_tokens, cache_read_tokens, cache_write_tokens)
      SELECT ${width}, (start_us / ${width}) * ${width} AS slot, project, root_name, model, provider, COUNT(*),
        SUM(total_tokens), TOTAL(cost), COUNT(cost),
        SUM(CASE WHEN cost IS NULL THEN prompt_tokens ELSE 0 END),
        SUM(CASE WHEN cost IS NULL THEN completion_tokens ELSE 0 END),
        SUM(CASE WHEN cost IS NULL THEN cache_read_tokens ELSE 0 END),
        SUM(CASE WHEN cost IS NULL THEN cache_write_tokens ELSE 0 END)
      FROM runs WHERE ${countsIn('runs')}
      GROUP BY slot, project, root_name, model, provider;
    `);
  }
}

// ---- reading ---------------------------------------------------------------------------------

/** A part of a stats range and where it is read from: a rollup of this width, or the raw tables. */
export interface RangePart {
  readonly fromUs: number;
  readonly toUs: number;
  readonly widthUs?: number;
}

/**
 * [startUs, endUs) cut into parts each read from the coarsest rollup whose slots lie whole in one
 * bucket (buckets start at startUs and are bucketUs wide), the rest — the time after the last
 * whole minute, or all of a range whose buckets do not fall on minutes — from the raw tables.
 */
export function rangeParts(startUs: number, endUs: number, bucketUs: number): RangePart[] {
  const parts: RangePart[] = [];
  let from = startUs;
  for (const width of ROLLUP_WIDTHS_US) {
    if (startUs % width !== 0 || bucketUs % width !== 0) continue;
    const to = Math.floor(endUs / width) * width;
    if (to > from) {
      parts.push({ fromUs: from, toUs: to, widthUs: width });
      from = to;
    }
  }
  if (from < endUs) parts.push({ fromUs: from, toUs: endUs });
  return parts;
}

/** How many traces a part of the range holds (`project` a filter on the project, or none). */
export function traceCountSql(part: RangePart, project: boolean): string {
  const where = project ? ' AND project = @project' : '';
  return part.widthUs !== undefined
    ? `SELECT TOTAL(traces) FROM trace_rollup
       WHERE width_us = ${part.widthUs} AND slot_us >= ${part.fromUs} AND slot_us < ${part.toUs}${where}`
    : `SELECT COUNT(*) FROM traces INDEXED BY traces_stats WHERE start_us >= ${part.fromUs} AND start_us < ${part.toUs}${where}`;
}

/**
 * The trace figures of a part of the range, one row per rollup row (or raw trace): the bucket,
 * the group (`group` a `traces` column or NULL), traces, failed traces and the latency histogram
 * as JSON (`LatencyHistograms.add`), in that order.
 */
export function traceRollupSql(part: RangePart, group: string, project: boolean): string {
  const where = project ? ' AND project = @project' : '';
  return part.widthUs !== undefined
    ? `SELECT CAST((slot_us - @start) / @bucket AS INTEGER), ${group}, traces, errors, latencies
       FROM trace_rollup WHERE width_us = ${part.widthUs} AND slot_us >= ${part.fromUs} AND slot_us < ${part.toUs}${where}`
    : `SELECT CAST((start_us - @start) / @bucket AS INTEGER), ${group}, 1, error_count > 0,
         CASE WHEN duration_us IS NULL THEN '{}' ELSE json_object(CAST(${latencyBucket('duration_us')} AS TEXT), 1) END
       FROM traces INDEXED BY traces_stats WHERE start_us >= ${part.fromUs} AND start_us < ${part.toUs}${where}`;
}

/** The figures of one bucket and group, merged from its rollup rows. */
export interface MergedTraceFigures {
  readonly bucket: number;
  readonly group: string | null;
  traces: number;
  errors: number;
  /** Finished traces: the sum of the histogram. */
  finished: number;
  /** Finished traces per latency bucket. */
  readonly histogram: Map<number, number>;
}

/**
 * Rollup rows (`traceRollupSql`) merged per bucket and group. A week in hourly slots is ~11,000
 * rows of ~12 histogram buckets each, so the merge must cost little per histogram bucket: the
 * JSON is read by `addHistogram` (12 times less CPU than JSON.parse and a loop over the object's
 * keys). Summing a histogram table with GROUP BY in SQL measured slower still: SQLite hands each
 * (bucket, group, latency) row to JavaScript, ~90,000 of them for a week by root name.
 */
export class LatencyHistograms {
  private readonly cells = new Map<string | null, MergedTraceFigures[]>();

  /** Adds one row of `traceRollupSql`. */
  add(bucket: number, group: string | null, traces: number, errors: number, latencies: string): void {
    let row = this.cells.get(group);
    if (!row) this.cells.set(group, (row = []));
    let cell = row[bucket];
    if (!cell) row[bucket] = cell = { bucket, group, traces: 0, errors: 0, finished: 0, histogram: new Map() };
    cell.traces += traces;
    cell.errors += errors;
    cell.finished += addHistogram(cell.histogram, latencies);
  }

  /** Every bucket and group with traces. */
  *figures(): Generator<MergedTraceFigures> {
    for (const row of this.cells.values()) for (const cell of row) if (cell) yield cell;
  }
}

const ZERO = 48;
const NINE = 57;

/**
 * Adds a rollup's histogram to `histogram` and returns the traces it holds. The text is what the
 * triggers and the rebuild write, a JSON object of latency bucket to count, both non-negative
 * integers (`{"312":4,"318":1}`): its digit runs are read in pairs, key then count.
 */
export function addHistogram(histogram: Map<number, number>, json: string): number {
  let added = 0;
  let i = 0;
  const end = json.length;
  while (i < end) {
    let c = json.charCodeAt(i);
    if (c < ZERO || c > NINE) {
      i++;
      continue;
    }
    let bucket = 0;
    for (; c >= ZERO && c <= NINE; c = json.charCodeAt(++i)) bucket = bucket * 10 + c - ZERO;
    for (c = json.charCodeAt(i); i < end && (c < ZERO || c > NINE); c = json.charCodeAt(++i));
    let count = 0;
    for (; c >= ZERO && c <= NINE; c = json.charCodeAt(++i)) count = count * 10 + c - ZERO;
    histogram.set(bucket, (histogram.get(bucket) ?? 0) + count);
    added += count;
  }
  return added;
}

/**
 * The latencies (ms) at quantiles `qs` (0–1, ascending) of a merged histogram: each the bucket of
 * the trace at the nearest rank; nulls when no trace finished.
 */
export function histogramPercentiles(figures: MergedTraceFigures, qs: readonly number[]): (number | null)[] {
  if (figures.finished === 0) return qs.map(() => null);
  const ranks = qs.map((q) => Math.round(q * (figures.finished - 1)));
  const buckets = [...figures.histogram.keys()].sort((a, b) => a - b);
  const found: number[] = [];
  let seen = 0;
  for (const bucket of buckets) {
    seen += figures.histogram.get(bucket)!;
    while (found.length < ranks.length && seen > ranks[found.length]!) found.push(bucket);
    if (found.length === ranks.length) break;
  }
  return found.map((bucket) => Math.round(bucketLatencyUs(bucket)) / 1000);
}

/**
 * The usage of a part of the range as `usageStats` reports it, per bucket, group (a column of
 * `runs` named alike in the rollup, or NULL), model and provider.
 */
export function usageRollupSql(part: RangePart, group: string, project: boolean): string {
  const where = `${project ? ' AND project = @project' : ''}`;
  if (part.widthUs !== undefined) {
    return `SELECT CAST((slot_us - @start) / @bucket AS INTEGER) AS bucket, ${group} AS grp, model, provider, total_tokens AS total,
        cost, costed_runs AS costed, prompt_tokens AS p, completion_tokens AS c, cache_read_tokens AS cr,
        cache_write_tokens AS cw
      FROM usage_rollup WHERE width_us = ${part.widthUs} AND slot_us >= ${part.fromUs} AND slot_us < ${part.toUs}${where}`;
  }
  return `SELECT CAST((start_us - @start) / @bucket AS INTEGER) AS bucket, ${group} AS grp, model, provider, total_tokens AS total,
      COALESCE(cost, 0) AS cost, cost IS NOT NULL AS costed,
      CASE WHEN cost IS NULL THEN prompt_tokens ELSE 0 END AS p, CASE WHEN cost IS NULL THEN completion_tokens ELSE 0 END AS c,
      CASE WHEN cost IS NULL THEN cache_read_tokens ELSE 0 END AS cr, CASE WHEN cost IS NULL THEN cache_write_tokens ELSE 0 END AS cw
    FROM runs INDEXED BY runs_usage_by_start
    WHERE ${countsIn('runs')} AND start_us >= ${part.fromUs} AND start_us < ${part.toUs}${where}`;
}
