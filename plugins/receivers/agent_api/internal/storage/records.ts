// What both storage backends (the `*/sqlite.ts` and `*/postgres.ts` repositories) share apart
// from their SQL and driver calls: records read from rows and written as statement parameters (the
// column shapes agree; only how JSON and boolean columns travel differs, see `ColumnCodec`). Their
// searches are built once for both in `search-queries.ts`.

import type { CronRecord } from './crons.ts';
import type { Assistant, AssistantVersion, JsonObject, RunRecord, RunStatus, Thread } from './storage.ts';

export type Row = Record<string, unknown>;

/** A value as JSON text (`null` for a missing one). */
export const json = (value: unknown): string => JSON.stringify(value ?? null);
/** A nullable text column's value. */
export const str = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

/** How a backend's JSON and boolean columns are read and written. */
export interface ColumnCodec {
  /** A JSON column's value as read (null for SQL NULL); its type is the record field it fills. */
  readJson<T>(value: unknown): T | null;
  readBool(value: unknown): boolean;
  /** A nullable JSON column's parameter for a value that may be null (threads' values, interrupts). */
  writeNullableJson(value: unknown): unknown;
  writeBool(value: boolean): unknown;
}

/** Maps rows to records and records to statement parameters, in the column order of the statements. */
export class RecordCodec {
  constructor(private readonly c: ColumnCodec) {}

  toAssistant = (row: Row): Assistant => ({
    assistant_id: String(row.assistant_id),
    graph_id: String(row.graph_id),
    name: String(row.name),
    description: str(row.description),
    version: Number(row.version),
    config: this.c.readJson<JsonObject>(row.config) ?? {},
    context: this.c.readJson(row.context),
    metadata: this.c.readJson<JsonObject>(row.metadata) ?? {},
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
  });

  toVersion = (row: Row): AssistantVersion => {
    const { updated_at: _updated, ...assistant } = this.toAssistant({ ...row, updated_at: '' });
    const { assistant_id, version, ...rest } = assistant;
    return { assistant_id, version, ...rest };
  };

  toThread = (row: Row): Thread => ({
    thread_id: String(row.thread_id),
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
    metadata: this.c.readJson<JsonObject>(row.metadata) ?? {},
    status: row.status as Thread['status'],
    config: this.c.readJson<JsonObject>(row.config) ?? {},
    values: this.c.readJson<Thread['values']>(row.state_values),
    interrupts: this.c.readJson<Thread['interrupts']>(row.interrupts),
  });

  toRun = (row: Row): RunRecord => ({
    run_id: String(row.run_id),
    thread_id: String(row.thread_id),
    assistant_id: String(row.assistant_id),
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
    status: row.status as RunStatus,
    metadata: this.c.readJson<JsonObject>(row.metadata) ?? {},
    kwargs: this.c.readJson<RunRecord['kwargs']>(row.kwargs) ?? ({} as RunRecord['kwargs']),
    multitask_strategy: row.multitask_strategy as RunRecord['multitask_strategy'],
    error: this.c.readJson<NonNullable<RunRecord['error']>>(row.error) as RunRecord['error'],
    attempt: Number(row.attempt),
    temporary: this.c.readBool(row.temporary),
  });

  toCron = (row: Row): CronRecord => ({
    cron_id: String(row.cron_id),
    assistant_id: String(row.assistant_id),
    thread_id: str(row.thread_id),
    on_run_completed: str(row.on_run_completed) as CronRecord['on_run_completed'],
    end_time: str(row.end_time),
    schedule: String(row.schedule),
    timezone: str(row.timezone),
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
    user_id: str(row.user_id),
    payload: this.c.readJson<CronRecord['payload']>(row.payload) ?? {},
    next_run_date: str(row.next_run_date),
    metadata: this.c.readJson<CronRecord['metadata']>(row.metadata) ?? {},
    enabled: this.c.readBool(row.enabled),
    auth: this.c.readJson<NonNullable<CronRecord['auth']>>(row.auth),
  });

  /** assistant_id, graph_id, name, description, version, config, context, metadata, created_at, updated_at */
  assistantInsert(a: Assistant): unknown[] {
    return [a.assistant_id, ...this.assistantFields(a), a.created_at, a.updated_at];
  }

  /** graph_id, name, description, version, config, context, metadata, updated_at, assistant_id */
  assistantUpdate(a: Assistant): unknown[] {
    return [...this.assistantFields(a), a.updated_at, a.assistant_id];
  }

  /** assistant_id, version, graph_id, name, description, config, context, metadata, created_at */
  versionInsert(v: AssistantVersion): unknown[] {
    const [graphId, name, description, version, ...objects] = this.assistantFields(v);
    return [v.assistant_id, version, graphId, name, description, ...objects, v.created_at];
  }

  /** graph_id, name, description, version, config, context, metadata */
  private assistantFields(a: AssistantVersion): unknown[] {
    return [a.graph_id, a.name, a.description, a.version, json(a.config), json(a.context), json(a.metadata)];
  }

  /** thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts */
  threadInsert(t: Thread): unknown[] {
    const [updatedAt, ...fields] = this.threadUpdate(t).slice(0, -1);
    return [t.thread_id, t.created_at, updatedAt, ...fields];
  }

  /** updated_at, metadata, status, config, state_values, interrupts, thread_id */
  threadUpdate(t: Thread): unknown[] {
    return [
      t.updated_at,
      json(t.metadata),
      t.status,
      json(t.config),
      this.c.writeNullableJson(t.values),
      this.c.writeNullableJson(t.interrupts),
      t.thread_id,
    ];
  }

  /**
   * run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
   * multitask_strategy, error, attempt, temporary
   */
  runInsert(r: RunRecord): unknown[] {
    const [updatedAt, status, metadata, kwargs, error, attempt] = this.runUpdate(r);
    const ids = [r.run_id, r.thread_id, r.assistant_id, r.created_at];
    return [
      ...ids,
      updatedAt,
      status,
      metadata,
      kwargs,
      r.multitask_strategy,
      error,
      attempt,
      this.c.writeBool(r.temporary),
    ];
  }

  /** updated_at, status, metadata, kwargs, error, attempt, run_id */
  runUpdate(r: RunRecord): unknown[] {
    return [
      r.updated_at,
      r.status,
      json(r.metadata),
      json(r.kwargs),
      r.error ? json(r.error) : null,
      r.attempt,
      r.run_id,
    ];
  }

  /**
   * cron_id, assistant_id, thread_id, on_run_completed, end_time, schedule, timezone, created_at,
   * updated_at, user_id, payload, next_run_date, metadata, enabled, auth
   */
  cronInsert(c: CronRecord): unknown[] {
    const fields = this.cronUpdate(c).slice(0, -1);
    return [c.cron_id, ...fields.slice(0, 6), c.created_at, ...fields.slice(6)];
  }

  /**
   * assistant_id, thread_id, on_run_completed, end_time, schedule, timezone, updated_at, user_id,
   * payload, next_run_date, metadata, enabled, auth, cron_id
   */
  cronUpdate(c: CronRecord): unknown[] {
    return [
      c.assistant_id,
      c.thread_id,
      c.on_run_completed,
      c.end_time,
      c.schedule,
      c.timezone,
      c.updated_at,
      c.user_id,
      json(c.payload),
      c.next_run_date,
      json(c.metadata),
      this.c.writeBool(c.enabled),
      c.auth ? json(c.auth) : null,
      c.cron_id,
    ];
  }
}

/** A run as a claim starts it: running, one more attempt. */
export function claimedRun(run: RunRecord, now: string): RunRecord {
  run.status = 'running';
  run.attempt += 1;
  run.updated_at = now;
  return run;
}
