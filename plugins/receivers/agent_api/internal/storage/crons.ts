// The records of crons: scheduled runs of an assistant, on one thread or on a new thread each
// time. Their operations are part of `StorageOps` (`storage.ts`), so that a cron's tick can be
// claimed in the same transaction that inserts the run it starts (see `claimCronTick`).

import type { AuthFilters } from '../auth/filters.ts';
import type { JsonObject, Page } from './storage.ts';

export interface Cron {
  cron_id: string;
  assistant_id: string;
  /** The thread every run goes to; null: a new thread for each run (a threadless cron). */
  thread_id: string | null;
  /** Threadless crons: `delete` (the default) deletes each run's thread when it ends. Null for thread crons. */
  on_run_completed: 'delete' | 'keep' | null;
  /** After this time the cron starts no more runs (it stays until deleted). */
  end_time: string | null;
  /** A 5-field cron expression. */
  schedule: string;
  /** IANA zone the schedule is read in; null: UTC. */
  timezone: string | null;
  created_at: string;
  updated_at: string;
  /** Identity of the user who created it (custom auth), else null. */
  user_id: string | null;
  /** What each run is created from: the create request, resolved (assistant id) and merged by updates. */
  payload: JsonObject;
  /** When the next run is due; null when the schedule has no further match. */
  next_run_date: string | null;
  metadata: JsonObject;
  enabled: boolean;
}

/** What the server keeps about a cron besides its public record. */
export interface CronRecord extends Cron {
  /** The creator as the custom auth handler authenticated it, stamped into each run; null without one. */
  auth: { user: JsonObject & { identity: string }; scopes: string[] } | null;
}

export type CronSortBy =
  'cron_id' | 'assistant_id' | 'thread_id' | 'next_run_date' | 'end_time' | 'created_at' | 'updated_at';

export interface CronQuery {
  assistant_id?: string;
  thread_id?: string;
  enabled?: boolean;
  /** Every key must be present and equal (recursively) in the cron's metadata. */
  metadata?: JsonObject;
  /** The custom auth handler's filter on the metadata (`matchesAuthFilters`); none: all. */
  auth?: AuthFilters;
  limit: number;
  offset: number;
  sort_by: CronSortBy;
  sort_order: 'asc' | 'desc';
}
