// The `tracepipe` command line: run a config, validate it, list components. A distribution — the
// repository's `distribution/components.ts`, or your own build — passes the components it offers.
// This is the only module that calls process.exit; everything below it throws typed errors.
//
// It imports only the argument parser: the commands (and with them the pipeline, Fastify, pino,
// ajv) load when one runs, so `--version` and `--help` answer at once.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import type { Catalog } from '../pipeline/catalog.ts';
import { TracepipeError } from '../errors.ts';
import { errorMessage } from '../pipeline/errors.ts';
import { hintOf } from './hinted.ts';
import { TEMPLATES } from './init.ts';
import type { TemplateName } from './init.ts';
import type { LogLevel } from '../telemetry/levels.ts';
import { LOG_LEVELS } from '../telemetry/levels.ts';

/** What a build of the `tracepipe` command offers. */
export interface Distribution {
  /** The components it can run, loaded as configs need them. */
  readonly components: Catalog;
  /** The program name in help and errors; default `tracepipe`. */
  readonly name?: string;
  /** What `--version` prints; default: the version of the tracepipe package. */
  readonly version?: string;
  /** The one-line description in `--help`. */
  readonly description?: string;
}

interface GlobalOptions {
  config?: string;
  set: string[];
  logLevel?: LogLevel;
  watch?: boolean;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The version in tracepipe's package.json (found upwards from this module, in src/ or dist/). */
export function tracepipeVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (json.name === 'tracepipe' && json.version) return json.version;
    } catch {
      // No package.json here; keep looking upwards.
    }
    const parent = dirname(dir);
    if (parent === dir) return '0.0.0';
    dir = parent;
  }
}

/** The config file given as an argument (`tracepipe validate pipeline.yaml`) or with `--config`. */
function withConfigFile<T extends GlobalOptions>(file: string | undefined, options: T): T {
  if (file === undefined) return options;
  if (options.config !== undefined && options.config !== file) {
    throw new Error(`two config files given: ${file} and --config ${options.config}; pass one`);
  }
  return { ...options, config: file };
}

export function buildProgram(distribution: Distribution, exit: (code: number) => void): Command {
  const catalog = distribution.components;
  const version = distribution.version ?? tracepipeVersion();
  const commands = () => import('./commands.ts');
  const program = new Command(distribution.name ?? 'tracepipe')
    .description(
      distribution.description ??
        'An OpenTelemetry-Collector-style pipeline for GenAI traces, with an agent deployment server.',
    )
    .version(version)
    .enablePositionalOptions()
    .option('-c, --config <file>', 'pipeline configuration (YAML)')
    .option('--set <key.path=value>', 'override a config value (repeatable)', collect, [])
    .addOption(new Option('--log-level <level>', 'override service.telemetry.logs.level').choices(LOG_LEVELS))
    .option('-w, --watch', 'development: reload the graphs when their files change (the server keeps running)')
    .action(async (options: GlobalOptions) => {
      if (!options.config) {
        program.help({ error: true });
        return;
      }
      exit(await (await commands()).runConfig({ ...options, version }, catalog));
    });

  const withConfigOptions = (command: Command) =>
    command
      .option('-c, --config <file>', 'pipeline configuration (YAML)')
      .option('--set <key.path=value>', 'override a config value (repeatable)', collect, [])
      .addOption(new Option('--log-level <level>', 'override service.telemetry.logs.level').choices(LOG_LEVELS));

  withConfigOptions(
    program
      .command('run')
      .description('run the pipelines of a config until SIGTERM/SIGINT')
      .argument('[file]', 'pipeline configuration (YAML); the same as --config <file>')
      .option('-w, --watch', 'development: reload the graphs when their files change (the server keeps running)'),
  ).action(async (file: string | undefined, options: GlobalOptions) =>
    exit(await (await commands()).runConfig({ ...withConfigFile(file, options), version }, catalog)),
  );
  withConfigOptions(
    program
      .command('validate')
      .description('validate a config without starting it')
      .argument('[file]', 'pipeline configuration (YAML); the same as --config <file>'),
  ).action(async (file: string | undefined, options: GlobalOptions) =>
    exit(await (await commands()).validateCommand(withConfigFile(file, options), catalog)),
  );
  program
    .command('init')
    .description('create a new agent project (a LangGraph.js graph, its config and scripts) in an empty folder')
    .argument('[dir]', 'the folder to create it in (created if missing; must be empty)', '.')
    .addOption(
      new Option('-t, --template <name>', 'chat agent, tool-calling agent, or human in the loop')
        .choices(TEMPLATES)
        .default('chat'),
    )
    .option(
      '--tracepipe <spec>',
      'the project’s dependency on tracepipe (default: from a clone, a tarball packed into vendor/; else ^<version>)',
    )
    .action(async (dir: string, options: { template: TemplateName; tracepipe?: string }) => {
      const { initProject } = await import('./init.ts');
      const result = initProject(dir, options.template, { tracepipe: options.tracepipe });
      const cd = result.dir === '.' ? '' : `  cd ${result.dir}\n`;
      process.stdout.write(
        `Created an agent project (template ${options.template}) in ${result.dir}: ${result.files.join(', ')}\n\n` +
          `Next:\n${cd}  npm install\n  npm start        # then open the web UI and the trace explorer it prints\n`,
      );
      exit(0);
    });

  withConfigOptions(
    program
      .command('components')
      .description('list the registered components, or one component’s config table')
      .option('-t, --type <kind/type>', 'show the config table of one component, e.g. exporter/debug'),
  ).action(async (options: GlobalOptions & { type?: string }) =>
    exit(await (await commands()).componentsCommand(options, catalog)),
  );
  return program;
}

/**
 * `<name>: <reason> [CODE]`; a reason of several lines (every problem of a config) puts the code on
 * its first line and indents the problems below it, one per line.
 */
export function formatError(name: string, error: unknown): string {
  const [head = '', ...rest] = errorMessage(error).split('\n');
  const code = error instanceof TracepipeError ? ` [${error.code}]` : '';
  if (rest.length === 0) return `${name}: ${head}${code}\n`;
  const colon = head.endsWith(':') ? ':' : '';
  return `${name}: ${head.slice(0, head.length - colon.length)}${code}${colon}\n${rest.map((line) => `  ${line}\n`).join('')}`;
}

/**
 * Runs the command line of a distribution: parses argv, runs the command, exits with its code. An
 * error becomes one line on stderr — `<name>: <reason> [TP_ERR_...]` — and, when the command knows
 * how to fix it, a `hint:` line; the stack trace only with `--log-level debug` or `trace`.
 */
export async function runCommandLine(argv: readonly string[], distribution: Distribution): Promise<void> {
  const name = distribution.name ?? 'tracepipe';
  const program = buildProgram(distribution, (code) => process.exit(code));
  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    process.stderr.write(formatError(name, error));
    const hint = hintOf(error);
    if (hint) process.stderr.write(`${name}: hint: ${hint}\n`);
    if (/--log-level[= ](debug|trace)\b/.test(argv.join(' ')) && error instanceof Error && error.stack) {
      process.stderr.write(`${error.stack}\n`);
    }
    process.exit(1);
  }
}
