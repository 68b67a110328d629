// The `agent_api` receiver: serves the Agent Deployment API for the configured LangGraph.js
// graphs, executes their runs on a bounded worker pool, keeps everything in an embedded SQLite
// database or in PostgreSQL (`storage.database_uri`), and sends each run's spans into the pipeline.
//
// Restart rule: a `running` run whose lease expired was cut off by a stopped process. It is marked
// `error` (with a message saying so) rather than retried, because a retry could repeat side
// effects its tools already had; `pending` runs never started and simply run now. Leases are
// taken and renewed by the worker pool and expired ones settled by `RunRecovery`, at start and
// then periodically. On SQLite (one server per database file) every `running` run found at start
// counts as cut off, whatever its lease says; on PostgreSQL, which several servers share, only the
// runs whose lease expired do (a live server keeps renewing its own).

import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, listen, isTraceViewer } from 'tracepipe/plugin';
import { listenerUrl, loadServerTls } from 'tracepipe/confighttp';
import type { ComponentDescription, ComponentSettings, Consumer, Receiver, TraceViewerGuard } from 'tracepipe/plugin';
import type { AgentApiConfig } from './config.ts';
import { systemClock } from './internal/crons/schedule.ts';
import type { Clock } from './internal/crons/schedule.ts';
import type { CronScheduler } from './internal/crons/scheduler.ts';
import { applyDeploymentEnv } from './internal/graphs/deployment-env.ts';
import { GraphRegistry, parseGraphEnv, parseGraphSpecs } from './internal/graphs/registry.ts';
import { HeaderFilter } from './internal/api/configurable-headers.ts';
import { parseDeploymentHttp } from './internal/graphs/http-config.ts';
import { AddressPolicy } from './internal/net/address-policy.ts';
import { ApiKeys, splitList } from './internal/auth/api-keys.ts';
import { CustomAuth, findAuthHandler } from './internal/auth/custom.ts';
import { Access } from './internal/http/access.ts';
import { agentApiPlugin } from './internal/http/app.ts';
import { installCallbackManagerCopy } from './internal/runtime/callback-manager-copy.ts';
import { installRandomPool } from './internal/runtime/random-pool.ts';
import { installRunWithConfig } from './internal/runtime/run-with-config.ts';
import { explorerAccessCheck } from './internal/http/explorer-access.ts';
import { registerErrorNegotiation } from './internal/http/error-negotiation.ts';
import { isLoopbackName, registerRequestGuard } from './internal/http/request-guard.ts';
import type { AgentServices } from './internal/http/services.ts';
import { normalizePrefix, registerUi } from './internal/ui/register.ts';
import { ThrottledWarning } from './internal/runs/throttled-warning.ts';
import { openBackend } from './internal/server/backend.ts';
import type { AgentBackend, BackendOptions } from './internal/server/backend.ts';
import { buildServerParts } from './internal/server/parts.ts';
import type { PartsOptions, ServerParts } from './internal/server/parts.ts';
import type { Assistant, RunRecord } from './internal/storage/storage.ts';
import { registerGlobalRunTracing } from './internal/tracing/global.ts';
import { createRunTracer } from './internal/tracing/tracer.ts';
import { SpanIntake } from './internal/tracing/span-intake.ts';
import type { RunTracer } from './internal/tracing/tracer.ts';
import { watchGraphs, watchedFolders } from './internal/graphs/watch.ts';
import { registerSdkLogger } from './internal/graphs/sdk-logger.ts';
import { serverLangGraphDir } from './internal/graphs/load.ts';
import { readPlatformConfig } from './internal/graphs/platform-defaults.ts';
import { bindLoopbackUrl } from './internal/http/loopback.ts';
import { parseUiSection } from './internal/genui/config.ts';
import { bundleUi } from './internal/genui/bundle.ts';
import type { BundleFile } from './internal/genui/bundle.ts';

/** Folders of the web interface under `/ui/` (static files, browser modules). */
const RESERVED_UI_NAMES = new Set(['js', 'shared', 'vendor']);

/**
 * Whether an extension links traces back to the studio: the `StudioLinkTarget` capability the
 * trace explorer defines (plugins/extensions/trace_explorer/studio-link.ts). Plugins import no
 * other plugin, so the method is the contract.
 */
function takesStudioLinks(extension: unknown): extension is { linkStudio(studioUrl: string | undefined): void } {
  return typeof (extension as { linkStudio?: unknown } | null)?.linkStudio === 'function';
}

/**
 * Whether a route family is on. Either switch turns it off: the plugin's `enabled: false` or
 * langgraph.json's `http.disable_*: true` (the deployment's own word; the plugin's default cannot undo it).
 */
function mcpEnabled(config: AgentApiConfig, http: { disableMcp?: boolean }): boolean {
  return (config.mcp?.enabled ?? true) && !http.disableMcp;
}

function a2aEnabled(config: AgentApiConfig, http: { disableA2a?: boolean }): boolean {
  return (config.a2a?.enabled ?? true) && !http.disableA2a;
}

/** What the deployment declares (`AgentApiReceiver.loadDeployment`). */
type Deployment = Awaited<ReturnType<AgentApiReceiver['loadDeployment']>>;

export class AgentApiReceiver implements Receiver {
  private app?: FastifyInstance;
  private backend?: AgentBackend;
  private parts?: ServerParts;
  /** Where run tracers send their spans (with `tracing.enabled`), journaled by default. */
  private spanIntake?: SpanIntake;
  private boundPort?: number;
  /** Whether the trace viewers of the service were told where the studio is. */
  private studioLinked = false;
  private stopping?: Promise<void>;
  private stopWatching?: () => void;
  private unregisterSdkLogger?: () => void;
  private unbindLoopbackUrl?: () => void;
  private readonly tracingWarning: ThrottledWarning;
  /** The trace viewers of the service, put behind this server's authentication. */
  private readonly viewerGuards: TraceViewerGuard[] = [];
  /** What `describe()` reports, set once listening. */
  private started?: { graphs: GraphRegistry; auth: string; watching?: string };

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: AgentApiConfig,
    private readonly next: Consumer<'spans'>,
    /** `clock`: where crons read the time (tests move it). */
    private readonly options: { clock?: Clock } = {},
  ) {
    this.tracingWarning = new ThrottledWarning(
      settings.telemetry.logger,
      'Could not send the spans of a run; the run itself is unaffected.',
    );
    // Trace viewers show this server's runs: they go behind its authentication from the start
    // (armed in start(), once the keys and the custom handler are loaded).
    for (const extension of settings.host.getExtensions().values()) {
      if (isTraceViewer(extension) && extension.guardWith) this.viewerGuards.push(extension.guardWith(settings.id));
    }
  }

  /** The cron scheduler (after `start`): `tick()` starts the due crons' runs now. */
  get crons(): CronScheduler {
    if (!this.parts) throw new Error('the agent API server is not started');
    return this.parts.cronScheduler;
  }

  /** The port the server listens on (after `start`). */
  get port(): number {
    if (this.boundPort === undefined) throw new Error('the agent API server is not listening');
    return this.boundPort;
  }

  async start(): Promise<void> {
    const { config } = this;
    // The ids LangChain and LangSmith draw per run, from a pool of random bytes (why: the module).
    installRandomPool();
    // The callback managers LangChain copies per runnable once a run is traced, copied in one pass.
    installCallbackManagerCopy();
    // The config LangChain makes current for each runnable, without a callback manager it would not use.
    installRunWithConfig();
    const deployment = await this.loadDeployment();
    const metrics = this.metrics();
    const backend = (this.backend = await openBackend(this.backendOptions(metrics)));
    if (config.tracing.enabled) {
      this.registerTracingGlobals();
      // Before runs resume: their spans need it, and what an earlier process left is replayed.
      this.spanIntake = this.openSpanIntake();
      await this.spanIntake.start();
    }
    const parts = (this.parts = buildServerParts(backend, this.partsOptions(deployment, metrics)));
    await parts.assistants.ensureSystemAssistants(deployment.assistantDefaults);
    await this.recover(backend, parts);
    const app = (this.app = await this.buildApp(deployment, backend, parts));
    // The background work starts here, once every route is registered.
    await backend.messaging.start();
    parts.coordinator.start();
    parts.workerPool.start();
    parts.recovery.start();
    parts.cronScheduler.start();
    this.boundPort = await listen(app, config.host, config.port);
    // `new Client()` without an apiUrl, in a graph or a custom route, talks to this server.
    this.unbindLoopbackUrl = bindLoopbackUrl(this.listenerUrl(this.boundPort, '/').replace(/\/$/, ''));
    if (config.ui.enabled) this.linkStudio(this.listenerUrl(this.boundPort, `${normalizePrefix(config.ui.path)}/`));
    this.announce(deployment, backend, parts);
  }

  /**
   * What the deployment declares, read before anything is opened: the langgraph.json env (applied
   * to the process), the assistants' defaults, the graphs, the custom auth handler (which arms the
   * trace viewers' guards), the `http` section and the generative UIs.
   */
  private async loadDeployment() {
    const { settings, config } = this;
    const { logger } = settings.telemetry;
    const baseDir = settings.host.resolvePath('.');
    const graphInput = this.graphInput(baseDir);
    const env = applyDeploymentEnv(parseGraphEnv(graphInput, baseDir));
    if (env.applied.length > 0 || env.kept.length > 0) {
      logger.info(env, 'Applied the langgraph.json env (variables the process already had keep their value).');
    }
    // Read once the langgraph.json env is applied: deployments usually set it there.
    const platformConfig = readPlatformConfig(process.env.LANGGRAPH_CONFIG, baseDir);
    const assistantDefaults = platformConfig.kind === 'defaults' ? platformConfig.byGraph : new Map();
    // Before any graph module is imported: graphs may call the SDK's getLogger() at import time.
    this.unregisterSdkLogger = registerSdkLogger(logger.child({ source: 'graph' }));
    const graphs = await GraphRegistry.load(parseGraphSpecs(graphInput, baseDir), {
      typeSchemas: config.type_schemas.enabled
        ? {
            timeoutMs: config.type_schemas.timeout_ms,
            logger,
            cacheDirectory: join(settings.host.resolvePath(config.data_dir), 'agent', 'type-schemas'),
          }
        : undefined,
    });
    const otherCopies = graphs.builtWithAnotherLangGraph();
    if (otherCopies.length > 0) {
      logger.warn(
        { graphs: otherCopies, server_langgraph: serverLangGraphDir() },
        "Graphs built with another copy of @langchain/langgraph than the server's: LangChain is loaded twice, the server's optimisations of it do not apply to these graphs, and its classes differ between the copies. Make the project resolve one copy (npm ls @langchain/langgraph; npm dedupe).",
      );
    }
    const authSpec = findAuthHandler({ ...graphInput, authPath: config.auth.path }, baseDir);
    const customAuth = authSpec ? await CustomAuth.load(authSpec) : undefined;
    // Before anything is opened: an exposed explorer that this server cannot protect stops the start.
    const viewerCheck = explorerAccessCheck(new ApiKeys(splitList(config.auth.api_keys)), customAuth);
    for (const guard of this.viewerGuards) guard.arm(viewerCheck);
    const deploymentHttp = parseDeploymentHttp(graphInput, baseDir);
    const uiBundles = await this.bundleGenerativeUis(graphInput, baseDir);
    const headerFilter = new HeaderFilter(deploymentHttp.configurableHeaders);
    const webhookPolicy = AddressPolicy.fromAllowList(config.webhooks.allow);
    const apiKeys = splitList(config.auth.api_keys);
    return {
      baseDir,
      graphInput,
      assistantDefaults,
      graphs,
      authSpec,
      customAuth,
      apiKeys,
      deploymentHttp,
      uiBundles,
      headerFilter,
      webhookPolicy,
    };
  }

  /** Where the backend keeps the data and how runs reach their readers (`storage`, `broker`). */
  private backendOptions(metrics: ReturnType<AgentApiReceiver['metrics']>): BackendOptions {
    const { config } = this;
    const { logger } = this.settings.telemetry;
    const dataDir = join(this.settings.host.resolvePath(config.data_dir), 'agent');
    const droppedEvents = new ThrottledWarning(
      logger,
      'Dropped the oldest stream events of a long run; late joiners will miss them.',
    );
    return {
      dataDir,
      databaseUri: config.storage.database_uri,
      poolSize: config.storage.pool_size,
      statementTimeoutMs: config.storage.statement_timeout_ms,
      connectTimeoutMs: config.storage.connect_timeout_ms,
      logger,
      messaging: {
        redisUri: config.broker.redis_uri,
        keyPrefix: config.broker.key_prefix,
        maxEvents: config.stream_buffer_events,
        onDrop: (runId, count) => {
          metrics.eventsDropped.inc(count);
          droppedEvents.warn({ run_id: runId });
        },
      },
    };
  }

  private partsOptions(deployment: Deployment, metrics: ReturnType<AgentApiReceiver['metrics']>): PartsOptions {
    const { config } = this;
    const { graphs, headerFilter, webhookPolicy } = deployment;
    return {
      graphs,
      logger: this.settings.telemetry.logger,
      workers: config.workers,
      leaseMs: config.runs.lease_ms,
      runTimeoutMs: config.run_timeout_ms,
      headerFilter,
      webhookPolicy,
      webhooks: {
        timeoutMs: config.webhooks.timeout_ms,
        maxAttempts: config.webhooks.max_attempts,
        selfUrl: () => (this.boundPort === undefined ? undefined : this.listenerUrl(this.boundPort, '/')),
      },
      metrics: {
        runFinished: (status, seconds) => {
          metrics.runs.inc({ status });
          metrics.duration.observe({ status }, seconds);
        },
        tracingFailed: () => metrics.tracingFailures.inc(),
        webhookFailed: () => metrics.webhookFailures.inc(),
      },
      tracer: config.tracing.enabled
        ? (run, assistant) => this.tracerFor(run, assistant, metrics.tracingFailures)
        : undefined,
      clock: () => this.options.clock ?? systemClock,
    };
  }

  /** The HTTP server: the guards, the deployment's own app, the API's routes and the web interface. */
  private async buildApp(deployment: Deployment, backend: AgentBackend, parts: ServerParts): Promise<FastifyInstance> {
    const { settings, config } = this;
    const { host } = settings;
    const { logger } = settings.telemetry;
    const { database, messaging } = backend;
    const { graphs, customAuth, apiKeys, deploymentHttp, uiBundles } = deployment;
    const services: AgentServices = {
      assistants: parts.assistants,
      threads: parts.threads,
      runs: parts.runs,
      dataReset: parts.dataReset,
      storeItems: parts.storeItems,
      graphs,
      broker: messaging.broker,
      runner: parts.runner,
      coordinator: parts.coordinator,
      logger,
      access: new Access(customAuth),
      testRoutes: config.test_routes,
      heartbeatMs: 10_000,
      closing: () => this.stopping !== undefined,
      metrics: host.metrics,
      maxBodyBytes: config.max_body_bytes,
      maxJsonDepth: config.max_json_depth,
      crons: parts.crons,
      mcpEnabled: mcpEnabled(config, deploymentHttp),
      a2aEnabled: a2aEnabled(config, deploymentHttp),
      apiKeysRequired: apiKeys.length > 0,
      uiBundles,
    };
    const app = (this.app = createHttpServer({
      logger,
      host,
      tls: config.tls && (await loadServerTls(config.tls, host.resolvePath)),
      bodyLimit: config.max_body_bytes,
      metricsPath: false,
      notReady: () => database.unavailable(),
    }));
    registerErrorNegotiation(app);
    await registerRequestGuard(app, {
      listenHost: config.host,
      allowedHosts: splitList(config.allowed_hosts),
      cors: config.cors,
      apiKeys,
      customAuth,
      uiPath: config.ui.enabled ? normalizePrefix(config.ui.path) : undefined,
      generativeUis: [...uiBundles.keys()],
      logger,
    });
    // Behind the guard's hooks (registered above), in front of every route.
    if (deploymentHttp.app) {
      // Imported only for a deployment with its own app: Hono loads with it.
      const { loadCustomApp, registerCustomApp } = await import('./internal/http/custom-app.ts');
      registerCustomApp(app, await loadCustomApp(deploymentHttp.app));
    }
    await app.register(agentApiPlugin(services));
    if (config.ui.enabled)
      await registerUi(app, {
        prefix: config.ui.path,
        traceExplorerUrl: config.ui.trace_explorer_url || this.traceExplorerOfService(),
      });
    return app;
  }

  /** Logs the start, keeps what `describe()` reports, and watches the graphs when asked. */
  private announce(deployment: Deployment, backend: AgentBackend, parts: ServerParts): void {
    const { settings, config } = this;
    const { host } = settings;
    const { logger } = settings.telemetry;
    const { graphs, authSpec, customAuth, apiKeys, deploymentHttp, graphInput, baseDir } = deployment;
    const auth = {
      api_keys: apiKeys.length,
      custom_handler: authSpec ? `${authSpec.path}:${authSpec.exportName}` : null,
    };
    logger.info(
      {
        host: config.host,
        port: this.boundPort,
        graphs: graphs.ids(),
        database: backend.location.log,
        workers: config.workers,
        broker: backend.messaging.kind,
        lease_owner: parts.leaseOwner,
        auth,
        mcp: mcpEnabled(config, deploymentHttp),
        a2a: a2aEnabled(config, deploymentHttp),
      },
      'Agent API server listening.',
    );
    // Once listening, so that the worker reading graph types does not slow the start.
    graphs
      .startTypeSchemas()
      .catch((error: unknown) => logger.warn({ err: error }, 'Could not start reading graph types.'));
    this.started = {
      graphs,
      auth:
        [
          apiKeys.length > 0 ? `API key (X-Api-Key, ${apiKeys.length} configured)` : '',
          authSpec ? `custom handler ${authSpec.path}:${authSpec.exportName}` : '',
        ]
          .filter(Boolean)
          .join(' + ') || 'none (no key needed)',
    };
    if (host.watch) {
      const specs = () => parseGraphSpecs(graphInput, baseDir);
      this.stopWatching = watchGraphs(graphs, specs, logger);
      this.started.watching = watchedFolders(specs()).join(', ');
    }
    if (apiKeys.length === 0 && !customAuth && !isLoopbackName(config.host)) {
      logger.warn(
        { host: config.host },
        'The agent server is reachable from other machines without authentication: set auth.api_keys (AGENT_API_KEY) or a custom auth handler.',
      );
    }
  }

  /**
   * Bundles the components of langgraph.json's `ui` section for the browser (esbuild, a second or
   * so each), before the server listens. A UI whose name is a folder of the web interface at
   * `/ui` (its `js`, `shared`, `vendor`) would hide it: that stops the start, as a bundle that
   * does not build does.
   */
  private async bundleGenerativeUis(
    graphInput: ReturnType<AgentApiReceiver['graphInput']>,
    baseDir: string,
  ): Promise<Map<string, BundleFile[]>> {
    const { components, shared } = parseUiSection(graphInput, baseDir);
    const bundles = new Map<string, BundleFile[]>();
    const webInterfaceAtUi = this.config.ui.enabled && normalizePrefix(this.config.ui.path) === '/ui';
    for (const [name, file] of components) {
      if (webInterfaceAtUi && RESERVED_UI_NAMES.has(name))
        throw new Error(`langgraph.json ui.${name}: "${name}" is a folder of the web interface at /ui; rename the UI`);
      try {
        bundles.set(name, await bundleUi(name, file, shared));
      } catch (error) {
        throw new Error(`langgraph.json ui.${name} (${file}) does not build: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
    if (bundles.size > 0)
      this.settings.telemetry.logger.info({ ui: [...bundles.keys()] }, 'Bundled the generative UIs.');
    return bundles;
  }

  /**
   * Where the graphs are named: inline `graphs`, or the langgraph.json of `langgraph_config`.
   * `LANGGRAPH_CONFIG` holding the path of a file is the variable's former meaning here (it is
   * the assistants' default config on the LangGraph platform): unless LANGGRAPH_JSON is set, that
   * file is read as before, with a warning, and the variable is removed from the process
   * environment so that graphs and the langgraph.json's own `env` never see a path there.
   */
  private graphInput(baseDir: string): { graphs: Record<string, string> } | { langgraph_config: string } {
    const { config } = this;
    if (config.graphs) return { graphs: { ...config.graphs } };
    const platformConfig = readPlatformConfig(process.env.LANGGRAPH_CONFIG, baseDir);
    if (platformConfig.kind !== 'legacy_path') return { langgraph_config: config.langgraph_config };
    delete process.env.LANGGRAPH_CONFIG;
    const path = process.env.LANGGRAPH_JSON === undefined ? platformConfig.path : config.langgraph_config;
    this.settings.telemetry.logger.warn(
      { langgraph_config: path, ignored: platformConfig.path === path ? undefined : platformConfig.path },
      'LANGGRAPH_CONFIG holds the path of a file: name the langgraph.json with LANGGRAPH_JSON instead. LANGGRAPH_CONFIG is the JSON default config of the assistants, as on the LangGraph platform; the path is read this once.',
    );
    return { langgraph_config: path };
  }

  /**
   * The trace list of a trace explorer extension this service runs (extensions start before
   * receivers), so that the studio links each run to its trace without a `ui.trace_explorer_url`.
   */
  private traceExplorerOfService(): string | undefined {
    for (const extension of this.settings.host.getExtensions().values()) {
      if (isTraceViewer(extension)) return extension.traceListUrl();
    }
    return undefined;
  }

  /**
   * Tells the trace viewers this service runs where the studio is (`undefined`: no longer), so
   * that the trace of one of this server's runs links back to its thread in the studio.
   */
  private linkStudio(studioUrl: string | undefined): void {
    for (const extension of this.settings.host.getExtensions().values()) {
      if (takesStudioLinks(extension)) extension.linkStudio(studioUrl);
    }
    this.studioLinked = studioUrl !== undefined;
  }

  /** The URL of `path` on this server (https with `tls`). */
  private listenerUrl(port: number, path: string): string {
    return listenerUrl(this.config.host, port, path, this.config.tls ? 'https' : 'http');
  }

  describe(): ComponentDescription {
    const { config, started, boundPort } = this;
    if (!started || boundPort === undefined) return {};
    const url = (path: string) => this.listenerUrl(boundPort, path);
    return {
      endpoints: [
        { url: url('/'), purpose: 'Agent API (LangGraph SDK apiUrl)' },
        ...(config.ui.enabled ? [{ url: url(`${normalizePrefix(config.ui.path)}/`), purpose: 'Web UI' }] : []),
        { url: url('/docs'), purpose: 'API reference' },
        { url: url('/metrics'), purpose: 'Prometheus metrics' },
      ],
      details: {
        graphs: started.graphs.ids().join(', ') || 'none',
        ...(this.backend ? { [this.backend.location.label]: this.backend.location.value } : {}),
        auth: started.auth,
        ...(started.watching ? { 'reloads on changes in': started.watching } : {}),
      },
    };
  }

  /**
   * Settles what stopped processes left behind (see the restart rule above): the `running` runs
   * whose lease expired, or on a backend that is `alone` (SQLite: one server per database file)
   * every `running` run, since no other process can be executing one. Then opens the logs of the
   * `pending` runs, which run now.
   */
  private async recover(backend: AgentBackend, parts: ServerParts): Promise<void> {
    // Logs the runs it settles itself.
    await parts.recovery.reclaim({ everyLease: backend.alone });
    const pending = await backend.database.storage.runs.withStatus('pending');
    // As when they were created: a log that lost its `metadata` with a restart gets it back.
    for (const run of pending) parts.coordinator.open(run.run_id);
    if (pending.length > 0) {
      this.settings.telemetry.logger.warn({ resumed_pending: pending.length }, 'Resuming queued runs.');
    }
  }

  /**
   * Makes run tracing the process's OpenTelemetry globals, so that graph code's own spans nest
   * under the run; a provider or context manager the host registered first is left in place.
   */
  private registerTracingGlobals(): void {
    const registration = registerGlobalRunTracing();
    if (registration.tracerProvider === 'foreign' || registration.contextManager === 'foreign') {
      this.settings.telemetry.logger.warn(
        registration,
        'Another OpenTelemetry tracer provider or context manager is registered globally; spans that graph code opens itself go to it and may not nest under their run (the runs are traced as usual).',
      );
    }
  }

  private openSpanIntake(): SpanIntake {
    const { settings, config } = this;
    const { journal, memory_limit_bytes } = config.tracing;
    const dataDir = settings.host.resolvePath(config.data_dir);
    return new SpanIntake({
      settings,
      journal: { ...journal, directory: resolve(dataDir, journal.directory) },
      memoryLimitBytes: memory_limit_bytes,
      next: this.next,
    });
  }

  private tracerFor(run: RunRecord, assistant: Assistant, failures: { inc(): void }): RunTracer {
    const { tracing } = this.config;
    const project = run.kwargs.config.configurable['x-project'];
    return createRunTracer({
      next: this.spanIntake!.consumer,
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
        failures.inc();
        this.tracingWarning.warn({ run_id: run.run_id, err: error });
      },
    });
  }

  private metrics() {
    const { meter } = this.settings.telemetry;
    return {
      runs: meter.counter({
        name: 'tracepipe_agent_runs_total',
        help: 'Agent runs finished, by final status.',
        labelNames: ['status'],
      }),
      duration: meter.histogram({
        name: 'tracepipe_agent_run_duration_seconds',
        help: 'Time from a run starting on a worker to its end.',
        labelNames: ['status'],
        buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600],
      }),
      tracingFailures: meter.counter({
        name: 'tracepipe_agent_tracing_failures_total',
        help: 'Runs whose spans could not be recorded or sent (the runs themselves went on).',
      }),
      webhookFailures: meter.counter({
        name: 'tracepipe_agent_webhook_failures_total',
        help: 'Run webhooks that could not be delivered after every attempt, or whose destination was refused.',
      }),
      eventsDropped: meter.counter({
        name: 'tracepipe_agent_stream_events_dropped_total',
        help: 'Stream events dropped from the bounded per-run replay buffer.',
      }),
    };
  }

  async shutdown(deadline: number): Promise<void> {
    this.stopping ??= this.stop(deadline);
    return this.stopping;
  }

  private async stop(deadline: number): Promise<void> {
    this.stopWatching?.();
    await this.started?.graphs.close();
    if (this.studioLinked) this.linkStudio(undefined);
    // Stop taking requests first, then let running runs finish until shortly before the deadline.
    const closing = this.app?.close();
    const { parts } = this;
    await parts?.cronScheduler.stop();
    await parts?.recovery.stop();
    if (parts) {
      const remaining = Math.max(0, deadline - Date.now() - 500);
      const timer = setTimeout(() => parts.runner.abortAll('shutdown'), remaining);
      await parts.workerPool.stop();
      clearTimeout(timer);
    }
    // Streams and waits on runs that will not run in this process end now, so closing the server
    // does not wait for them.
    parts?.coordinator.stop();
    // Responses that ended after `close()` began leave idle keep-alive sockets that Node would
    // otherwise hold until their keep-alive timeout; close them as they appear.
    const sweep = setInterval(() => this.app?.server.closeIdleConnections(), 20);
    try {
      await closing;
    } finally {
      clearInterval(sweep);
    }
    // Every run has ended and flushed its spans: what the pipeline still holds stays journaled.
    await this.spanIntake?.shutdown();
    await this.backend?.close(deadline);
    this.unregisterSdkLogger?.();
    this.unbindLoopbackUrl?.();
  }
}
