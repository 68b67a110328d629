// The `agent_api` receiver: serves the Agent Deployment API for the configured LangGraph.js
// graphs, executes their runs on a bounded worker pool, keeps everything in an embedded SQLite
// database, and sends each run's spans into the pipeline.
//
// Restart rule: a run found `running` at start-up was cut off by a stopped process. It is marked
// `error` (with a message saying so) rather than retried, because a retry could repeat side
// effects its tools already had; `pending` runs never started and simply run now.

import { mkdir } from 'node:fs/promises';
import type { RunnableConfig } from '@langchain/core/runnables';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, listen } from '../../../src/http/server.ts';
import type { ComponentSettings, Consumer, Receiver } from '../../../src/pipeline/component.ts';
import { counter, histogram } from '../../../src/telemetry/metrics.ts';
import type { AgentApiConfig } from './config.ts';
import { Crons } from './internal/crons/crons.ts';
import { systemClock } from './internal/crons/schedule.ts';
import type { Clock } from './internal/crons/schedule.ts';
import { CronScheduler } from './internal/crons/scheduler.ts';
import { Assistants } from './internal/domain/assistants.ts';
import { isoNow } from './internal/domain/clock.ts';
import { Runs, settleThread } from './internal/domain/runs.ts';
import { Threads } from './internal/domain/threads.ts';
import { GraphRegistry, parseGraphEnv, parseGraphSpecs } from './internal/graphs/registry.ts';
import { HeaderFilter } from './internal/domain/configurable-headers.ts';
import { parseDeploymentHttp } from './internal/graphs/http-config.ts';
import { AddressPolicy, webhookUrlProblem } from './internal/net/address-policy.ts';
import { splitList } from './internal/auth/api-keys.ts';
import { CustomAuth, findAuthHandler } from './internal/auth/custom.ts';
import { Access } from './internal/http/access.ts';
import { agentApiPlugin } from './internal/http/app.ts';
import { isLoopbackName, registerRequestGuard } from './internal/http/request-guard.ts';
import type { AgentServices } from './internal/http/services.ts';
import { normalizePrefix, registerUi } from './internal/ui/register.ts';
import { StreamBroker } from './internal/runs/broker.ts';
import { Execution } from './internal/runs/execution.ts';
import { RunExecutor } from './internal/runs/executor.ts';
import type { RunTracer } from './internal/runs/executor.ts';
import { RunQueue } from './internal/runs/queue.ts';
import { ThrottledWarning } from './internal/runs/throttled-warning.ts';
import { CheckpointDatabase } from './internal/storage/checkpoints.ts';
import { SqliteStorage } from './internal/storage/sqlite.ts';
import { SqliteStore } from './internal/storage/store.ts';
import type { Assistant, RunRecord } from './internal/storage/storage.ts';
import { createRunTracer } from './internal/tracing/tracer.ts';

const RESTART_MESSAGE = 'The server stopped while this run was executing; start a new run to retry.';

export class AgentApiReceiver implements Receiver {
  private app?: FastifyInstance;
  private storage?: SqliteStorage;
  private checkpoints?: CheckpointDatabase;
  private store?: SqliteStore;
  private queue?: RunQueue;
  private executor?: RunExecutor;
  private execution?: Execution;
  private boundPort?: number;
  private stopping?: Promise<void>;
  private readonly tracingWarning: ThrottledWarning;
  private cronScheduler?: CronScheduler;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: AgentApiConfig,
    private readonly next: Consumer<'spans'>,
    /** `clock`: where crons read the time (tests move it). */
    private readonly options: { clock?: Clock } = {},
  ) {
    this.tracingWarning = new ThrottledWarning(
      settings.logger,
      'Could not send the spans of a run; the run itself is unaffected.',
    );
  }

  /** The cron scheduler (after `start`): `tick()` starts the due crons' runs now. */
  get crons(): CronScheduler {
    if (!this.cronScheduler) throw new Error('the agent API server is not started');
    return this.cronScheduler;
  }

  /** The port the server listens on (after `start`). */
  get port(): number {
    if (this.boundPort === undefined) throw new Error('the agent API server is not listening');
    return this.boundPort;
  }

  async start(): Promise<void> {
    const { settings, config } = this;
    const { logger, host } = settings;
    const dataDir = join(host.resolvePath(config.data_dir), 'agent');
    await mkdir(dataDir, { recursive: true });

    const graphInput = config.graphs ? { graphs: { ...config.graphs } } : { langgraph_config: config.langgraph_config };
    const baseDir = host.resolvePath('.');
    for (const [key, value] of Object.entries(parseGraphEnv(graphInput, baseDir))) process.env[key] ??= value;
    const graphs = await GraphRegistry.load(parseGraphSpecs(graphInput, baseDir));
    const authSpec = findAuthHandler({ ...graphInput, authPath: config.auth.path }, baseDir);
    const customAuth = authSpec ? await CustomAuth.load(authSpec) : undefined;
    const headerFilter = new HeaderFilter(parseDeploymentHttp(graphInput, baseDir).configurableHeaders);
    const webhookPolicy = AddressPolicy.fromAllowList(config.webhooks.allow);

    const storage = (this.storage = new SqliteStorage(join(dataDir, 'agent.sqlite')));
    const checkpoints = (this.checkpoints = new CheckpointDatabase(join(dataDir, 'checkpoints.sqlite')));
    const store = (this.store = new SqliteStore(join(dataDir, 'store.sqlite')));
    const metrics = this.metrics();
    const droppedEvents = new ThrottledWarning(
      logger,
      'Dropped the oldest stream events of a long run; late joiners will miss them.',
    );
    const broker = new StreamBroker({
      maxEvents: config.stream_buffer_events,
      maxFinishedRuns: 1000,
      onDrop: (runId, count) => {
        metrics.eventsDropped.inc({ component_id: settings.id }, count);
        droppedEvents.warn({ run_id: runId });
      },
    });
    const executor = (this.executor = new RunExecutor({
      storage,
      graphs,
      checkpoints,
      store,
      broker,
      logger,
      runTimeoutMs: config.run_timeout_ms,
      metrics: {
        runFinished: (status, seconds) => {
          metrics.runs.inc({ component_id: settings.id, status });
          metrics.duration.observe({ component_id: settings.id, status }, seconds);
        },
        tracingFailed: () => metrics.tracingFailures.inc({ component_id: settings.id }),
        webhookFailed: () => metrics.webhookFailures.inc({ component_id: settings.id }),
      },
      tracer: config.tracing.enabled
        ? (run, assistant) => this.tracerFor(run, assistant, metrics.tracingFailures)
        : undefined,
      webhooks: {
        policy: webhookPolicy,
        timeoutMs: config.webhooks.timeout_ms,
        maxAttempts: config.webhooks.max_attempts,
      },
    }));
    const queue = (this.queue = new RunQueue(storage, executor, config.workers, logger));
    const execution = (this.execution = new Execution(storage, broker, executor, () => queue));
    const graphForThread = (graphId: string, runConfig: RunnableConfig) =>
      graphs.get(graphId, { config: runConfig, checkpointer: checkpoints.saver, store });
    // Threads and runs refer to each other (deleting a thread cancels its runs); `runs` is set
    // right below, before any request can arrive.
    let runs: Runs | undefined;
    const threads = new Threads(storage, checkpoints, graphForThread, (threadId) => runs!.cancelThreadRuns(threadId));
    const assistants = new Assistants(
      storage,
      graphs,
      (threadId) => threads.delete(threadId),
      (assistantId) => runs!.cancelAssistantRuns(assistantId),
    );
    runs = new Runs(
      storage,
      assistants,
      execution,
      (graphId) => graphs.has(graphId),
      async (threadId, checkpointId, checkpointNs) =>
        (await checkpoints.saver.getTuple({
          configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpointId },
        })) !== undefined,
      { headerFilter, webhookProblem: (url) => webhookUrlProblem(url, webhookPolicy) },
    );

    await assistants.ensureSystemAssistants();
    await this.recover(storage, broker);
    const clock = () => this.options.clock ?? systemClock;
    const cronScheduler = (this.cronScheduler = new CronScheduler({ storage, runs, clock, logger }));
    const crons = new Crons(storage, assistants, clock, {
      webhookProblem: (url) => webhookUrlProblem(url, webhookPolicy),
      onChange: () => cronScheduler.wake(),
    });

    const services: AgentServices = {
      assistants,
      threads,
      runs,
      storage,
      checkpoints,
      store,
      graphs,
      broker,
      executor,
      execution,
      logger,
      access: new Access(customAuth),
      testRoutes: config.test_routes,
      heartbeatMs: 10_000,
      closing: () => this.stopping !== undefined,
      metrics: host.metrics,
      maxBodyBytes: config.max_body_bytes,
      maxJsonDepth: config.max_json_depth,
      crons,
      mcpEnabled: config.mcp?.enabled ?? true,
      a2aEnabled: config.a2a?.enabled ?? true,
    };
    const app = (this.app = createHttpServer({ logger, host, bodyLimit: config.max_body_bytes, metricsPath: false }));
    const apiKeys = splitList(config.auth.api_keys);
    await registerRequestGuard(app, {
      listenHost: config.host,
      allowedHosts: splitList(config.allowed_hosts),
      corsOrigins: config.cors.enabled ? splitList(config.cors.allow_origins) : [],
      apiKeys,
      customAuth,
      uiPath: config.ui.enabled ? normalizePrefix(config.ui.path) : undefined,
      logger,
    });
    await app.register(agentApiPlugin(services));
    if (config.ui.enabled) await registerUi(app, { prefix: config.ui.path });
    queue.start();
    cronScheduler.start();
    this.boundPort = await listen(app, config.host, config.port);
    const auth = {
      api_keys: apiKeys.length,
      custom_handler: authSpec ? `${authSpec.path}:${authSpec.exportName}` : null,
    };
    logger.info(
      {
        host: config.host,
        port: this.boundPort,
        graphs: graphs.ids(),
        data_dir: dataDir,
        workers: config.workers,
        auth,
      },
      'Agent API server listening.',
    );
    if (apiKeys.length === 0 && !customAuth && !isLoopbackName(config.host)) {
      logger.warn(
        { host: config.host },
        'The agent server is reachable from other machines without authentication: set auth.api_keys (AGENT_API_KEY) or a custom auth handler.',
      );
    }
  }

  /** Settles what a stopped process left behind (see the restart rule above). */
  private async recover(storage: SqliteStorage, broker: StreamBroker): Promise<void> {
    const cutOff = await storage.runsWithStatus('running');
    for (const run of cutOff) {
      await storage.transaction(async (tx) => {
        await tx.updateRun({
          ...run,
          status: 'error',
          error: { error: 'ServerRestart', message: RESTART_MESSAGE },
          updated_at: isoNow(),
        });
        await settleThread(tx, run.thread_id, { error: true });
      });
    }
    const pending = await storage.runsWithStatus('pending');
    for (const run of pending) broker.open(run.run_id);
    if (cutOff.length > 0 || pending.length > 0) {
      this.settings.logger.warn(
        { marked_error: cutOff.length, resumed_pending: pending.length },
        'Recovered runs left by a previous process.',
      );
    }
  }

  private tracerFor(
    run: RunRecord,
    assistant: Assistant,
    failures: { inc(labels: { component_id: string }): void },
  ): RunTracer {
    const { tracing } = this.config;
    const kwargs = run.kwargs as { config?: { configurable?: Record<string, unknown> } };
    const project = kwargs.config?.configurable?.['x-project'];
    return createRunTracer({
      next: this.next,
      context: {
        project: typeof project === 'string' && project !== '' ? project : tracing.project,
        ...(tracing.api_key ? { apiKey: tracing.api_key } : {}),
        receiver: this.settings.id,
      },
      runId: run.run_id,
      threadId: run.temporary ? undefined : run.thread_id,
      assistantId: assistant.assistant_id,
      graphId: assistant.graph_id,
      serviceName: tracing.service_name,
      onError: (error) => {
        failures.inc({ component_id: this.settings.id });
        this.tracingWarning.warn({ run_id: run.run_id, err: error });
      },
    });
  }

  private metrics() {
    const registry = this.settings.metrics;
    return {
      runs: counter(registry, {
        name: 'tracepipe_agent_runs_total',
        help: 'Agent runs finished, by final status.',
        labelNames: ['component_id', 'status'],
      }),
      duration: histogram(registry, {
        name: 'tracepipe_agent_run_duration_seconds',
        help: 'Time from a run starting on a worker to its end.',
        labelNames: ['component_id', 'status'],
        buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600],
      }),
      tracingFailures: counter(registry, {
        name: 'tracepipe_agent_tracing_failures_total',
        help: 'Runs whose spans could not be recorded or sent (the runs themselves went on).',
        labelNames: ['component_id'],
      }),
      webhookFailures: counter(registry, {
        name: 'tracepipe_agent_webhook_failures_total',
        help: 'Run webhooks that could not be delivered after every attempt, or whose destination was refused.',
        labelNames: ['component_id'],
      }),
      eventsDropped: counter(registry, {
        name: 'tracepipe_agent_stream_events_dropped_total',
        help: 'Stream events dropped from the bounded per-run replay buffer.',
        labelNames: ['component_id'],
      }),
    };
  }

  async shutdown(deadline: number): Promise<void> {
    this.stopping ??= this.stop(deadline);
    return this.stopping;
  }

  private async stop(deadline: number): Promise<void> {
    // Stop taking requests first, then let running runs finish until shortly before the deadline.
    const closing = this.app?.close();
    await this.cronScheduler?.stop();
    if (this.queue) {
      const remaining = Math.max(0, deadline - Date.now() - 500);
      const timer = setTimeout(() => this.executor?.abortAll('shutdown'), remaining);
      await this.queue.stop();
      clearTimeout(timer);
    }
    // Streams and waits on runs that will not run in this process end now, so closing the server
    // does not wait for them.
    this.execution?.stop();
    // Responses that ended after `close()` began leave idle keep-alive sockets that Node would
    // otherwise hold until their keep-alive timeout; close them as they appear.
    const sweep = setInterval(() => this.app?.server.closeIdleConnections(), 20);
    try {
      await closing;
    } finally {
      clearInterval(sweep);
    }
    await this.storage?.close();
    this.checkpoints?.close();
    this.store?.close();
  }
}
