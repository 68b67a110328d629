// The storage contract of the agent server: one repository per resource — assistants with their
// versions, threads, runs and their queue, crons and their ticks — and `transaction`, which hands
// the same repositories to a function whose calls commit together. Every operation is async, so
// that a networked database (PostgreSQL) implements the same contract as the embedded one.
// Checkpoints and the store are not here: they belong to LangGraph's checkpointer and store, opened
// beside this storage. Each repository has its SQLite and PostgreSQL implementation side by side
// (`threads/sqlite.ts`, `threads/postgres.ts`, ...), composed by `sqlite.ts` and `postgres.ts`;
// `testing/storage-contract.ts` holds the cases every implementation must pass.

import type { AuthFilters } from '../auth/filters.ts';
import type { ApiStreamMode } from '../api/stream-modes.ts';
import type { CronQuery, CronRecord } from './crons.ts';

/** A JSON object as stored: plain data only, never class instances. */
export type JsonObject = Record<string, unknown>;

export type ThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error';
export type RunStatus = 'pending' | 'running' | 'success' | 'error' | 'timeout' | 'interrupted';
export type MultitaskStrategy = 'reject' | 'interrupt' | 'rollback' | 'enqueue';

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  version: number;
  config: JsonObject;
  context: unknown;
  metadata: JsonObject;
  created_at: string;
  updated_at: string;
}

export interface AssistantVersion {
  assistant_id: string;
  version: number;
  graph_id: string;
  name: string;
  description: string | null;
  config: JsonObject;
  context: unknown;
  metadata: JsonObject;
  created_at: string;
}

export interface Thread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: JsonObject;
  status: ThreadStatus;
  config: JsonObject;
  /** The values of the last checkpoint a finished run (or a state update) left; null before any. */
  values: JsonObject | null;
  /** Pending interrupts of the last checkpoint by task id; null when none. */
  interrupts: JsonObject | null;
}

/** A `Command` to resume or steer a graph, as a run's creation request sends it. */
export interface RunCommand {
  resume?: unknown;
  update?: unknown;
  goto?: unknown;
}

/**
 * The run parameters kept with a run (`kwargs`), as the spec lists them. Written whole when the
 * run is created (`RunService.create`) and read by the worker that executes it.
 */
export interface RunKwargs {
  input: unknown;
  command: RunCommand | null;
  config: JsonObject & { configurable: JsonObject; metadata: JsonObject; tags?: string[]; recursion_limit?: number };
  context: unknown;
  stream_mode: ApiStreamMode[];
  interrupt_before: '*' | string[] | null;
  interrupt_after: '*' | string[] | null;
  webhook: string | null;
  feedback_keys: string[] | null;
  temporary: boolean;
  subgraphs: boolean;
  resumable: boolean;
  /**
   * Started through the thread protocol (`/threads/{id}/stream/events`): the graph streams as
   * LangGraph's protocol streaming does (`version: "v3"`), whose `messages` are message lifecycle
   * events (`message-start`, `content-block-*`, `message-finish`) rather than chunks. Absent on
   * other runs.
   */
  protocol?: boolean;
}

export interface Run {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatus;
  metadata: JsonObject;
  kwargs: RunKwargs;
  multitask_strategy: MultitaskStrategy;
}

/** What the server keeps about a run besides its public record. */
export interface RunRecord extends Run {
  /** The error of a failed run, `{error: <class name>, message}`; null otherwise. */
  error: { error: string; message: string } | null;
  /** How many times a worker has started this run. */
  attempt: number;
  /** The thread was created for this run alone and is deleted when it ends. */
  temporary: boolean;
}

export interface Page<T> {
  items: T[];
  /**
   * Every match when `limit` is 0 (a count) or the page ends the matches; else `offset + limit + 1`:
   * there are more (the hosted server's `X-Pagination-Total`; `search-queries.ts` says why).
   */
  total: number;
}

export interface AssistantQuery {
  graph_id?: string;
  /** Case-insensitive substring of the name. */
  name?: string;
  /** Every key must be present and equal (recursively) in the assistant's metadata. */
  metadata?: JsonObject;
  /** The custom auth handler's filter on the metadata (`matchesAuthFilters`); none: all. */
  auth?: AuthFilters;
  limit: number;
  offset: number;
  sort_by: 'assistant_id' | 'graph_id' | 'name' | 'created_at' | 'updated_at';
  sort_order: 'asc' | 'desc';
}

export interface ThreadQuery {
  ids?: string[];
  metadata?: JsonObject;
  values?: JsonObject;
  status?: ThreadStatus;
  /** The custom auth handler's filter on the metadata (`matchesAuthFilters`); none: all. */
  auth?: AuthFilters;
  limit: number;
  offset: number;
  sort_by: 'thread_id' | 'status' | 'created_at' | 'updated_at';
  sort_order: 'asc' | 'desc';
}

export interface RunQuery {
  status?: RunStatus;
  metadata?: JsonObject;
  limit: number;
  offset: number;
}

/**
 * Assistants and their versions. Inside `Storage.transaction`, `lock` makes the transaction's
 * changes to the assistant "as if one at a time" with every other transaction's: call it before the
 * first read of an assistant that the transaction then writes (its versions included). Outside a
 * transaction it does nothing.
 */
export interface AssistantRepository {
  lock(assistantId: string): Promise<void>;
  get(assistantId: string): Promise<Assistant | undefined>;
  /** Inserts the assistant and its version row `assistant.version`. */
  insert(assistant: Assistant): Promise<void>;
  /** Replaces the assistant row (the active version and its fields). */
  update(assistant: Assistant): Promise<void>;
  /** Deletes the assistant, all its versions, its runs and its crons. */
  delete(assistantId: string): Promise<boolean>;
  search(query: AssistantQuery): Promise<Page<Assistant>>;
  insertVersion(version: AssistantVersion): Promise<void>;
  getVersion(assistantId: string, version: number): Promise<AssistantVersion | undefined>;
  /** Highest version number ever created for the assistant (0 when none). */
  maxVersion(assistantId: string): Promise<number>;
  listVersions(
    assistantId: string,
    query: { metadata?: JsonObject; limit: number; offset: number },
  ): Promise<AssistantVersion[]>;
}

/**
 * Threads. A transaction needs no lock call for them: its first operation on a thread makes the
 * transaction "as if one at a time" with every other one on that thread.
 */
export interface ThreadRepository {
  get(threadId: string): Promise<Thread | undefined>;
  insert(thread: Thread): Promise<void>;
  update(thread: Thread): Promise<void>;
  /** Deletes the thread, its runs and its crons. */
  delete(threadId: string): Promise<boolean>;
  search(query: ThreadQuery): Promise<Page<Thread>>;
  /** Ids of threads whose metadata holds `assistant_id`. */
  idsOfAssistant(assistantId: string): Promise<string[]>;
}

/** Runs, their queue and their leases. */
export interface RunRepository {
  get(runId: string): Promise<RunRecord | undefined>;
  insert(run: RunRecord): Promise<void>;
  update(run: RunRecord): Promise<void>;
  delete(runId: string): Promise<boolean>;
  /** Runs of a thread, oldest first. */
  list(threadId: string, query: RunQuery): Promise<RunRecord[]>;
  /** Runs of a thread that are `pending` or `running`, oldest first. */
  inflight(threadId: string): Promise<RunRecord[]>;
  /** Runs in `status`, oldest first (e.g. the `pending` runs a restarted server resumes). */
  withStatus(status: RunStatus): Promise<RunRecord[]>;
  /**
   * Picks the oldest `pending` run due at `now` whose thread has no `running` run and whose id is
   * not in `exclude`, marks it `running`, counts an attempt and gives `owner` a lease on it until
   * `now + leaseMs`, all in one step. Runs of one thread therefore execute one at a time, in order.
   */
  claimNext(owner: string, leaseMs: number, now: string, exclude: ReadonlySet<string>): Promise<RunRecord | undefined>;
  /**
   * Extends to `now + leaseMs` the leases `owner` holds on the `running` runs among `runIds`, and
   * returns the ids it extended. A run missing from the answer is no longer the owner's to execute:
   * it ended, was deleted, or its lease expired and `reclaimExpired` settled it.
   */
  renewLeases(owner: string, runIds: readonly string[], leaseMs: number, now: string): Promise<string[]>;
  /**
   * The restart rule, applied to the `running` runs whose lease has expired at `now` (or that have
   * none recorded: claimed by a server older than leases), or to every `running` run with
   * `everyLease` (one server per database, starting: whoever held them is gone): each is marked
   * `error` with `error`, its lease dropped, and returned. Threads are left to the caller (call it
   * inside `Storage.transaction` to settle them in the same commit). Of any number of callers —
   * in this process or in others sharing the database — each run is returned to exactly one.
   */
  reclaimExpired(
    now: string,
    error: { error: string; message: string },
    options?: { everyLease?: boolean },
  ): Promise<RunRecord[]>;
  /** The earliest `created_at` among pending runs that are not due yet, to schedule a wake-up. */
  nextDue(now: string): Promise<string | undefined>;
}

/** Crons and their ticks. */
export interface CronRepository {
  get(cronId: string): Promise<CronRecord | undefined>;
  insert(cron: CronRecord): Promise<void>;
  /** Replaces every field of the cron row. */
  update(cron: CronRecord): Promise<void>;
  delete(cronId: string): Promise<boolean>;
  search(query: CronQuery): Promise<Page<CronRecord>>;
  /**
   * Crons due at `now`: enabled, `next_run_date <= now`, and `end_time` unset or `>= now`; earliest
   * first, at most `limit`.
   */
  due(now: string, limit: number): Promise<CronRecord[]>;
  /** The earliest `next_run_date` of an enabled cron not past its `end_time` (to schedule the next wake-up). */
  earliestRun(): Promise<string | undefined>;
  /**
   * Claims the tick of `cronId` that was due at `expected`: sets `next_run_date` to `next` (and
   * `updated_at` to `now`) only if the cron still exists, is enabled and its `next_run_date` still
   * equals `expected`. Returns whether it did. Of any number of callers passing the same `expected`
   * — in this process or in others sharing the database — exactly one gets true: the conditional
   * update is a compare-and-set on the row. Called inside `Storage.transaction` together with the
   * insertion of the run, the tick and its run commit together or not at all.
   */
  claimTick(cronId: string, expected: string, next: string | null, now: string): Promise<boolean>;
}

/** Which tables `StorageOps.truncate` empties. */
export interface TruncateTables {
  runs?: boolean;
  threads?: boolean;
  assistants?: boolean;
}

/**
 * The storage's repositories, one per resource, the same outside and inside a transaction (grouped
 * as `@langchain/langgraph-api` groups its `Ops`). Every method is atomic on its own; several calls
 * are atomic together only inside `Storage.transaction`. Absent rows come back as `undefined`.
 */
export interface StorageOps {
  readonly assistants: AssistantRepository;
  readonly threads: ThreadRepository;
  readonly runs: RunRepository;
  readonly crons: CronRepository;
  /** Empties the named tables; assistants keeps those whose ids are in `keepAssistants`. */
  truncate(what: TruncateTables, keepAssistants: ReadonlySet<string>): Promise<void>;
}

/** The storage: its repositories, each operation atomic on its own, and transactions over the same. */
export interface Storage extends StorageOps {
  /**
   * Runs `fn` with the repositories of one transaction: all of its writes commit together, or none
   * do when it throws (the error is rethrown). Transactions are serializable: the outcome is as if
   * they ran one at a time, so `fn` may read, decide and write without another caller's writes
   * slipping in between (SQLite runs them one at a time; a networked backend must lock or retry to
   * keep this). Inside `fn`, use `tx` only: the storage's own repositories run outside the
   * transaction, and with SQLite wait until it ends.
   *
   * "One at a time" holds per thread and per assistant, not per database: SQLite runs every
   * transaction alone; PostgreSQL locks the row of each thread a transaction touches, from its first
   * operation on it, and of each assistant it names with `assistants.lock` (or reads: shared). A transaction may therefore run again
   * from the start when two of them wait for each other (a deadlock PostgreSQL breaks), so `fn`
   * must do nothing but storage operations and what follows from them.
   */
  transaction<T>(fn: (tx: StorageOps) => Promise<T>): Promise<T>;
  /** Closes the database. Idempotent. */
  close(): Promise<void>;
}

/**
 * When a lease taken or renewed at `now` for `leaseMs` expires: ISO 8601 in UTC written as `now`
 * is (`Z` or `+00:00`), so that the two compare as strings.
 */
export function leaseExpiry(now: string, leaseMs: number): string {
  const expiry = new Date(Date.parse(now) + leaseMs).toISOString();
  return now.endsWith('Z') ? expiry : expiry.replace('Z', '+00:00');
}
