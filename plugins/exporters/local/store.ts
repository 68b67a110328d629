// The local trace store: runs kept in one SQLite file (better-sqlite3), indexed for the two
// questions a trace viewer asks — "the latest traces of a project" and "every run of this trace" —
// plus a per-trace summary row kept up to date as runs arrive, so that listing never scans runs.
//
// Times are stored as integer microseconds since the epoch: RFC 3339 texts with a variable number
// of fraction digits (`…00.5Z` vs `…00Z`) do not sort as text.

import Database from 'better-sqlite3';
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import type { Run } from '../../../src/model/runs.ts';

export interface TraceSummary {
  readonly traceId: string;
  readonly project: string;
  /** The root run's name; undefined until the root arrives. */
  readonly name?: string;
  readonly status?: string;
  /** Earliest run start and latest run end (RFC 3339). */
  readonly startTime: string;
  readonly endTime?: string;
  readonly runCount: number;
  readonly rootRunId?: string;
}

export interface ListTracesQuery {
  readonly project?: string;
  /** At most this many (default 50, at most 1000). */
  readonly limit?: number;
  /** Only traces that started strictly before this RFC 3339 time: the cursor of the next page. */
  readonly before?: string;
}

export interface StoredTrace {
  readonly summary: TraceSummary;
  /** Every run of the trace, parents before children (by dotted_order, then start time). */
  readonly runs: Run[];
}

/** A time the store cannot order (not RFC 3339). */
export class InvalidTimeError extends Error {
  override readonly name = 'InvalidTimeError';
}

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
`;

interface TraceRow {
  trace_id: string;
  project: string;
  name: string | null;
  status: string | null;
  root_run_id: string | null;
  start_time: string;
  end_time: string | null;
  run_count: number;
}

export class LocalTraceStore {
  private readonly db: SqliteDatabase;
  private readonly existingRun: Statement<[string]>;
  private readonly upsertRun: Statement;
  private readonly upsertTrace: Statement;
  private readonly insertMany: (runs: readonly Run[], project: string) => void;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    this.existingRun = this.db.prepare('SELECT 1 FROM runs WHERE id = ?');
    this.upsertRun = this.db.prepare(`
      INSERT INTO runs (id, trace_id, project, dotted_order, start_us, data)
      VALUES (@id, @trace_id, @project, @dotted_order, @start_us, @data)
      ON CONFLICT (id) DO UPDATE SET trace_id = excluded.trace_id, project = excluded.project,
        dotted_order = excluded.dotted_order, start_us = excluded.start_us, data = excluded.data`);
    // A root run names the trace; any run widens its time span. `added` is 0 for a re-sent run.
    this.upsertTrace = this.db.prepare(`
      INSERT INTO traces (trace_id, project, name, status, root_run_id, start_us, start_time, end_us, end_time, run_count)
      VALUES (@trace_id, @project, @name, @status, @root_run_id, @start_us, @start_time, @end_us, @end_time, @added)
      ON CONFLICT (trace_id) DO UPDATE SET
        name = COALESCE(excluded.name, traces.name),
        status = COALESCE(excluded.status, traces.status),
        root_run_id = COALESCE(excluded.root_run_id, traces.root_run_id),
        start_time = CASE WHEN excluded.start_us < traces.start_us THEN excluded.start_time ELSE traces.start_time END,
        start_us = MIN(traces.start_us, excluded.start_us),
        end_time = CASE WHEN traces.end_us IS NULL OR excluded.end_us > traces.end_us THEN excluded.end_time ELSE traces.end_time END,
        end_us = MAX(COALESCE(traces.end_us, excluded.end_us), COALESCE(excluded.end_us, traces.end_us)),
        run_count = traces.run_count + excluded.run_count`);
    this.insertMany = this.db.transaction((runs: readonly Run[], project: string) => {
      for (const run of runs) this.insertOne(run, project);
    });
  }

  /** Stores runs (a re-sent run replaces its earlier copy), all or none. */
  insertRuns(runs: readonly Run[], project: string): void {
    this.insertMany(runs, project);
  }

  listTraces(query: ListTracesQuery = {}): TraceSummary[] {
    const limit = Math.min(Math.max(Math.trunc(query.limit ?? 50), 1), 1000);
    const conditions: string[] = [];
    const params: Record<string, unknown> = { limit };
    if (query.project !== undefined) {
      conditions.push('project = @project');
      params.project = query.project;
    }
    if (query.before !== undefined) {
      conditions.push('start_us < @before');
      params.before = toMicros(query.before);
    }
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const rows = this.db
      .prepare(`SELECT * FROM traces ${where} ORDER BY start_us DESC LIMIT @limit`)
      .all(params) as TraceRow[];
    return rows.map(summaryOf);
  }

  getTrace(traceId: string): StoredTrace | undefined {
    const row = this.db.prepare('SELECT * FROM traces WHERE trace_id = ?').get(traceId) as TraceRow | undefined;
    if (!row) return undefined;
    const runs = (
      this.db.prepare('SELECT data FROM runs WHERE trace_id = ? ORDER BY dotted_order, start_us').all(traceId) as {
        data: string;
      }[]
    ).map((r) => JSON.parse(r.data) as Run);
    return { summary: summaryOf(row), runs };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private insertOne(run: Run, project: string): void {
    const startUs = toMicros(run.start_time);
    const endUs = run.end_time ? toMicros(run.end_time) : null;
    const runProject = run.session_name ?? project;
    const isRoot = !run.parent_run_id;
    const added = this.existingRun.get(run.id) ? 0 : 1;
    this.upsertRun.run({
      id: run.id,
      trace_id: run.trace_id,
      project: runProject,
      dotted_order: run.dotted_order ?? null,
      start_us: startUs,
      data: JSON.stringify(run),
    });
    this.upsertTrace.run({
      trace_id: run.trace_id,
      project: runProject,
      name: isRoot ? run.name : null,
      status: isRoot ? (run.status ?? null) : null,
      root_run_id: isRoot ? run.id : null,
      start_us: startUs,
      start_time: run.start_time,
      end_us: endUs,
      end_time: run.end_time ?? null,
      added,
    });
  }
}

function summaryOf(row: TraceRow): TraceSummary {
  return {
    traceId: row.trace_id,
    project: row.project,
    startTime: row.start_time,
    runCount: row.run_count,
    ...(row.name !== null ? { name: row.name } : {}),
    ...(row.status !== null ? { status: row.status } : {}),
    ...(row.end_time !== null ? { endTime: row.end_time } : {}),
    ...(row.root_run_id !== null ? { rootRunId: row.root_run_id } : {}),
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
