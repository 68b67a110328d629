// The agent server's parts, built from one backend in dependency order: the run machinery (the
// runner, the worker pool, the coordinator, lease recovery) and the domain services (assistants,
// threads, runs, crons) with the cron scheduler. Nothing starts here: the receiver's `start()`
// starts the parts that run in the background once the routes are registered.

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { Logger } from 'pino';
import { Crons } from '../crons/crons.ts';
import type { Clock } from '../crons/schedule.ts';
import { CronScheduler } from '../crons/scheduler.ts';
import { AssistantService } from '../domain/assistants.ts';
import { DataReset } from '../domain/data-reset.ts';
import { StoreItems } from '../domain/store-items.ts';
import type { HeaderFilter } from '../api/configurable-headers.ts';
import { RunCancellation } from '../domain/run-cancellation.ts';
import { RunService } from '../domain/runs.ts';
import { ThreadService } from '../domain/threads.ts';
import type { GraphRegistry } from '../graphs/registry.ts';
import type { AddressPolicy } from '../net/address-policy.ts';
import { webhookUrlProblem } from '../net/address-policy.ts';
import { RunCoordinator } from '../runs/coordinator.ts';
import { GraphRunner } from '../runs/graph-runner.ts';
import type { GraphRunnerOptions } from '../runs/graph-runner.ts';
import { RunRecovery } from '../runs/recovery.ts';
import { WorkerPool } from '../runs/worker-pool.ts';
import type { AgentBackend } from './backend.ts';

export interface PartsOptions {
  readonly graphs: GraphRegistry;
  readonly logger: Logger;
  readonly workers: number;
  readonly leaseMs: number;
  readonly runTimeoutMs: number;
  readonly headerFilter: HeaderFilter;
  readonly webhookPolicy: AddressPolicy;
  readonly webhooks: Omit<GraphRunnerOptions['webhooks'], 'policy'>;
  readonly metrics: GraphRunnerOptions['metrics'];
  readonly tracer?: GraphRunnerOptions['tracer'];
  /** Where crons read the time (tests move it). */
  readonly clock: () => Clock;
}

export interface ServerParts {
  /** This process's name on the run leases it takes. */
  readonly leaseOwner: string;
  readonly runner: GraphRunner;
  readonly workerPool: WorkerPool;
  readonly coordinator: RunCoordinator;
  readonly recovery: RunRecovery;
  readonly assistants: AssistantService;
  readonly threads: ThreadService;
  readonly runs: RunService;
  readonly crons: Crons;
  readonly cronScheduler: CronScheduler;
  readonly dataReset: DataReset;
  readonly storeItems: StoreItems;
}

export function buildServerParts(backend: AgentBackend, options: PartsOptions): ServerParts {
  const { storage, checkpoints, store } = backend.database;
  const { messaging } = backend;
  const { broker } = messaging;
  const { graphs, logger, webhookPolicy } = options;
  const webhookProblem = (url: string) => webhookUrlProblem(url, webhookPolicy);

  // The pool executes on the runner, and learns from each run's end whether its thread has runs
  // waiting: the runner knows nothing of the pool.
  const runner = new GraphRunner({
    storage,
    graphs,
    checkpoints,
    store,
    broker,
    onStart: (runId) => messaging.started(runId),
    logger,
    runTimeoutMs: options.runTimeoutMs,
    metrics: options.metrics,
    tracer: options.tracer,
    webhooks: { ...options.webhooks, policy: webhookPolicy },
  });
  // Random per start, so a restarted process never takes its predecessor's leases for its own.
  const leaseOwner = `${hostname()}:${process.pid}:${randomUUID()}`;
  const workerPool = new WorkerPool(storage, runner, options.workers, logger, {
    owner: leaseOwner,
    leaseMs: options.leaseMs,
  });
  // The signals call the coordinator only once started, when it exists.
  const signals = messaging.signals(runner, () => workerPool.wakeIdle(), {
    onEnded: (runId, elsewhere) => coordinator.ended(runId, elsewhere),
    onResync: () => coordinator.resync(),
  });
  // Other servers may execute this server's runs, or cancel the ones it executes: without a shared
  // broker, their PostgreSQL notifications tell it, and it watches their records while it cannot
  // hear them.
  const coordinator = new RunCoordinator(
    storage,
    broker,
    runner,
    () => workerPool,
    signals,
    backend.recordWatchMs === undefined ? undefined : { pollMs: backend.recordWatchMs },
  );
  const recovery = new RunRecovery({
    storage,
    broker,
    leaseMs: options.leaseMs,
    logger,
    onReclaimed: () => coordinator.notify(),
  });

  // Deleting a thread or an assistant cancels its runs first: cancellation comes before both.
  const cancellation = new RunCancellation(storage, coordinator, (threadId, runId) =>
    checkpoints.deleteRunCheckpoints(threadId, runId),
  );
  const graphForThread = (graphId: string, runConfig: RunnableConfig) =>
    graphs.get(graphId, { config: runConfig, checkpointer: checkpoints.saver, store });
  const threads = new ThreadService(storage, checkpoints, graphForThread, (threadId) =>
    cancellation.cancelThreadRuns(threadId),
  );
  const assistants = new AssistantService(
    storage,
    graphs,
    (threadId) => threads.delete(threadId),
    (assistantId) => cancellation.cancelAssistantRuns(assistantId),
  );
  const runs = new RunService(
    storage,
    assistants,
    coordinator,
    (graphId) => graphs.has(graphId),
    async (threadId, checkpointId, checkpointNs) =>
      (await checkpoints.saver.getTuple({
        configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpointId },
      })) !== undefined,
    { headerFilter: options.headerFilter, webhookProblem, cancellation },
  );
  const cronScheduler = new CronScheduler({ storage, runs, clock: options.clock, logger });
  const crons = new Crons(storage, (idOrGraph) => assistants.resolveId(idOrGraph), options.clock, {
    webhookProblem,
    onChange: () => cronScheduler.wake(),
  });
  return {
    leaseOwner,
    runner,
    workerPool,
    coordinator,
    recovery,
    assistants,
    threads,
    runs,
    crons,
    cronScheduler,
    dataReset: new DataReset(storage, checkpoints, store, () => assistants.systemIds()),
    storeItems: new StoreItems(store),
  };
}
