// The agent server's backend: where records, checkpoints and store items live (`storage.database_uri`)
// and how runs reach their readers and the other instances (`broker.redis_uri`). One factory per
// database opens everything it needs and says what follows from it, so that the composition root
// (`receiver.ts`) asks for one backend and never branches on which.

import type { RunMessagingOptions } from '../runs/messaging.ts';
import { RunMessaging } from '../runs/messaging.ts';
import { openPostgresDatabase, openSqliteDatabase } from '../storage/database.ts';
import type { AgentDatabase, DatabaseOptions } from '../storage/database.ts';

export interface AgentBackend {
  readonly database: AgentDatabase;
  readonly messaging: RunMessaging;
  /** Where the data is: for the start log, and for `describe()` (a label and a value). */
  readonly location: { readonly log: string; readonly label: 'data directory' | 'database'; readonly value: string };
  /**
   * One server per database (SQLite): at start, every `running` run counts as cut off, whatever
   * its lease says. Otherwise (PostgreSQL, shared) only the runs whose lease expired do.
   */
  readonly alone: boolean;
  /**
   * How often to look at run records for the runs other servers execute or cancel, when the
   * database is shared without Redis and its notifications cannot be heard; undefined: no need.
   */
  readonly recordWatchMs?: number;
  /** Writes what the broker still buffers (until `deadline`, epoch ms), then closes everything. */
  close(deadline: number): Promise<void>;
}

export interface BackendOptions extends DatabaseOptions {
  readonly messaging: Omit<RunMessagingOptions, 'logger' | 'database'>;
}

/** How often a server without a shared broker looks at the records of runs other servers may hold. */
const RECORD_WATCH_MS = 500;

export function openBackend(options: BackendOptions): Promise<AgentBackend> {
  return options.databaseUri === '' ? openSqliteBackend(options) : openPostgresBackend(options);
}

/** Embedded SQLite files under `<data_dir>/agent/`: one server per directory. */
async function openSqliteBackend(options: BackendOptions): Promise<AgentBackend> {
  const database = await openSqliteDatabase(options.dataDir);
  const messaging = await RunMessaging.open({ ...options.messaging, logger: options.logger });
  messaging.connect();
  return {
    database,
    messaging,
    location: { log: `SQLite under ${options.dataDir}`, label: 'data directory', value: options.dataDir },
    alone: true,
    close: closing(database, messaging),
  };
}

/** One PostgreSQL database that several servers may share. */
async function openPostgresBackend(options: BackendOptions): Promise<AgentBackend> {
  const database = await openPostgresDatabase(options);
  // Without Redis, the servers sharing the database hear each other through its notifications.
  const messaging = await RunMessaging.open({
    ...options.messaging,
    database: { uri: options.databaseUri, connectTimeoutMs: options.connectTimeoutMs },
    logger: options.logger,
  });
  messaging.connect();
  return {
    database,
    messaging,
    location: { log: `PostgreSQL ${database.location}`, label: 'database', value: `PostgreSQL ${database.location}` },
    alone: false,
    recordWatchMs: messaging.kind === 'redis' ? undefined : RECORD_WATCH_MS,
    close: closing(database, messaging),
  };
}

function closing(database: AgentDatabase, messaging: RunMessaging): (deadline: number) => Promise<void> {
  return async (deadline) => {
    await messaging.close(deadline);
    await database.close();
  };
}
