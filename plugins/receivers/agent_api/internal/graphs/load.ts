// Importing a graph module and classifying its export: a compiled graph (Pregel), a StateGraph
// builder to compile, or a factory taking the run config. Also the one place that turns any of
// these into a compiled graph bound to the server's checkpointer and store.

import { access } from 'node:fs/promises';
import { createRequire, register } from 'node:module';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Graph } from '@langchain/langgraph';
import type { BaseCheckpointSaver, BaseStore, StateSnapshot } from '@langchain/langgraph';
import { Pregel } from '@langchain/langgraph/pregel';
import type { RunnableConfig } from '@langchain/core/runnables';
import { GraphLoadError } from './errors.ts';
import type { GraphSpec } from './spec.ts';

/**
 * The compiled-graph surface the server uses (a LangGraph.js `Pregel`: `CompiledStateGraph`,
 * `createReactAgent`'s result, an `entrypoint`). Typed loosely on purpose: user graphs carry their
 * own state types, which the server never knows.
 */
export interface CompiledGraphLike {
  invoke(input: unknown, config?: RunnableConfig & Record<string, unknown>): Promise<unknown>;
  stream(input: unknown, config?: RunnableConfig & Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  streamEvents(input: unknown, config: RunnableConfig & Record<string, unknown>): AsyncIterable<unknown>;
  getState(config: RunnableConfig, options?: { subgraphs?: boolean }): Promise<StateSnapshot>;
  getStateHistory(config: RunnableConfig, options?: Record<string, unknown>): AsyncIterableIterator<StateSnapshot>;
  updateState(config: RunnableConfig, values: unknown, asNode?: string): Promise<RunnableConfig>;
  bulkUpdateState?(config: RunnableConfig, supersteps: unknown): Promise<RunnableConfig>;
  getGraphAsync(config?: RunnableConfig & { xray?: boolean | number }): Promise<{ toJSON(): unknown }>;
  getSubgraphsAsync(namespace?: string, recurse?: boolean): AsyncIterable<[string, CompiledGraphLike]>;
  withConfig(config: Record<string, unknown>): CompiledGraphLike;
  checkpointer?: BaseCheckpointSaver | boolean | undefined;
  store?: BaseStore | undefined;
  readonly builder?: unknown;
  readonly name?: string;
}

interface StateGraphLike {
  compile(options?: { checkpointer?: BaseCheckpointSaver | boolean; store?: BaseStore; name?: string }): unknown;
}

type GraphFactory = (config: RunnableConfig) => unknown;

/** What a module export turned out to be. */
export type LoadedExport =
  | { readonly kind: 'compiled'; readonly graph: CompiledGraphLike }
  | { readonly kind: 'builder'; readonly builder: StateGraphLike }
  | { readonly kind: 'factory'; readonly factory: GraphFactory };

export function isCompiledGraph(value: unknown): value is CompiledGraphLike {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.invoke === 'function' &&
    typeof candidate.streamEvents === 'function' &&
    typeof candidate.getGraphAsync === 'function' &&
    typeof candidate.getState === 'function'
  );
}

function isStateGraph(value: unknown): value is StateGraphLike {
  return typeof value === 'object' && value !== null && typeof (value as StateGraphLike).compile === 'function';
}

/**
 * LangChain's `createAgent` returns a wrapper that holds the real compiled graph under `.graph`;
 * unwrap it so streaming and introspection see the Pregel itself.
 */
function unwrapAgent(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && !isCompiledGraph(value)) {
    const inner = (value as { graph?: unknown }).graph;
    if (isCompiledGraph(inner)) return inner;
  }
  return value;
}

/** The query parameter that marks a module (and its local imports) as one reload's copy. */
export const RELOAD_PARAM = 'tracepipe-reload';

// A module loader hook for reloads (watch mode). Re-importing a graph file under a new URL gives a
// fresh copy of that file only: its own imports resolve to the URLs already in the module cache.
// This resolve hook passes the reload's marker on to every local import of a marked module — a
// `file:` URL outside node_modules — so the graph's whole local import tree (`./prompts.ts`,
// `../shared/tools.ts`, ...) is imported afresh, while packages stay as first loaded (one copy of
// `@langchain/langgraph` in the process). It runs after the other loaders' resolution (tsx's), on
// the URL they resolved, and leaves every unmarked import alone. Registered on the first reload.
const RELOAD_HOOK = `
const PARAM = ${JSON.stringify(RELOAD_PARAM)};
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const parent = context.parentURL;
  if (!parent || !parent.startsWith('file:') || !resolved.url.startsWith('file:')) return resolved;
  const generation = new URL(parent).searchParams.get(PARAM);
  if (generation === null) return resolved;
  const url = new URL(resolved.url);
  if (url.pathname.split('/').includes('node_modules') || url.searchParams.has(PARAM)) return resolved;
  url.searchParams.set(PARAM, generation);
  return { ...resolved, url: url.href };
}
`;
let reloadHookRegistered = false;

function registerReloadHook(): void {
  if (reloadHookRegistered) return;
  reloadHookRegistered = true;
  register(`data:text/javascript,${encodeURIComponent(RELOAD_HOOK)}`);
}

function where(spec: GraphSpec): string {
  return `graph "${spec.graphId}" (${spec.path}:${spec.exportName})`;
}

/**
 * Imports the module of `spec` and classifies its export; throws `GraphLoadError` naming it.
 * `generation` > 0 imports a fresh copy of the module and of its local imports (a reload).
 */
export async function loadExport(spec: GraphSpec, generation = 0): Promise<LoadedExport> {
  try {
    await access(spec.path);
  } catch (error) {
    throw new GraphLoadError('file_missing', spec.graphId, `${where(spec)}: file not found`, { cause: error });
  }
  let module: Record<string, unknown>;
  try {
    // A reload (watch mode) imports the module afresh under a new URL, and its local imports with
    // it (the hook above); packages stay as first loaded.
    if (generation > 0) registerReloadHook();
    const url = pathToFileURL(spec.path).href + (generation > 0 ? `?${RELOAD_PARAM}=${generation}` : '');
    module = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new GraphLoadError(
      'import_failed',
      spec.graphId,
      `${where(spec)}: import failed: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  if (!(spec.exportName in module) || module[spec.exportName] === undefined) {
    const available = Object.keys(module).filter((key) => key !== '__esModule');
    throw new GraphLoadError(
      'export_missing',
      spec.graphId,
      `${where(spec)}: the module has no export "${spec.exportName}" (exports: ${available.join(', ') || 'none'})`,
    );
  }
  // A module may export a promise of a graph (top-level async construction).
  const value = unwrapAgent(await module[spec.exportName]);
  const loaded = classify(value);
  if (!loaded) {
    throw new GraphLoadError(
      'not_a_graph',
      spec.graphId,
      `${where(spec)}: the export is not a compiled graph, a StateGraph or a graph factory (got ${describe(value)})`,
    );
  }
  return loaded;
}

function classify(value: unknown): LoadedExport | undefined {
  if (isCompiledGraph(value)) return { kind: 'compiled', graph: value };
  if (isStateGraph(value)) return { kind: 'builder', builder: value };
  if (typeof value === 'function') return { kind: 'factory', factory: value as GraphFactory };
  return undefined;
}

/**
 * Whether the export was built with another copy of `@langchain/langgraph` than the server's:
 * its compiled graph is not the server's `Pregel`, or its builder not the server's `Graph`. (A
 * factory's graph is not known before a run.) The process then holds two copies of LangChain: the
 * graph runs on the copy its own project resolves, on which the server's replacements of LangChain
 * internals (`../runtime/`) are not installed, and LangChain's classes differ between the copies.
 */
export function builtWithAnotherLangGraph(loaded: LoadedExport): boolean {
  if (loaded.kind === 'compiled') return !(loaded.graph instanceof Pregel);
  if (loaded.kind === 'builder') return !(loaded.builder instanceof Graph);
  return false;
}

/** The folder of the `@langchain/langgraph` the server itself uses (for messages). */
export function serverLangGraphDir(): string {
  return dirname(createRequire(import.meta.url).resolve('@langchain/langgraph/package.json'));
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  return (value as object).constructor?.name ?? 'object';
}

/** How the server binds persistence to a graph; `checkpointer: undefined` keeps the graph's own. */
export interface BindOptions {
  readonly checkpointer?: BaseCheckpointSaver | false;
  readonly store?: BaseStore;
}

/**
 * Returns a compiled graph bound to the given checkpointer and store. A compiled export is copied
 * (`withConfig` builds a new Pregel from the same nodes and channels) so the user's module export
 * is never mutated and two bindings never see each other's persistence.
 */
export function bindCompiled(graph: CompiledGraphLike, options: BindOptions): CompiledGraphLike {
  const copy = graph.withConfig({});
  if (options.checkpointer !== undefined)
    copy.checkpointer = options.checkpointer === false ? undefined : options.checkpointer;
  if (options.store !== undefined) copy.store = options.store;
  return copy;
}

/** Compiles a StateGraph builder with the server's persistence. */
export function compileBuilder(graphId: string, builder: StateGraphLike, options: BindOptions): CompiledGraphLike {
  const compiled = unwrapAgent(
    builder.compile({
      ...(options.checkpointer !== undefined ? { checkpointer: options.checkpointer } : {}),
      ...(options.store !== undefined ? { store: options.store } : {}),
    }),
  );
  if (!isCompiledGraph(compiled)) {
    throw new GraphLoadError('not_a_graph', graphId, `graph "${graphId}": compile() did not return a compiled graph`);
  }
  return compiled;
}

/** Calls a graph factory with the run config and binds what it returns. */
export async function buildFromFactory(
  graphId: string,
  factory: GraphFactory,
  config: RunnableConfig,
  options: BindOptions,
): Promise<CompiledGraphLike> {
  let produced: unknown;
  try {
    produced = unwrapAgent(await factory(config));
  } catch (error) {
    throw new GraphLoadError(
      'factory_failed',
      graphId,
      `graph "${graphId}": the graph factory threw: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  if (isCompiledGraph(produced)) return bindCompiled(produced, options);
  if (isStateGraph(produced)) return compileBuilder(graphId, produced, options);
  throw new GraphLoadError(
    'factory_failed',
    graphId,
    `graph "${graphId}": the graph factory returned ${describe(produced)}, not a compiled graph or a StateGraph`,
  );
}
