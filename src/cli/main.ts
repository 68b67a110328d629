// The `tracepipe` command line: run a config, validate it, list components.
// This is the only module that calls process.exit; everything below it throws typed errors.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { builtinRegistry } from '../../plugins/index.ts';
import { configTable } from '../config/describe.ts';
import { loadConfigFile, parseConfigText, registryWithPlugins } from '../config/load.ts';
import { TracepipeError } from '../errors.ts';
import type { Factory } from '../pipeline/component.ts';
import { errorMessage } from '../pipeline/errors.ts';
import { Service } from '../pipeline/service.ts';
import { createHttpServer, listen } from '../http/server.ts';
import type { LogLevel } from '../telemetry/logger.ts';
import { LOG_LEVELS, createLogger } from '../telemetry/logger.ts';
import { createMetricsRegistry } from '../telemetry/metrics.ts';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

interface GlobalOptions {
  config?: string;
  set: string[];
  logLevel?: LogLevel;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Loads and runs a config until SIGTERM/SIGINT; resolves with the process exit code. */
export async function runConfig(options: GlobalOptions): Promise<number> {
  if (!options.config) throw new Error('missing --config <file>');
  const config = await loadConfigFile(options.config, builtinRegistry(), { sets: options.set });
  const logs = config.service.telemetry.logs;
  const logger = createLogger({ level: options.logLevel ?? logs.level, format: logs.format });
  const metricsConfig = config.service.telemetry.metrics;
  const metrics = createMetricsRegistry({ processMetrics: metricsConfig.process_metrics });
  const service = new Service(config, { logger, metrics });
  // A bug in one component must not take every tenant's buffered data down with the process:
  // log it loudly and keep serving (the Collector forbids crashing on bad input for this reason).
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'Unhandled promise rejection; continuing.'));

  let metricsServer: ReturnType<typeof createHttpServer> | undefined;
  if (metricsConfig.listen) {
    const separator = metricsConfig.listen.lastIndexOf(':');
    metricsServer = createHttpServer({ logger, host: service.host, bodyLimit: 1024, metricsPath: metricsConfig.path });
    await listen(metricsServer, metricsConfig.listen.slice(0, separator), Number(metricsConfig.listen.slice(separator + 1)));
  }

  // A pipeline without listeners (e.g. a file-tailing receiver) has no handle that keeps the event
  // loop alive; this timer does, until a signal stops the service.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn({ signal }, 'Second signal received; exiting without waiting for the drain.');
        resolve(130);
        return;
      }
      stopping = true;
      logger.info({ signal, timeout_ms: config.service.shutdown_timeout_ms }, 'Stopping: draining receivers and flushing.');
      service
        .shutdown(Date.now() + config.service.shutdown_timeout_ms)
        .then(async (report) => {
          await metricsServer?.close();
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
          logger.error({ err: error }, 'Shutdown did not complete cleanly.');
          resolve(1);
        });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });

  try {
    await service.start();
  } catch (error) {
    clearInterval(keepAlive);
    await metricsServer?.close();
    throw error;
  }
  const code = await stopped;
  clearInterval(keepAlive);
  logger.flush?.();
  return code;
}

async function validateCommand(options: GlobalOptions): Promise<number> {
  if (!options.config) throw new Error('missing --config <file>');
  const config = await loadConfigFile(options.config, builtinRegistry(), { sets: options.set });
  const count = config.receivers.size + config.processors.size + config.exporters.size;
  process.stdout.write(
    `${options.config}: valid (${Object.keys(config.pipelines).length} pipeline(s), ${count} component(s))\n`,
  );
  return 0;
}

function describeFactory(factory: Factory): string {
  const consumes = factory.kind === 'receiver' ? '' : factory.consumes;
  const produces = factory.kind === 'exporter' ? '' : factory.produces;
  const flow = `${consumes || '·'} → ${produces || '·'}`;
  return `${factory.kind.padEnd(10)} ${factory.type.padEnd(14)} ${flow.padEnd(16)} ${factory.stability.padEnd(12)} ${factory.description}`;
}

async function componentsCommand(options: GlobalOptions & { type?: string }): Promise<number> {
  let registry = builtinRegistry();
  if (options.config) {
    // Include the plugins a config loads, so plugin authors can see their own components.
    const data = parseConfigText(readFileSync(options.config, 'utf8'), { sets: options.set }, options.config);
    registry = await registryWithPlugins(data, registry, dirname(resolve(options.config)));
  }
  if (options.type) {
    const [kind, type] = options.type.split('/');
    const factory = registry.all().find((f) => f.kind === kind && f.type === type);
    if (!factory) {
      throw new Error(`no component ${options.type}; run \`tracepipe components\` to list them (kind/type, e.g. exporter/debug)`);
    }
    process.stdout.write(`${describeFactory(factory)}\n\n${configTable(factory.configSchema)}`);
    return 0;
  }
  process.stdout.write(`${'KIND'.padEnd(10)} ${'TYPE'.padEnd(14)} ${'DATA'.padEnd(16)} ${'STABILITY'.padEnd(12)} DESCRIPTION\n`);
  for (const factory of registry.all()) process.stdout.write(`${describeFactory(factory)}\n`);
  return 0;
}

export function buildProgram(exit: (code: number) => void): Command {
  const program = new Command('tracepipe')
    .description('An OpenTelemetry-Collector-style pipeline for GenAI traces, with an agent deployment server.')
    .version(packageJson.version)
    .enablePositionalOptions()
    .option('-c, --config <file>', 'pipeline configuration (YAML)')
    .option('--set <key.path=value>', 'override a config value (repeatable)', collect, [])
    .addOption(new Option('--log-level <level>', 'override service.telemetry.logs.level').choices(LOG_LEVELS))
    .action(async (options: GlobalOptions) => {
      if (!options.config) {
        program.help({ error: true });
        return;
      }
      exit(await runConfig(options));
    });

  const withConfigOptions = (command: Command) =>
    command
      .option('-c, --config <file>', 'pipeline configuration (YAML)')
      .option('--set <key.path=value>', 'override a config value (repeatable)', collect, [])
      .addOption(new Option('--log-level <level>', 'override service.telemetry.logs.level').choices(LOG_LEVELS));

  withConfigOptions(program.command('run').description('run the pipelines of a config until SIGTERM/SIGINT')).action(
    async (options: GlobalOptions) => exit(await runConfig(options)),
  );
  withConfigOptions(program.command('validate').description('validate a config without starting it')).action(
    async (options: GlobalOptions) => exit(await validateCommand(options)),
  );
  withConfigOptions(
    program
      .command('components')
      .description('list the registered components, or one component’s config table')
      .option('-t, --type <kind/type>', 'show the config table of one component, e.g. exporter/debug'),
  ).action(async (options: GlobalOptions & { type?: string }) => exit(await componentsCommand(options)));
  return program;
}

/** Entry point: parses argv, runs the command, exits with its code; errors become one line. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram((code) => process.exit(code));
  try {
    await program.parseAsync(argv);
  } catch (error) {
    const code = error instanceof TracepipeError ? ` [${error.code}]` : '';
    process.stderr.write(`tracepipe: ${errorMessage(error)}${code}\n`);
    process.exit(1);
  }
}
