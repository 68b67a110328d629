// The checkpoint database on PostgreSQL: LangGraph's `PostgresSaver` on the server's pool (its
// tables: `checkpoints`, `checkpoint_blobs`, `checkpoint_writes`, `checkpoint_migrations`, created
// by its `setup()`), plus the same thread-level operations as the SQLite one (`checkpoints.ts`).

import type { RunnableConfig } from '@langchain/core/runnables';
import type { Checkpoint, CheckpointMetadata } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import type { CheckpointDatabase } from './checkpoints.ts';
import { checkpointAddress, serverCheckpointMetadata } from './checkpoints.ts';
import { withMigrationLock } from './postgres.ts';
import { RunWriteFence } from './write-fence.ts';

type ChannelVersions = Parameters<PostgresSaver['put']>[3];

/** `$1, $2, ...` for `rows` rows of `width` parameters each: `($1, $2), ($3, $4)`. */
function placeholders(rows: number, width: number, offset = 0): string {
  return Array.from(
    { length: rows },
    (_, row) => `(${Array.from({ length: width }, (_, column) => `$${offset + row * width + column + 1}`).join(', ')})`,
  ).join(', ');
}

/**
 * `PostgresSaver` writing the server's checkpoint metadata (see `serverCheckpointMetadata`), each
 * write through the rollback fence (`write-fence.ts`), and each write in one statement: the
 * library's `put` sends BEGIN, one INSERT per channel blob, the checkpoint and COMMIT (five to
 * seven round trips for a small graph's step), its `putWrites` BEGIN, one INSERT per write and
 * COMMIT. Here `put` is one statement (the blobs in a data-modifying CTE, the checkpoint after
 * them) and `putWrites` one multi-row INSERT; a single statement is atomic without a transaction
 * block. The rows, columns and conflict rules are the library's, so its reads are unchanged.
 */
class ServerPostgresSaver extends PostgresSaver {
  readonly fence = new RunWriteFence();

  constructor(private readonly writer: pg.Pool) {
    super(writer);
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return this.fence.guard(
      config,
      () => this.putOnce(config, checkpoint, serverCheckpointMetadata(config, metadata), newVersions),
      checkpointAddress(config, checkpoint),
    );
  }

  private async putOnce(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error('Missing "configurable" field in "config" param');
    const { thread_id: threadId, checkpoint_ns: checkpointNs = '', checkpoint_id: parentId } = config.configurable;
    const [blobs, serializedMetadata] = await Promise.all([
      this._dumpBlobs(threadId, checkpointNs, checkpoint.channel_values, newVersions),
      this._dumpMetadata(metadata),
    ]);
    const params: unknown[] = [
      threadId,
      checkpointNs,
      checkpoint.id,
      parentId,
      this._dumpCheckpoint(checkpoint),
      serializedMetadata,
      ...blobs.flat(),
    ];
    const insertBlobs =
      blobs.length === 0
        ? ''
        : `WITH blobs AS (INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
             VALUES ${placeholders(blobs.length, 6, 6)}
             ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING) `;
    await this.writer.query(
      `${insertBlobs}INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`,
      params,
    );
    return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(
    config: RunnableConfig,
    writes: Parameters<PostgresSaver['putWrites']>[1],
    taskId: string,
  ): Promise<void> {
    return this.fence.guard(config, () => this.putWritesOnce(config, writes, taskId), undefined);
  }

  private async putWritesOnce(
    config: RunnableConfig,
    writes: Parameters<PostgresSaver['putWrites']>[1],
    taskId: string,
  ): Promise<void> {
    const { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpointId } = config.configurable ?? {};
    const dumped = await this._dumpWrites(threadId, checkpointNs, checkpointId, taskId, writes);
    if (dumped.length === 0) return;
    // Special channels (errors, interrupts, resumes) have negative fixed indexes and replace what
    // was written before, as the library's upsert does; ordinary writes are written once.
    const replace = dumped.every((row) => row[4] < 0);
    // One statement cannot write a row twice: of repeated keys, the last wins when replacing and the
    // first otherwise, as the library's one-by-one statements leave them.
    const byIndex = new Map<number, (typeof dumped)[number]>();
    for (const row of dumped) if (replace || !byIndex.has(row[4])) byIndex.set(row[4], row);
    const rows = [...byIndex.values()];
    await this.writer.query(
      `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
       VALUES ${placeholders(rows.length, 8)}
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${
         replace ? 'DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob' : 'DO NOTHING'
       }`,
      rows.flat(),
    );
  }
}

async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((failure: Error) => (broken = failure));
    throw error;
  } finally {
    client.release(broken);
  }
}

export class PostgresCheckpointDatabase implements CheckpointDatabase {
  readonly saver: ServerPostgresSaver;

  private constructor(private readonly pool: pg.Pool) {
    this.saver = new ServerPostgresSaver(pool);
  }

  /**
   * The saver on `pool` (which stays the caller's), its tables created or migrated by `setup()`
   * under the server's migration lock, so that several servers starting together do not race.
   */
  static async open(pool: pg.Pool): Promise<PostgresCheckpointDatabase> {
    const database = new PostgresCheckpointDatabase(pool);
    await withMigrationLock(pool, () => database.saver.setup());
    return database;
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.saver.deleteThread(threadId);
  }

  async copyThread(from: string, to: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query(
        `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
         SELECT $1, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = $2`,
        [to, from],
      );
      await client.query(
        `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
         SELECT $1, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $2`,
        [to, from],
      );
      await client.query(
        `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
         SELECT $1, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob FROM checkpoint_writes WHERE thread_id = $2`,
        [to, from],
      );
    });
  }

  async deleteRunCheckpoints(threadId: string, runId: string): Promise<number> {
    await this.saver.fence.close(runId);
    return inTransaction(this.pool, async (client) => {
      const deleted = await client.query(
        `DELETE FROM checkpoints WHERE thread_id = $1 AND metadata->>'run_id' = $2 RETURNING checkpoint_ns, checkpoint_id`,
        [threadId, runId],
      );
      for (const row of deleted.rows as { checkpoint_ns: string; checkpoint_id: string }[]) {
        await client.query(
          'DELETE FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3',
          [threadId, row.checkpoint_ns, row.checkpoint_id],
        );
      }
      // Channel values live apart from checkpoints, keyed by channel version, and the saver never
      // overwrites one (`ON CONFLICT DO NOTHING`). The next run numbers its versions from the
      // checkpoint the thread is back at, so the rolled-back run's values must go, or they would
      // stand in for the next run's.
      await client.query(
        `DELETE FROM checkpoint_blobs b WHERE b.thread_id = $1 AND NOT EXISTS (
           SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
           AND c.checkpoint->'channel_versions'->>b.channel = b.version)`,
        [threadId],
      );
      return deleted.rowCount ?? 0;
    });
  }

  async patchLatestMetadata(threadId: string, metadata: Record<string, unknown>): Promise<boolean> {
    const updated = await this.pool.query(
      `UPDATE checkpoints SET metadata = metadata || $3::jsonb WHERE thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id = (
         SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1)`,
      [threadId, '', JSON.stringify(metadata)],
    );
    return (updated.rowCount ?? 0) > 0;
  }

  async truncate(): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('DELETE FROM checkpoint_writes');
      await client.query('DELETE FROM checkpoint_blobs');
      await client.query('DELETE FROM checkpoints');
    });
  }

  /** The pool is the server's: nothing of its own to close. */
  async close(): Promise<void> {}
}
