// Crons: create (threadless, or on a thread), read, update, delete, search and count. A cron keeps
// the run it starts as a `payload` (the create request with the assistant id resolved and
// `config.configurable.cron_id` added); updates merge into it. `next_run_date` is the schedule's
// first match after creation, and is computed again from "now" whenever the schedule, its zone or
// `enabled` changes, so re-enabling a cron never makes up for the ticks it spent disabled.

import type { FromSchema } from 'json-schema-to-ts';
import { v7 as uuid7 } from 'uuid';
import type { AuthContext } from '../auth/custom.ts';
import { matchesAuthFilters, requireWritable } from '../auth/filters.ts';
import type { AuthFilters } from '../auth/filters.ts';
import { invalid, notFound } from '../api/errors.ts';
import { isoOf } from '../api/clock.ts';
import type { Cron, CronQuery, CronRecord, CronSortBy } from '../storage/crons.ts';
import type { JsonObject, Storage } from '../storage/storage.ts';
import { nextRunAfter, scheduleProblem, timezoneProblem } from './schedule.ts';
import type { Clock } from './schedule.ts';
import type { cronCount, cronCreate, cronPatch, cronSearch } from './schemas.ts';

export type CronCreateBody = FromSchema<typeof cronCreate>;
export type CronPatchBody = FromSchema<typeof cronPatch>;
export type CronSearchBody = FromSchema<typeof cronSearch>;
export type CronCountBody = FromSchema<typeof cronCount>;

/** What the custom auth handler decided for a cron's creation (all optional: no auth, no limits). */
export interface CronAccess {
  /** Metadata after the `crons:create` handler (which may stamp an owner). */
  readonly metadata?: JsonObject;
  /** The `crons:create` filter, which a thread cron's thread must pass (else it is a 404). */
  readonly threadVisible?: AuthFilters;
  /** The `assistants:read` filter: an assistant it hides is a 404. */
  readonly assistantVisible?: AuthFilters;
  /** The creator, stamped into every run the cron starts. */
  readonly auth?: AuthContext;
  /** The cron id the handler was shown. */
  readonly cronId?: string;
}

export const cronNotFound = (cronId: string): string => `Cron ${cronId} not found`;

/** The public record (without what only the server uses). */
export function publicCron(cron: CronRecord): Cron {
  const { auth: _auth, ...rest } = cron;
  return rest;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withoutNulls(body: object): JsonObject {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null && value !== undefined));
}

/** Stores `end_time` as the API writes timestamps (so due checks compare like with like). */
function normalizeTime(value: string): string {
  return isoOf(Date.parse(value));
}

function withCronId(config: unknown, cronId: string): JsonObject {
  const base = isObject(config) ? config : {};
  const configurable = isObject(base.configurable) ? base.configurable : {};
  return { ...base, configurable: { ...configurable, cron_id: cronId } };
}

export class Crons {
  constructor(
    private readonly storage: Storage,
    /** An assistant id or a graph id (its system assistant) as an assistant id. */
    private readonly resolveAssistantId: (idOrGraph: string) => string,
    /** Read anew for every call, so tests can move time. */
    private readonly clock: () => Clock,
    private readonly options: {
      /** What is wrong with a webhook URL, or undefined; a problem is a 422. */
      readonly webhookProblem?: (url: string) => string | undefined;
      /** A cron was created or changed: the scheduler may need to wake earlier. */
      readonly onChange?: () => void;
    } = {},
  ) {}

  private checkSchedule(schedule: string, timezone: string | null): void {
    const problem = scheduleProblem(schedule) ?? (timezone !== null ? timezoneProblem(timezone) : undefined);
    if (problem) throw invalid(problem);
  }

  private checkWebhook(webhook: unknown): void {
    if (typeof webhook !== 'string') return;
    const problem = this.options.webhookProblem?.(webhook);
    if (problem) throw invalid(`body.webhook: ${problem}`);
  }

  /** Creates a cron on `threadId`, or a threadless one (a new thread for each run) when undefined. */
  async create(threadId: string | undefined, body: CronCreateBody, access: CronAccess = {}): Promise<CronRecord> {
    const timezone = body.timezone ?? null;
    this.checkSchedule(body.schedule, timezone);
    this.checkWebhook(body.webhook);
    const assistantId = this.resolveAssistantId(body.assistant_id);
    const assistant = await this.storage.assistants.get(assistantId);
    if (!assistant || !matchesAuthFilters(assistant.metadata, access.assistantVisible)) {
      throw notFound(
        `No assistant found for '${body.assistant_id}'. Make sure the assistant ID is for a valid assistant or a valid graph ID.`,
      );
    }
    if (threadId !== undefined) {
      const thread = await this.storage.threads.get(threadId);
      if (!thread || !matchesAuthFilters(thread.metadata, access.threadVisible))
        throw notFound(`Thread with ID ${threadId} not found`);
    }
    const cronId = access.cronId ?? uuid7();
    const nowMs = this.clock().now();
    const now = isoOf(nowMs);
    const metadata = access.metadata ?? (isObject(body.metadata) ? body.metadata : {});
    const payload: JsonObject = {
      ...withoutNulls(body),
      assistant_id: assistantId,
      metadata,
      config: withCronId(body.config, cronId),
    };
    if (threadId !== undefined) delete payload.on_run_completed;
    const cron: CronRecord = {
      cron_id: cronId,
      assistant_id: assistantId,
      thread_id: threadId ?? null,
      on_run_completed: threadId === undefined ? (body.on_run_completed ?? 'delete') : null,
      end_time: body.end_time ? normalizeTime(body.end_time) : null,
      schedule: body.schedule.trim(),
      timezone,
      created_at: now,
      updated_at: now,
      user_id: access.auth?.user.identity ?? null,
      payload,
      next_run_date: nextRunAfter(body.schedule, timezone, nowMs),
      metadata,
      enabled: body.enabled ?? true,
      auth: access.auth ? { user: { ...access.auth.user }, scopes: [...access.auth.scopes] } : null,
    };
    await this.storage.crons.insert(cron);
    this.options.onChange?.();
    return cron;
  }

  /** The cron, if it exists and passes `filters`; 404 otherwise (a hidden cron is a missing one). */
  async get(cronId: string, filters?: AuthFilters): Promise<CronRecord> {
    const cron = await this.storage.crons.get(cronId);
    if (!cron || !matchesAuthFilters(cron.metadata, filters)) throw notFound(cronNotFound(cronId));
    return cron;
  }

  /**
   * Applies the given fields: run fields replace the payload's, `metadata` is merged into the
   * existing metadata, `end_time: null` clears the end time. A new schedule, zone or `enabled`
   * recomputes `next_run_date` from now. `on_run_completed` is ignored on thread crons.
   */
  async update(cronId: string, body: CronPatchBody, filters?: AuthFilters): Promise<CronRecord> {
    const given = Object.entries(body).filter(([, value]) => value !== undefined);
    if (given.length === 0) throw invalid('Request body cannot be empty: give at least one field to change');
    const cron = await this.get(cronId, filters);
    const timezone = body.timezone === undefined ? cron.timezone : body.timezone;
    const schedule = body.schedule ?? cron.schedule;
    if (body.schedule !== undefined || body.timezone !== undefined) this.checkSchedule(schedule, timezone);
    this.checkWebhook(body.webhook);
    const nowMs = this.clock().now();
    const metadata = isObject(body.metadata) ? { ...cron.metadata, ...body.metadata } : cron.metadata;
    requireWritable(metadata, filters);
    const payload: JsonObject = { ...cron.payload };
    for (const [key, value] of given) {
      if (value === null) delete payload[key];
      else payload[key] = value;
    }
    payload.metadata = metadata;
    payload.config = withCronId(payload.config, cron.cron_id);
    payload.schedule = schedule;
    if (cron.thread_id !== null) delete payload.on_run_completed;
    const enabled = body.enabled ?? cron.enabled;
    const reschedule = body.schedule !== undefined || body.timezone !== undefined || enabled !== cron.enabled;
    const next: CronRecord = {
      ...cron,
      schedule: schedule.trim(),
      timezone: timezone ?? null,
      end_time:
        body.end_time === undefined ? cron.end_time : body.end_time === null ? null : normalizeTime(body.end_time),
      on_run_completed:
        cron.thread_id === null && body.on_run_completed ? body.on_run_completed : cron.on_run_completed,
      enabled,
      metadata,
      payload,
      next_run_date: reschedule ? nextRunAfter(schedule, timezone ?? null, nowMs) : cron.next_run_date,
      updated_at: isoOf(nowMs),
    };
    await this.storage.crons.update(next);
    this.options.onChange?.();
    return next;
  }

  async delete(cronId: string, filters?: AuthFilters): Promise<void> {
    await this.get(cronId, filters);
    await this.storage.crons.delete(cronId);
  }

  private query(
    body: CronSearchBody | CronCountBody,
    filters: AuthFilters | undefined,
  ): Omit<CronQuery, 'limit' | 'offset' | 'sort_by' | 'sort_order'> {
    return {
      ...(body?.assistant_id ? { assistant_id: this.resolveAssistantId(body.assistant_id) } : {}),
      ...(body?.thread_id ? { thread_id: body.thread_id } : {}),
      ...(typeof body?.enabled === 'boolean' ? { enabled: body.enabled } : {}),
      ...(isObject(body?.metadata) ? { metadata: body.metadata } : {}),
      ...(filters ? { auth: filters } : {}),
    };
  }

  /** Crons matching the query, and how many match in all. Default order: newest first. */
  async search(body: CronSearchBody, filters?: AuthFilters): Promise<{ items: CronRecord[]; total: number }> {
    return this.storage.crons.search({
      ...this.query(body, filters),
      limit: body?.limit ?? 10,
      offset: body?.offset ?? 0,
      sort_by: (body?.sort_by ?? 'created_at') as CronSortBy,
      sort_order: body?.sort_order?.toLowerCase() === 'asc' ? 'asc' : 'desc',
    });
  }

  async count(body: CronCountBody, filters?: AuthFilters): Promise<number> {
    const page = await this.storage.crons.search({
      ...this.query(body, filters),
      limit: 0,
      offset: 0,
      sort_by: 'created_at',
      sort_order: 'desc',
    });
    return page.total;
  }
}
