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

/**
 * `PostgresSaver` writing the server's checkpoint metadata (see `serverCheckpointMetadata`), each
 * write through the rollback fence (`write-fence.ts`).
 */
class ServerPostgresSaver extends PostgresSaver {
  readonly fence = new RunWriteFence();

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return this.fence.guard(
      config,
      () => super.put(config, checkpoint, serverCheckpointMetadata(config, metadata), newVersions),
      checkpointAddress(config, checkpoint),
    );
  }

  override async putWrites(
    config: RunnableConfig,
    writes: Parameters<PostgresSaver['putWrites']>[1],
    taskId: string,
  ): Promise<void> {
    return this.fence.guard(config, () => super.putWrites(config, writes, taskId), undefined);
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
