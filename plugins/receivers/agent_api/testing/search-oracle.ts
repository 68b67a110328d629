// The searches as the storage answered them before they ran in SQL: every row read, then filtered,
// sorted and paged in process. Kept only as the oracle of `search-oracle.test.ts`, which checks on
// random data and random queries that both databases answer every search exactly as this does.

import { matchesAuthFilters } from '../internal/auth/filters.ts';
import type { CronQuery, CronRecord } from '../internal/storage/crons.ts';
import { containsJson } from '../internal/storage/json-match.ts';
import type {
  Assistant,
  AssistantQuery,
  AssistantVersion,
  JsonObject,
  Page,
  RunQuery,
  RunRecord,
  Thread,
  ThreadQuery,
} from '../internal/storage/storage.ts';

/** Assistants, threads and runs order by their text (byte order, as PostgreSQL's `COLLATE "C"`). */
function compare(a: unknown, b: unknown): number {
  return a === b ? 0 : String(a) < String(b) ? -1 : 1;
}

/** Crons order case-insensitively, missing values first (then by the exact text, for a total order). */
function compareCron(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  const [lowerA, lowerB] = [String(a).toLowerCase(), String(b).toLowerCase()];
  if (lowerA !== lowerB) return lowerA < lowerB ? -1 : 1;
  return compare(a, b);
}

function sortedPage<T>(
  rows: T[],
  query: { sort_by: keyof T; sort_order: 'asc' | 'desc'; limit: number; offset: number },
  id: keyof T,
  order: (a: unknown, b: unknown) => number,
): Page<T> {
  const sign = query.sort_order === 'asc' ? 1 : -1;
  rows.sort((a, b) => sign * order(a[query.sort_by], b[query.sort_by]) || sign * order(a[id], b[id]));
  // Every match for a count (limit 0); a page reports at most one more than it reaches.
  const total = query.limit === 0 ? rows.length : Math.min(rows.length, query.offset + query.limit + 1);
  return { items: rows.slice(query.offset, query.offset + query.limit), total };
}

const hasMetadata = (record: { metadata: JsonObject }, metadata: JsonObject | undefined): boolean =>
  !metadata || containsJson(record.metadata, metadata);

/** The page of `versions` (newest first) whose metadata matches. */
export function versionsPage(
  versions: AssistantVersion[],
  query: { metadata?: JsonObject; limit: number; offset: number },
): AssistantVersion[] {
  return versions.filter((v) => hasMetadata(v, query.metadata)).slice(query.offset, query.offset + query.limit);
}

/** The page of `runs` (in order) whose status and metadata match. */
export function runsPage(runs: RunRecord[], query: RunQuery): RunRecord[] {
  return runs
    .filter((r) => query.status === undefined || r.status === query.status)
    .filter((r) => hasMetadata(r, query.metadata))
    .slice(query.offset, query.offset + query.limit);
}

/** The search's page of `assistants`. */
export function assistantsPage(assistants: Assistant[], query: AssistantQuery): Page<Assistant> {
  const rows = assistants
    .filter((a) => query.graph_id === undefined || a.graph_id === query.graph_id)
    .filter((a) => query.name === undefined || a.name.toLowerCase().includes(query.name.toLowerCase()))
    .filter((a) => hasMetadata(a, query.metadata))
    .filter((a) => matchesAuthFilters(a.metadata, query.auth));
  return sortedPage(rows, query, 'assistant_id', compare);
}

/** The search's page of `threads`. */
export function threadsPage(threads: Thread[], query: ThreadQuery): Page<Thread> {
  const rows = threads
    .filter((t) => query.status === undefined || t.status === query.status)
    .filter((t) => !query.ids || query.ids.includes(t.thread_id))
    .filter((t) => hasMetadata(t, query.metadata))
    // Unlike the reference server, a values filter never matches a thread that has no values.
    .filter((t) => !query.values || containsJson(t.values, query.values))
    .filter((t) => matchesAuthFilters(t.metadata, query.auth));
  return sortedPage(rows, query, 'thread_id', compare);
}

/** The search's page of `crons`. */
export function cronsPage(crons: CronRecord[], query: CronQuery): Page<CronRecord> {
  const rows = crons
    .filter((c) => query.assistant_id === undefined || c.assistant_id === query.assistant_id)
    .filter((c) => query.thread_id === undefined || c.thread_id === query.thread_id)
    .filter((c) => query.enabled === undefined || c.enabled === query.enabled)
    .filter((c) => hasMetadata(c, query.metadata))
    .filter((c) => matchesAuthFilters(c.metadata, query.auth));
  return sortedPage(rows, query, 'cron_id', compareCron);
}
