// The checkpoint database: LangGraph's checkpointer plus the thread-level operations the API needs
// and the checkpointer lacks (copy a thread, drop one run's checkpoints after a rollback, patch the
// latest checkpoint's metadata, empty everything for `/internal/truncate`). `CheckpointDatabase`
// is the one interface the domain sees; this file holds the SQLite one (its own file, LangGraph's
// `SqliteSaver`), `checkpoints-postgres.ts` the PostgreSQL one (`PostgresSaver`).

import type { Database as SqliteDatabase } from 'better-sqlite3';
import type { RunnableConfig } from '@langchain/core/runnables';
import { copyCheckpoint } from '@langchain/langgraph';
import type { BaseCheckpointSaver, Checkpoint, CheckpointMetadata } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { openSqliteFile } from './sqlite-file.ts';
import type { OpenedSqliteFile } from './sqlite-file.ts';
import { RunWriteFence, runOfWrite } from './write-fence.ts';
import { CommitBatch } from './commit-batch.ts';
import { SPECIAL_WRITE_INDEX, WrittenCheckpoints } from './written-checkpoints.ts';

/** The checkpointer and the thread-level operations on its tables. */
export interface CheckpointDatabase {
  /** LangGraph's checkpointer, handed to every graph. */
  readonly saver: BaseCheckpointSaver;
  /** Deletes every checkpoint and pending write of the thread. */
  deleteThread(threadId: string): Promise<void>;
  /** Copies every checkpoint and pending write of `from` to the (new, empty) thread `to`. */
  copyThread(from: string, to: string): Promise<void>;
  /**
   * Deletes the checkpoints a run wrote (their metadata carries its `run_id`), so that the thread
   * is back where it was before the run: what `rollback` promises. The run's writes still under
   * way in this process end first, and any it attempts afterwards are dropped (`write-fence.ts`).
   * Returns how many.
   */
  deleteRunCheckpoints(threadId: string, runId: string): Promise<number>;
  /**
   * Merges `metadata` into the metadata of the thread's latest root checkpoint, without writing a
   * new checkpoint. Returns false when the thread has no checkpoint.
   */
  patchLatestMetadata(threadId: string, metadata: Record<string, unknown>): Promise<boolean>;
  /** Deletes every checkpoint of every thread (`/internal/truncate`). */
  truncate(): Promise<void>;
  /**
   * The config for `graph.getState()` of the thread after the run `runId` ended there: one that
   * hands LangGraph the checkpoint tuple the run last wrote, when this process kept it
   * (`written-checkpoints.ts`), so that it is not read back and deserialised again; otherwise the
   * thread's address, read as usual. Absent where the checkpoints are not only this process's.
   */
  stateAfterRun?(threadId: string, runId: string): RunnableConfig;
  /** Idempotent. */
  close(): Promise<void>;
  /**
   * Registers `listener`, called after each write to a thread's checkpoints or pending writes
   * (undefined: every thread's). Only where this process is the only writer (SQLite: one server per
   * file), so that what it read stays current until it is told otherwise; absent where other
   * processes write too (PostgreSQL).
   */
  onChange?(listener: (threadId: string | undefined) => void): void;
}

/** Where LangGraph looks for a checkpointer a config lends a graph (its `CONFIG_KEY_CHECKPOINTER`). */
export const LENT_CHECKPOINTER = '__pregel_checkpointer';

/** Configurable keys that address a checkpoint rather than describe the run. */
const ADDRESS_KEYS = new Set(['checkpoint_id', 'checkpoint_ns', 'checkpoint_map', 'thread_ts']);

function isScalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/**
 * The checkpoint metadata the server writes: the run's metadata (its ids, the request's metadata)
 * and plain `configurable` values, under LangGraph's own `metadata`. Every checkpointer's `put`
 * goes through this, so that state and history show and filter them alike on every backend.
 */
export function serverCheckpointMetadata(config: RunnableConfig, metadata: CheckpointMetadata): CheckpointMetadata {
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config.configurable ?? {})) {
    if (!key.startsWith('__') && !ADDRESS_KEYS.has(key) && isScalar(value)) extra[key] = value;
  }
  for (const [key, value] of Object.entries(config.metadata ?? {})) {
    if (!key.startsWith('langgraph_') && !key.startsWith('__') && value !== undefined && typeof value !== 'function')
      extra[key] = value;
  }
  return { ...extra, ...metadata } as CheckpointMetadata;
}

/** What a checkpointer's `put` answers: the address of the checkpoint written. */
export function checkpointAddress(config: RunnableConfig, checkpoint: Checkpoint): RunnableConfig {
  const { thread_id, checkpoint_ns } = config.configurable ?? {};
  return { configurable: { thread_id, checkpoint_ns: checkpoint_ns ?? '', checkpoint_id: checkpoint.id } };
}

/**
 * The SQLite checkpointer, writing the run's metadata (its ids, the request's metadata) and plain
 * `configurable` values into each checkpoint's metadata, as the API's state and history show and
 * filter them, and as rollback uses them to find a run's checkpoints.
 */
class ServerCheckpointSaver extends SqliteSaver {
  /** Told after each write, with the thread written. */
  changed: (threadId: string | undefined) => void = () => {};
  readonly fence = new RunWriteFence();
  /** What each run last wrote at its thread's root, until its state is read (`stateAfterRun`). */
  readonly written = new WrittenCheckpoints();
  /** Checkpoints and writes waiting for their shared commit. */
  private readonly batch: CommitBatch;

  constructor(db: SqliteDatabase) {
    super(db);
    this.batch = new CommitBatch(db);
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<RunnableConfig> {
    try {
      return await this.fence.guard(
        config,
        async () => {
          const stored = serverCheckpointMetadata(config, metadata);
          // One copy, serialised and kept: the graph's loop goes on updating its own checkpoint.
          const copy = copyCheckpoint(checkpoint);
          const address = await this.storeCheckpoint(config, copy, stored);
          const { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: parentId } = config.configurable ?? {};
          if ((namespace ?? '') === '')
            this.written.put(threadId as string, runOfWrite(config), copy, stored, parentId as string | undefined);
          return address;
        },
        checkpointAddress(config, checkpoint),
      );
    } finally {
      this.changed(config.configurable?.thread_id as string | undefined);
    }
  }

  override async putWrites(
    config: RunnableConfig,
    writes: Parameters<SqliteSaver['putWrites']>[1],
    taskId: string,
  ): Promise<void> {
    try {
      await this.fence.guard(
        config,
        async () => {
          await this.storeWrites(config, writes, taskId);
          const {
            thread_id: threadId,
            checkpoint_ns: namespace,
            checkpoint_id: checkpointId,
          } = config.configurable ?? {};
          if ((namespace ?? '') === '')
            this.written.putWrites(threadId as string, runOfWrite(config), checkpointId as string, writes, taskId);
        },
        undefined,
      );
    } finally {
      this.changed(config.configurable?.thread_id as string | undefined);
    }
  }

  override async deleteThread(threadId: string): Promise<void> {
    try {
      this.written.forget(threadId);
      await super.deleteThread(threadId);
    } finally {
      this.changed(threadId);
    }
  }

  /** The saver creates its tables lazily on first use; the thread operations below need them now. */
  createTables(): void {
    this.setup();
  }

  /**
   * `SqliteSaver.put`, its insert committed with the other checkpoint writes of the moment
   * (`commit-batch.ts`); a test compares the rows with the library's. `checkpoint` is a copy (the
   * library's `put` serialises one too).
   */
  private async storeCheckpoint(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<RunnableConfig> {
    this.setup();
    if (!config.configurable) throw new Error('Empty configuration supplied.');
    const threadId = config.configurable.thread_id as string | undefined;
    const namespace = (config.configurable.checkpoint_ns as string | undefined) ?? '';
    const parentId = config.configurable.checkpoint_id as string | undefined;
    if (!threadId) throw new Error('Missing "thread_id" field in passed "config.configurable".');
    const [[type, serializedCheckpoint], [metadataType, serializedMetadata]] = await Promise.all([
      this.serde.dumpsTyped(checkpoint),
      this.serde.dumpsTyped(metadata),
    ]);
    if (type !== metadataType) throw new Error('Failed to serialized checkpoint and metadata to the same type.');
    await this.batch.commit(() => {
      this.db
        .prepare(INSERT_CHECKPOINT)
        .run(threadId, namespace, checkpoint.id, parentId, type, serializedCheckpoint, serializedMetadata);
    });
    return { configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpoint.id } };
  }

  /** `SqliteSaver.putWrites`, committed with the other checkpoint writes of the moment. */
  private async storeWrites(
    config: RunnableConfig,
    writes: Parameters<SqliteSaver['putWrites']>[1],
    taskId: string,
  ): Promise<void> {
    this.setup();
    if (!config.configurable) throw new Error('Empty configuration supplied.');
    const { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId } = config.configurable;
    if (!threadId) throw new Error('Missing thread_id field in config.configurable.');
    if (!checkpointId) throw new Error('Missing checkpoint_id field in config.configurable.');
    // A call whose writes are all on special channels replaces them; otherwise a repeated write keeps the first.
    const replace = writes.every(([channel]) => channel in SPECIAL_WRITE_INDEX);
    const rows = await Promise.all(
      writes.map(async ([channel, value], index) => {
        const [type, serialized] = await this.serde.dumpsTyped(value);
        const idx = SPECIAL_WRITE_INDEX[channel] ?? index;
        return [threadId, namespace, checkpointId, taskId, idx, channel, type, serialized];
      }),
    );
    await this.batch.commit(() => {
      const insert = this.db.prepare(replace ? REPLACE_WRITE : INSERT_WRITE);
      for (const row of rows) insert.run(...row);
    });
  }

  /** Commits the writes still queued (before the connection closes). */
  flush(): void {
    this.batch.flush();
  }
}

/** The statements of `SqliteSaver.put` and `putWrites`. */
const INSERT_CHECKPOINT = `INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)`;
const WRITE_COLUMNS =
  'INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
const REPLACE_WRITE = `INSERT OR REPLACE ${WRITE_COLUMNS}`;
const INSERT_WRITE = `INSERT OR IGNORE ${WRITE_COLUMNS}`;

/** Statements kept per connection; the checkpointer's SQL is a handful of fixed strings plus `list` filters. */
const MAX_CACHED_STATEMENTS = 256;

/**
 * Makes `db.prepare` return a statement already compiled for the same SQL. LangGraph's SQLite
 * checkpointer prepares its statements on every call (`put`, `putWrites`, `list`), and compiling
 * them was the largest single cost of a run's checkpoints. A statement is safe to share here: none
 * of this connection's users iterates one (which would keep it busy) or switches it to raw or
 * pluck mode. Bounded, oldest first, because `list` builds its SQL from the request's filter.
 */
function cacheStatements(db: SqliteDatabase): void {
  const prepare = db.prepare.bind(db);
  const statements = new Map<string, ReturnType<SqliteDatabase['prepare']>>();
  db.prepare = ((sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = prepare(sql);
      statements.set(sql, statement);
      if (statements.size > MAX_CACHED_STATEMENTS) statements.delete(statements.keys().next().value!);
    }
    return statement;
  }) as SqliteDatabase['prepare'];
}

export class SqliteCheckpointDatabase implements CheckpointDatabase {
  readonly saver: ServerCheckpointSaver;
  private readonly listeners: ((threadId: string | undefined) => void)[] = [];
  private readonly db: SqliteDatabase;
  private readonly file: OpenedSqliteFile;
  private closed = false;

  /** Opens the file; its tables are the checkpointer's own (it creates them), so no migrations here. */
  constructor(path: string) {
    this.file = openSqliteFile(path);
    this.db = this.file.db;
    cacheStatements(this.db);
    const saver = new ServerCheckpointSaver(this.db);
    saver.createTables();
    saver.changed = (threadId) => this.changed(threadId);
    this.saver = saver;
  }

  onChange(listener: (threadId: string | undefined) => void): void {
    this.listeners.push(listener);
  }

  private changed(threadId: string | undefined): void {
    for (const listener of this.listeners) listener(threadId);
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.saver.deleteThread(threadId);
  }

  async copyThread(from: string, to: string): Promise<void> {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
           SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = ?`,
        )
        .run(to, from);
      this.db
        .prepare(
          `INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value)
           SELECT ?, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value FROM writes WHERE thread_id = ?`,
        )
        .run(to, from);
    })();
    this.saver.written.forget(to);
    this.changed(to);
  }

  async deleteRunCheckpoints(threadId: string, runId: string): Promise<number> {
    await this.saver.fence.close(runId);
    this.saver.written.forget(threadId);
    const deleted = this.db.transaction(() => {
      const ids = this.db
        .prepare(
          `SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ? AND json_extract(CAST(metadata AS TEXT), '$.run_id') = ?`,
        )
        .all(threadId, runId) as { checkpoint_ns: string; checkpoint_id: string }[];
      for (const { checkpoint_ns, checkpoint_id } of ids) {
        this.db
          .prepare('DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?')
          .run(threadId, checkpoint_ns, checkpoint_id);
        this.db
          .prepare('DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?')
          .run(threadId, checkpoint_ns, checkpoint_id);
      }
      return ids.length;
    })();
    this.changed(threadId);
    return deleted;
  }

  async patchLatestMetadata(threadId: string, metadata: Record<string, unknown>): Promise<boolean> {
    const tuple = await this.saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } });
    if (!tuple) return false;
    this.saver.written.forget(threadId);
    // `put` records the config's checkpoint id as the parent, so it gets the parent's config.
    const parentId = tuple.parentConfig?.configurable?.checkpoint_id;
    await SqliteSaver.prototype.put.call(
      this.saver,
      { configurable: { thread_id: threadId, checkpoint_ns: '', ...(parentId ? { checkpoint_id: parentId } : {}) } },
      tuple.checkpoint,
      { ...tuple.metadata, ...metadata } as CheckpointMetadata,
    );
    this.changed(threadId);
    return true;
  }

  stateAfterRun(threadId: string, runId: string): RunnableConfig {
    const address = { thread_id: threadId, checkpoint_ns: '' };
    const tuple = this.saver.written.take(runId, threadId);
    if (!tuple) return { configurable: address };
    // LangGraph's `getState` reads the tuple from the checkpointer its config lends
    // (`__pregel_checkpointer`) before the graph's own: this one answers the thread's latest with
    // the tuple and is the saver for everything else (a test checks that `getState` asks it).
    const saver = this.saver;
    const lent = Object.create(saver, {
      getTuple: {
        value: (config: RunnableConfig) => {
          const { thread_id, checkpoint_ns, checkpoint_id } = config.configurable ?? {};
          return thread_id === threadId && (checkpoint_ns ?? '') === '' && checkpoint_id === undefined
            ? Promise.resolve(tuple)
            : saver.getTuple(config);
        },
      },
    }) as ServerCheckpointSaver;
    return { configurable: { ...address, [LENT_CHECKPOINTER]: lent } };
  }

  async truncate(): Promise<void> {
    this.db.exec('DELETE FROM writes; DELETE FROM checkpoints;');
    this.saver.written.forgetAll();
    this.changed(undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.saver.flush();
    this.file.close();
  }
}
