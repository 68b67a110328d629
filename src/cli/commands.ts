// The commands behind `tracepipe`: run a config, validate it, list components. Loaded only once a
// command needs them, so that `--version` and `--help` start nothing but the argument parser.

import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { Registry } from '../pipeline/registry.ts';
import type { Catalog } from '../pipeline/catalog.ts';
import { componentKey, loadFactories, referencedComponents } from '../pipeline/catalog.ts';
import type { Factory } from '../pipeline/component.ts';
import { configTable } from '../config/describe.ts';
import type { LoadOptions, ServiceConfig } from '../config/load.ts';
import { checkNamedFiles } from '../config/files.ts';
import { loadPlugins, readConfigFile as readConfig, validateConfig } from '../config/load.ts';
import { TracepipeError } from '../errors.ts';
import { errorMessage } from '../pipeline/errors.ts';
import { Service } from '../pipeline/service.ts';
import { ListenError, createHttpServer, listen, listenerUrl } from '../http/server.ts';
import { answerUnrouted } from '../http/unrouted.ts';
import { limitHeapGrowth } from '../runtime/heap-growth.ts';
import { startIdleCollection } from '../runtime/idle-collection.ts';
import { stopAllocationSitePretenuring } from '../runtime/pretenuring.ts';
import { enableTypeScript } from '../runtime/user_modules.ts';
import type { LogLevel } from '../telemetry/levels.ts';
import { createLogger } from '../telemetry/logger.ts';
import { createMetricsRegistry } from '../telemetry/metrics.ts';
import { formatBanner, logReady } from './banner.ts';
import type { Described } from './banner.ts';
import { withHint } from './hinted.ts';
import { conflictHint, listenHint, yamlHint } from './hints.ts';

export interface GlobalOptions {
  config?: string;
  set: string[];
  logLevel?: LogLevel;
}

export interface RunOptions extends GlobalOptions {
  /** The version the banner shows. */
  version?: string;
  /** Reload user code (graphs) when its files change. */
  watch?: boolean;
}

/** Reads and parses a config file; a YAML syntax error gets a hint when one applies. */
function readConfigFile(path: string, options: LoadOptions): ReturnType<typeof readConfig> {
  try {
    return readConfig(path, options);
  } catch (error) {
    if (!(error instanceof TracepipeError) || error.code !== 'TP_ERR_CONFIG_PARSE') throw error;
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      // Read a moment ago; without the text there is simply no hint.
    }
    throw withHint(error, yamlHint(error.message, text));
  }
}

function listenFailure(error: unknown): ListenError | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (current instanceof ListenError) return current;
  }
  return undefined;
}

interface LoadedConfig {
  readonly config: ServiceConfig;
  readonly data: unknown;
  readonly text: string;
  /** Whether a component in use loads user TypeScript through a plain `import()`. */
  readonly needsTypeScript: boolean;
}

/**
 * Reads, parses and validates a config, loading only the catalog's components it refers to (all
 * of them when it names a type nobody offers, so that the error lists every known type) and the
 * plugins it lists.
 */
async function loadConfig(path: string, catalog: Catalog, options: LoadOptions): Promise<LoadedConfig> {
  const { data, baseDir, text } = readConfigFile(path, options);
  const plugins = await loadPlugins(data, baseDir);
  const offered = new Map(catalog.map((entry) => [componentKey(entry.kind, entry.type), entry]));
  for (const factory of plugins) {
    // A plugin may not replace a built-in component, whether the config uses that one or not.
    if (offered.has(componentKey(factory.kind, factory.type))) {
      throw new TracepipeError('TP_ERR_REGISTRY_DUPLICATE', [factory.kind, factory.type]);
    }
  }
  const referenced = referencedComponents(data);
  const fromPlugins = new Set(plugins.map((factory) => componentKey(factory.kind, factory.type)));
  const unknown = [...referenced].some((key) => !offered.has(key) && !fromPlugins.has(key));
  const builtins = await loadFactories(
    catalog,
    unknown ? undefined : (entry) => referenced.has(componentKey(entry.kind, entry.type)),
  );
  const registry = new Registry([...builtins, ...plugins]);
  const validated = validateConfig(data, registry, baseDir);
  const { config } = validated;
  const errors = config ? checkNamedFiles(config) : validated.errors;
  if (errors.length > 0) {
    throw withHint(new TracepipeError('TP_ERR_CONFIG_INVALID', [errors.join('\n')]), conflictHint(errors, text));
  }
  const needsTypeScript = [...referenced].some((key) => offered.get(key)?.loadsUserTypeScript === true);
  return { config: config!, data, text, needsTypeScript };
}

/** Loads and runs a config until SIGTERM/SIGINT; resolves with the process exit code. */
export async function runConfig(options: RunOptions, catalog: Catalog): Promise<number> {
  if (!options.config) throw new Error('missing --config <file>');
  // Before any component's code runs: request-scoped objects must not be allocated as old ones.
  stopAllocationSitePretenuring();
  // And garbage that reached the old generation must not pile up to several times what is live.
  limitHeapGrowth();
  const { config, data, text, needsTypeScript } = await loadConfig(options.config, catalog, { sets: options.set });
  if (needsTypeScript) await enableTypeScript();
  const logs = config.service.telemetry.logs;
  const logger = createLogger({ level: options.logLevel ?? logs.level, format: logs.format });
  const metricsConfig = config.service.telemetry.metrics;
  const metrics = createMetricsRegistry({ processMetrics: metricsConfig.process_metrics });
  const service = new Service(config, { logger, metrics, watch: options.watch === true });
  // A bug in one component must not take every tenant's buffered data down with the process:
  // log it loudly and keep serving (the Collector forbids crashing on bad input for this reason).
  process.on('unhandledRejection', (reason) =>
    logger.error({ err: reason }, 'Unhandled promise rejection; continuing.'),
  );

  const hinted = (error: unknown) => {
    const failure = listenFailure(error);
    return failure ? withHint(error, listenHint(failure, data, text)) : error;
  };

  let metricsServer: ReturnType<typeof createHttpServer> | undefined;
  let metricsPort: number | undefined;
  if (metricsConfig.listen) {
    const separator = metricsConfig.listen.lastIndexOf(':');
    metricsServer = createHttpServer({ logger, host: service.host, bodyLimit: 1024, metricsPath: metricsConfig.path });
    // POST /metrics: 405 with `Allow`, as on every tracepipe server; an unknown path: 404.
    metricsServer.setNotFoundHandler((request, reply) => answerUnrouted(request, reply));
    try {
      metricsPort = await listen(
        metricsServer,
        metricsConfig.listen.slice(0, separator),
        Number(metricsConfig.listen.slice(separator + 1)),
      );
    } catch (error) {
      await metricsServer.close();
      throw hinted(error);
    }
  }

  // A pipeline without listeners (e.g. a file-tailing receiver) has no handle that keeps the event
  // loop alive; this timer does, until a signal stops the service.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const stopped = waitForSignals(service, config, logger, async () => {
    await metricsServer?.close();
  });

  try {
    await service.start();
  } catch (error) {
    clearInterval(keepAlive);
    await metricsServer?.close();
    throw hinted(error);
  }
  const described: Described[] = service.describe();
  if (metricsServer && metricsPort !== undefined) {
    const host = metricsConfig.listen!.slice(0, metricsConfig.listen!.lastIndexOf(':'));
    const url = listenerUrl(host, metricsPort, metricsConfig.path);
    described.push({ id: 'telemetry', kind: 'service', endpoints: [{ url, purpose: 'Prometheus metrics' }] });
  }
  const bannerOptions = { version: options.version ?? '', configPath: options.config };
  const pretty = logs.format === 'pretty' || (logs.format === 'auto' && process.stdout.isTTY === true);
  if (pretty && logger.isLevelEnabled('info')) {
    // After the log lines of the start, not among them (a pretty logger writes from a worker).
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    process.stdout.write(formatBanner(described, bannerOptions));
  } else logReady(logger, described, bannerOptions);
  // Memory a burst left behind goes back to the system once the process is quiet again.
  const stopIdleCollection = startIdleCollection(logger);
  const code = await stopped;
  stopIdleCollection();
  clearInterval(keepAlive);
  logger.flush?.();
  return code;
}

/** Resolves with the exit code once a signal has stopped the service (130 on a second signal). */
function waitForSignals(
  service: Service,
  config: ServiceConfig,
  logger: Logger,
  afterStop: () => Promise<void>,
): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn({ signal }, 'Second signal received; exiting without waiting for the drain.');
        resolve(130);
        return;
      }
      stopping = true;
      logger.info(
        { signal, timeout_ms: config.service.shutdown_timeout_ms },
        'Stopping: draining receivers and flushing.',
      );
      service
        .shutdown(Date.now() + config.service.shutdown_timeout_ms)
        .then(async (report) => {
          await afterStop();
          if (report.lostItems > 0) {
            // Exit 0 promises that nothing accepted was lost; the ERROR lines above say what was.
            logger.error({ lost_items: report.lostItems }, 'Stopped, but accepted data was lost during shutdown.');
            resolve(1);
            return;
          }
          logger.info('Stopped cleanly.');
          resolve(0);
        })
        .catch((error: unknown) => {
          logger.error({ error: errorMessage(error) }, 'Shutdown did not complete cleanly.');
          logger.debug({ err: error }, 'Shutdown failure details.');
          resolve(1);
        });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

export async function validateCommand(options: GlobalOptions, catalog: Catalog): Promise<number> {
  if (!options.config) throw new Error('missing --config <file>');
  const { config } = await loadConfig(options.config, catalog, { sets: options.set });
  const count = config.receivers.size + config.processors.size + config.exporters.size + config.extensions.size;
  process.stdout.write(
    `${options.config}: valid (${Object.keys(config.pipelines).length} pipeline(s), ${count} component(s))\n`,
  );
  return 0;
}

function describeFactory(factory: Factory): string {
  const consumes = factory.kind === 'receiver' || factory.kind === 'extension' ? '' : factory.consumes;
  const produces = factory.kind === 'exporter' || factory.kind === 'extension' ? '' : factory.produces;
  const flow = `${consumes || '·'} → ${produces || '·'}`;
  return `${factory.kind.padEnd(10)} ${factory.type.padEnd(14)} ${flow.padEnd(16)} ${factory.stability.padEnd(12)} ${factory.description}`;
}

export async function componentsCommand(options: GlobalOptions & { type?: string }, catalog: Catalog): Promise<number> {
  let factories = await loadFactories(catalog);
  if (options.config) {
    // Include the plugins a config loads, so plugin authors can see their own components.
    const { data, baseDir } = readConfigFile(options.config, { sets: options.set });
    factories = [...factories, ...(await loadPlugins(data, baseDir))];
  }
  const registry = new Registry(factories);
  if (options.type) {
    const [kind, type] = options.type.split('/');
    const factory = registry.all().find((f) => f.kind === kind && f.type === type);
    if (!factory) {
      throw new Error(
        `no component ${options.type}; run \`tracepipe components\` to list them (kind/type, e.g. exporter/debug)`,
      );
    }
    process.stdout.write(`${describeFactory(factory)}\n\n${configTable(factory.configSchema)}`);
    return 0;
  }
  process.stdout.write(
    `${'KIND'.padEnd(10)} ${'TYPE'.padEnd(14)} ${'DATA'.padEnd(16)} ${'STABILITY'.padEnd(12)} DESCRIPTION\n`,
  );
  for (const factory of registry.all()) process.stdout.write(`${describeFactory(factory)}\n`);
  return 0;
}
