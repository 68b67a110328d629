// Turns a YAML file into a validated service configuration, in two steps kept apart:
//   parse — read the file, apply `--set` overrides, expand environment variables;
//   validate — pure checks: top-level schema, each component's schema and cross-field rules, and
//   the pipeline graph. Every problem is collected and reported at once, each with its YAML path.
// Plugin modules named in `plugins:` are imported between the two so their factories validate too.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseDocument, parse as parseYaml, YAMLParseError } from 'yaml';
import { TracepipeError } from '../errors.ts';
import type { ComponentKind, Factory } from '../pipeline/component.ts';
import { Registry } from '../pipeline/registry.ts';
import { validateAgainst } from './ajv.ts';
import { expandDocument } from './expand.ts';
import { loadPlugin } from './plugins.ts';
import { closestName, didYouMean } from './suggest.ts';
import type { PipelineConfig, RawConfig, ServiceSection } from './schema.ts';
import { topLevelSchema } from './schema.ts';

const SECTION_OF: Record<ComponentKind, 'receivers' | 'processors' | 'exporters' | 'extensions'> = {
  receiver: 'receivers',
  processor: 'processors',
  exporter: 'exporters',
  extension: 'extensions',
};

export interface ComponentConfig {
  /** `type` or `type/name`. */
  readonly id: string;
  readonly kind: ComponentKind;
  readonly factory: Factory;
  /** Validated, with schema defaults applied, frozen. */
  readonly config: unknown;
}

export interface ServiceConfig {
  /** The config file's directory: relative paths in component configs resolve against it. */
  readonly baseDir: string;
  readonly service: ServiceSection;
  readonly receivers: ReadonlyMap<string, ComponentConfig>;
  readonly processors: ReadonlyMap<string, ComponentConfig>;
  readonly exporters: ReadonlyMap<string, ComponentConfig>;
  /** The extensions `service.extensions` enables, in its order (the start order). */
  readonly extensions: ReadonlyMap<string, ComponentConfig>;
  readonly pipelines: Readonly<Record<string, PipelineConfig>>;
}

export interface LoadOptions {
  /** `key.path=value` overrides, applied before env expansion; the value is read as YAML, `null` removes the key. */
  readonly sets?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

/** Parses YAML text into a plain object, with overrides and env expansion applied. */
export function parseConfigText(text: string, options: LoadOptions = {}, source = 'config'): unknown {
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    const messages = document.errors.map((error: YAMLParseError) => {
      const position = error.linePos?.[0];
      const where = position ? `${source}:${position.line}:${position.col}` : source;
      return `${where}: ${error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`;
    });
    // After the first syntax error the parser reads the rest of the file out of step; what it
    // reports next follows from the first, so only that one is shown.
    const more = messages.length > 1 ? ` (and ${messages.length - 1} more YAML errors after it)` : '';
    throw new TracepipeError('TP_ERR_CONFIG_PARSE', [`${messages[0]}${more}`]);
  }
  // A parsed document's `contents` is typed as parsed nodes, which carry source ranges that a node
  // made here has none of; an empty file becomes an empty map all the same, so no type fits but a
  // parsed one.
  if (document.contents === null) document.contents = document.createNode({}) as unknown as typeof document.contents;
  const problems: string[] = [];
  for (const assignment of options.sets ?? []) {
    const equals = assignment.indexOf('=');
    if (equals <= 0) {
      problems.push(`--set ${assignment}: expected key.path=value`);
      continue;
    }
    const path = assignment.slice(0, equals).split('.');
    const value = parseYaml(assignment.slice(equals + 1)) ?? null;
    // `key=null` removes the key, so that its default applies again, or an option the file sets
    // can give way to one it excludes (`langgraph_config=null` beside `graphs=...`).
    if (value === null) document.deleteIn(path);
    else document.setIn(path, document.createNode(value));
  }
  for (const error of expandDocument(document, options.env ?? process.env)) {
    problems.push(`${error.path || '(root)'}: ${error.message}`);
  }
  if (problems.length > 0) throw new TracepipeError('TP_ERR_CONFIG_INVALID', [problems.join('\n')]);
  return document.toJS();
}

/** A config file read and parsed (overrides applied, variables expanded), not yet validated. */
export interface ParsedConfigFile {
  /** The parsed data, to hand to `loadConfigObject` or `validateConfig`. */
  readonly data: unknown;
  /** The file's directory: relative paths in the config resolve against it. */
  readonly baseDir: string;
  /** The file's text as read. */
  readonly text: string;
}

/** Reads and parses a config file (the first half of `loadConfigFile`). */
export function readConfigFile(path: string, options: LoadOptions = {}): ParsedConfigFile {
  const absolute = resolve(path);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new TracepipeError('TP_ERR_CONFIG_READ', [path, (error as NodeJS.ErrnoException).code ?? String(error)]);
  }
  return { data: parseConfigText(text, options, path), baseDir: dirname(absolute), text };
}

/** Reads, parses, loads plugins and validates a config file; throws with every problem found. */
export async function loadConfigFile(
  path: string,
  registry: Registry,
  options: LoadOptions = {},
): Promise<ServiceConfig> {
  const { data, baseDir } = readConfigFile(path, options);
  return loadConfigObject(data, registry, baseDir);
}

/** The factories of the modules in the config data's `plugins:` list, in order. */
export async function loadPlugins(data: unknown, baseDir: string): Promise<Factory[]> {
  const plugins = (data as { plugins?: unknown } | null)?.plugins;
  if (!Array.isArray(plugins) || !plugins.every((entry) => typeof entry === 'string')) return [];
  const factories: Factory[] = [];
  for (const specifier of plugins as string[]) factories.push(...(await loadPlugin(specifier, baseDir)));
  return factories;
}

/** A copy of the registry with the factories of the config data's `plugins:` added. */
export async function registryWithPlugins(data: unknown, registry: Registry, baseDir: string): Promise<Registry> {
  const factories = await loadPlugins(data, baseDir);
  if (factories.length === 0) return registry;
  const effective = new Registry(registry.all());
  for (const factory of factories) effective.register(factory);
  return effective;
}

/** Loads the `plugins:` of parsed config data into a copy of the registry, then validates. */
export async function loadConfigObject(data: unknown, registry: Registry, baseDir: string): Promise<ServiceConfig> {
  const effective = await registryWithPlugins(data, registry, baseDir);
  const { config, errors } = validateConfig(data, effective, baseDir);
  if (errors.length > 0) throw new TracepipeError('TP_ERR_CONFIG_INVALID', [errors.join('\n')]);
  return config!;
}

/** Pure validation of parsed config data. Returns every error; `config` only when there are none. */
export function validateConfig(
  data: unknown,
  registry: Registry,
  baseDir: string,
): { config?: ServiceConfig; errors: string[] } {
  const raw = structuredClone(data ?? {}) as RawConfig;
  const errors = validateAgainst(topLevelSchema, raw, '');
  // A mistake in a setting of the service itself (its log level, its shutdown timeout) leaves the
  // components and pipelines readable: they are checked too, so that every mistake shows at once.
  // Any other top-level mistake (a section that is not a map, a malformed pipeline) stops here.
  if (errors.some((error) => !SERVICE_SETTINGS.some((path) => error.startsWith(path)))) return { errors };

  const sections = {} as Record<ComponentKind, Map<string, ComponentConfig>>;
  // Components whose type is unknown: already reported, so the graph checks stay quiet about them.
  const unknownTypes = new Set<string>();
  for (const kind of ['receiver', 'processor', 'exporter', 'extension'] as const) {
    sections[kind] = new Map();
    const section = SECTION_OF[kind];
    for (const [id, value] of Object.entries(raw[section])) {
      const type = id.split('/')[0]!;
      const factory = registry.get(kind, type);
      const path = `${section}.${id}`;
      if (!factory) {
        const known = registry.types(kind);
        errors.push(
          `${path}: unknown ${kind} type "${type}" (known: ${known.join(', ') || 'none'})${didYouMean(type, known)}`,
        );
        unknownTypes.add(`${kind}:${id}`);
        continue;
      }
      const config = value ?? {};
      const schemaErrors = validateAgainst(factory.configSchema, config, path);
      errors.push(...schemaErrors);
      if (schemaErrors.length === 0 && factory.validate) {
        errors.push(...factory.validate(config).map((message) => prefixed(path, message)));
      }
      sections[kind].set(id, { id, kind, factory, config: deepFreeze(config) });
    }
  }

  errors.push(...checkGraph(raw.service.pipelines, sections, unknownTypes));
  errors.push(...checkExtensions(raw.service.extensions, sections.extension, unknownTypes));
  errors.push(...checkListenConflicts(sections));
  if (errors.length > 0) return { errors };
  const extensions = new Map(raw.service.extensions.map((id) => [id, sections.extension.get(id)!]));
  return {
    errors,
    config: {
      baseDir,
      service: raw.service,
      receivers: sections.receiver,
      processors: sections.processor,
      exporters: sections.exporter,
      extensions,
      pipelines: raw.service.pipelines,
    },
  };
}

/** Top-level paths whose mistakes do not keep the components and pipelines from being checked. */
const SERVICE_SETTINGS = ['service.telemetry.', 'service.telemetry:', 'service.shutdown_timeout_ms:'];

function prefixed(path: string, message: string): string {
  return message.startsWith(`${path}.`) || message.startsWith(`${path}:`) ? message : `${path}.${message}`;
}

/** Unknown ids, unused components, empty pipelines and data-type mismatches between stages. */
function checkGraph(
  pipelines: Record<string, PipelineConfig>,
  sections: Record<ComponentKind, Map<string, ComponentConfig>>,
  unknownTypes: ReadonlySet<string> = new Set(),
): string[] {
  const errors: string[] = [];
  const used = new Set<string>();
  for (const [name, pipeline] of Object.entries(pipelines)) {
    const base = `service.pipelines.${name}`;
    if (pipeline.receivers.length === 0) errors.push(`${base}.receivers: a pipeline needs at least one receiver`);
    if (pipeline.exporters.length === 0) errors.push(`${base}.exporters: a pipeline needs at least one exporter`);
    const lookup = (kind: ComponentKind, id: string, index: number): ComponentConfig | undefined => {
      used.add(`${kind}:${id}`);
      const found = sections[kind].get(id);
      if (!found && !unknownTypes.has(`${kind}:${id}`)) {
        const misspelt = [...unknownTypes].flatMap((key) =>
          key.startsWith(`${kind}:`) ? [key.slice(kind.length + 1)] : [],
        );
        const closest = closestName(id, [...sections[kind].keys(), ...misspelt]);
        // The pipeline names a component whose definition's key is misspelt ("genia" for "genai"):
        // that key's unknown-type error already suggests the pipeline's name; suggesting the
        // misspelling here would point the wrong way.
        if (closest === undefined || !misspelt.includes(closest)) {
          errors.push(
            `${base}.${SECTION_OF[kind]}.${index}: ${kind} "${id}" is not defined under ${SECTION_OF[kind]}${didYouMean(id, sections[kind].keys())}`,
          );
        }
      }
      return found;
    };
    // A stage whose component is unknown or undefined has already been reported; what flows past
    // it is unknown, so the data types after it are not checked.
    const receivers = pipeline.receivers.map((id, i) => lookup('receiver', id, i));
    const processors = pipeline.processors.map((id, i) => lookup('processor', id, i));
    const exporters = pipeline.exporters.map((id, i) => lookup('exporter', id, i));

    // Walk the chain: every receiver must produce what the first processor consumes, and so on.
    const produced = new Set(receivers.flatMap((r) => (r?.factory.kind === 'receiver' ? [r.factory.produces] : [])));
    if (produced.size > 1) {
      errors.push(`${base}.receivers: receivers produce different data types (${[...produced].join(', ')})`);
    }
    let current = receivers.includes(undefined) ? undefined : [...produced][0];
    let currentFrom = 'its receivers';
    for (const processor of processors) {
      if (!processor || processor.factory.kind !== 'processor') {
        current = undefined;
        continue;
      }
      // It passes on what reaches it: the type flowing past it stays.
      if (processor.factory.consumes === 'any' || processor.factory.produces === 'any') continue;
      if (current && processor.factory.consumes !== current) {
        errors.push(
          `${base}.processors: "${processor.id}" consumes ${processor.factory.consumes} but ${currentFrom} produce ${current}`,
        );
      }
      current = processor.factory.produces;
      currentFrom = `"${processor.id}"`;
    }
    for (const exporter of exporters) {
      if (!exporter || exporter.factory.kind !== 'exporter') continue;
      if (current && exporter.factory.consumes !== current && exporter.factory.consumes !== 'any') {
        errors.push(
          `${base}.exporters: "${exporter.id}" consumes ${exporter.factory.consumes} but ${currentFrom} produce ${current}`,
        );
      }
    }
  }
  for (const kind of ['receiver', 'processor', 'exporter'] as const) {
    for (const id of sections[kind].keys()) {
      if (!used.has(`${kind}:${id}`)) {
        errors.push(`${SECTION_OF[kind]}.${id}: defined but not used in any pipeline`);
      }
    }
  }
  return errors;
}

/** `service.extensions` names defined extensions, and every defined extension is enabled. */
function checkExtensions(
  enabled: readonly string[],
  defined: ReadonlyMap<string, ComponentConfig>,
  unknownTypes: ReadonlySet<string>,
): string[] {
  const errors: string[] = [];
  enabled.forEach((id, index) => {
    if (defined.has(id) || unknownTypes.has(`extension:${id}`)) return;
    const known = [
      ...defined.keys(),
      ...[...unknownTypes].flatMap((key) => (key.startsWith('extension:') ? [key.slice('extension:'.length)] : [])),
    ];
    errors.push(
      `service.extensions.${index}: extension "${id}" is not defined under extensions${didYouMean(id, known)}`,
    );
  });
  for (const id of defined.keys()) {
    if (!enabled.includes(id)) errors.push(`extensions.${id}: defined but not enabled in service.extensions`);
  }
  return errors;
}

/** Two components listening on the same host:port would fail at start-up; report it now. */
function checkListenConflicts(sections: Record<ComponentKind, Map<string, ComponentConfig>>): string[] {
  const owners = new Map<string, string>();
  const errors: string[] = [];
  for (const kind of ['extension', 'receiver', 'processor', 'exporter'] as const) {
    for (const component of sections[kind].values()) {
      for (const address of component.factory.listenAddresses?.(component.config) ?? []) {
        const port = address.slice(address.lastIndexOf(':') + 1);
        if (port === '0') continue;
        const host = address.slice(0, address.lastIndexOf(':'));
        // A wildcard host conflicts with every host on the same port.
        const key = ['0.0.0.0', '::', '', '[::]'].includes(host) ? `*:${port}` : address;
        const clash =
          owners.get(key) ??
          owners.get(`*:${port}`) ??
          (key.startsWith('*:') ? [...owners].find(([k]) => k.endsWith(`:${port}`))?.[1] : undefined);
        const path = `${SECTION_OF[kind]}.${component.id}`;
        if (clash) errors.push(`${path}: listens on ${address}, which ${clash} already uses`);
        else owners.set(key, path);
      }
    }
  }
  return errors;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
