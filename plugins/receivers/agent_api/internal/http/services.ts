// What the routes work with: the domain services and the run machinery of one server instance.

import type { Logger } from 'pino';
import type { Assistants } from '../domain/assistants.ts';
import type { Runs } from '../domain/runs.ts';
import type { Threads } from '../domain/threads.ts';
import type { GraphRegistry } from '../graphs/registry.ts';
import type { StreamBroker } from '../runs/broker.ts';
import type { RunExecutor } from '../runs/executor.ts';
import type { Execution } from '../runs/execution.ts';
import type { CheckpointDatabase } from '../storage/checkpoints.ts';
import type { SqliteStore } from '../storage/store.ts';
import type { Storage } from '../storage/storage.ts';

export interface AgentServices {
  readonly assistants: Assistants;
  readonly threads: Threads;
  readonly runs: Runs;
  readonly storage: Storage;
  readonly checkpoints: CheckpointDatabase;
  readonly store: SqliteStore;
  readonly graphs: GraphRegistry;
  readonly broker: StreamBroker;
  readonly executor: RunExecutor;
  readonly execution: Execution;
  readonly logger: Logger;
  /** Accepted `X-Api-Key` values; empty: no authentication. */
  readonly apiKeys: readonly string[];
  readonly cors: { readonly enabled: boolean; readonly allowOrigins: readonly string[] };
  /** Interval between SSE heartbeat comments. */
  readonly heartbeatMs: number;
  /** True once the server is stopping: long responses then close their connections as they end. */
  readonly closing: () => boolean;
}
