// The deployment's graphs, loaded once at start-up: hands the API server compiled graphs bound to
// its checkpointer and store, and answers the introspection endpoints (drawing, schemas,
// subgraphs). This module is the interface between graph loading and the server.

import type { BaseCheckpointSaver, BaseStore } from '@langchain/langgraph';
import type { RunnableConfig } from '@langchain/core/runnables';
import { GraphNotFoundError } from './errors.ts';
import { bindCompiled, buildFromFactory, builtWithAnotherLangGraph, compileBuilder, loadExport } from './load.ts';
import type { BindOptions, CompiledGraphLike, LoadedExport } from './load.ts';
import type { Logger } from 'pino';
import { channelSchemas, runtimeSchemas, toGraphSchemas } from './schemas.ts';
import { schemaHelpersFor } from './schema-helpers.ts';
import type { GraphSchemas, SubgraphSchemas } from './schemas.ts';
import type { GraphSpec } from './spec.ts';
import { TypeSchemaExtraction } from './type-schemas/index.ts';

export { GraphLoadError, GraphNotFoundError } from './errors.ts';
export type { GraphLoadFailure } from './errors.ts';
export type { CompiledGraphLike } from './load.ts';
export type { GraphSchemas, SubgraphSchemas } from './schemas.ts';
export { parseGraphEnv, parseGraphSpecs } from './spec.ts';
export type { GraphSpec, GraphSpecInput } from './spec.ts';
export { systemAssistantId } from './assistant-id.ts';

export interface GetGraphOptions {
  /** The run config; a graph factory is called with it (default `{configurable: {}}`). */
  readonly config?: RunnableConfig;
  /** The server's checkpointer; `false` runs without one; `undefined` keeps the graph's own. */
  readonly checkpointer?: BaseCheckpointSaver | false;
  readonly store?: BaseStore;
}

export interface GraphRegistryOptions {
  /**
   * Reads the TypeScript types of graphs that carry no runtime schema, in a worker started with
   * the registry (README, "Graph schemas"); without it their schemas list the state channels.
   */
  readonly typeSchemas?: {
    readonly timeoutMs: number;
    readonly logger: Logger;
    /** Where the schemas read are kept between starts; without it, every start reads them. */
    readonly cacheDirectory?: string;
  };
}

interface Entry {
  readonly spec: GraphSpec;
  readonly loaded: LoadedExport;
  /** Bound copies of a static graph, per (checkpointer, store): binding is done once, not per run. */
  readonly bound: Map<unknown, Map<unknown, CompiledGraphLike>>;
  schemas?: SubgraphSchemas;
}

/** Reloads so far in this process: each one imports its modules under a URL of its own. */
let reloads = 0;

export class GraphRegistry {
  private typeSchemas?: TypeSchemaExtraction;
  /**
   * The start of the current extraction (`startTypeSchemas`), which first looks at every graph's
   * runtime schemas: a schema request that came meanwhile waits for it. Without the wait it found no
   * extraction, answered the channel list and kept it as the graph's schemas for good.
   */
  private typeSchemasStarting: Promise<void> = Promise.resolve();

  private constructor(
    private entries: ReadonlyMap<string, Entry>,
    private readonly options: GraphRegistryOptions,
  ) {}

  /**
   * Imports every graph module afresh and, once all of them loaded, replaces the graphs at once
   * (watch mode). Runs already executing keep the graph they started with; a graph that fails to
   * load leaves every graph as it was (the error is thrown). Graph ids stay those of `specs`.
   */
  async reload(specs: readonly GraphSpec[]): Promise<void> {
    const generation = ++reloads;
    const entries = new Map<string, Entry>();
    for (const spec of specs) {
      entries.set(spec.graphId, { spec, loaded: await loadExport(spec, generation), bound: new Map() });
    }
    this.entries = entries;
    if (this.typeSchemas) await this.startTypeSchemas();
  }

  /**
   * Imports every graph module (TypeScript works: tsx is registered in the process) and checks
   * each export. Fails on the first graph that cannot be loaded, with a `GraphLoadError` naming
   * the graph id, file and export; a deployment with a broken graph must not start half-way.
   */
  static async load(specs: readonly GraphSpec[], options: GraphRegistryOptions = {}): Promise<GraphRegistry> {
    const entries = new Map<string, Entry>();
    // Sequential on purpose: graph modules may share imports with side effects, and a failure is
    // then reported for the first broken graph in config order.
    for (const spec of specs) {
      const loaded = await loadExport(spec);
      entries.set(spec.graphId, { spec, loaded, bound: new Map() });
    }
    return new GraphRegistry(entries, options);
  }

  /** Stops a type extraction still running. */
  async close(): Promise<void> {
    await this.typeSchemas?.close('the server stopped');
  }

  /** The graphs built with another copy of `@langchain/langgraph` than the server's (`builtWithAnotherLangGraph`). */
  builtWithAnotherLangGraph(): string[] {
    return [...this.entries].filter(([, entry]) => builtWithAnotherLangGraph(entry.loaded)).map(([graphId]) => graphId);
  }

  /** Graph ids, in configuration order. */
  ids(): string[] {
    return [...this.entries.keys()];
  }

  has(graphId: string): boolean {
    return this.entries.has(graphId);
  }

  /** Where a graph comes from (for logs and the info endpoint). */
  spec(graphId: string): GraphSpec {
    return this.entry(graphId).spec;
  }

  /**
   * A compiled graph ready to run with the server's checkpointer and store. Static graphs are
   * bound once per (checkpointer, store) pair and the same instance is returned afterwards, which
   * is safe because a compiled graph holds no per-run state. Factories are called for every call
   * with the run config, as the reference does. Throws `GraphNotFoundError` for an unknown id and
   * `GraphLoadError` when a factory fails.
   */
  async get(graphId: string, options: GetGraphOptions = {}): Promise<CompiledGraphLike> {
    const entry = this.entry(graphId);
    const bind: BindOptions = { checkpointer: options.checkpointer, store: options.store };
    if (entry.loaded.kind === 'factory') {
      return buildFromFactory(graphId, entry.loaded.factory, options.config ?? { configurable: {} }, bind);
    }
    let byStore = entry.bound.get(options.checkpointer);
    if (!byStore) entry.bound.set(options.checkpointer, (byStore = new Map()));
    let graph = byStore.get(options.store);
    if (!graph) {
      graph =
        entry.loaded.kind === 'compiled'
          ? bindCompiled(entry.loaded.graph, bind)
          : compileBuilder(graphId, entry.loaded.builder, bind);
      byStore.set(options.store, graph);
    }
    return graph;
  }

  /** Drawable graph JSON (`{nodes, edges}`) for `/assistants/{id}/graph`. */
  async drawable(
    graphId: string,
    options: { xray?: boolean | number; config?: RunnableConfig } = {},
  ): Promise<unknown> {
    const graph = await this.introspectable(graphId, options.config);
    const drawn = await graph.getGraphAsync({ ...(options.config ?? {}), xray: options.xray ?? false });
    return drawn.toJSON();
  }

  /** The graph's JSON Schemas for `/assistants/{id}/schemas`; `null` members when unknown. */
  async schemas(graphId: string, options: { config?: RunnableConfig } = {}): Promise<GraphSchemas> {
    const entry = this.entry(graphId);
    if (entry.loaded.kind === 'factory')
      return toGraphSchemas(await this.schemasOf(graphId, await this.introspectable(graphId, options.config), ''));
    entry.schemas ??= await this.schemasOf(graphId, await this.introspectable(graphId), '');
    return toGraphSchemas(entry.schemas);
  }

  /**
   * Schemas of the graph's subgraphs, keyed by namespace (`child`, `child|grandchild` when
   * `recurse`), optionally only those under `namespace`, for `/assistants/{id}/subgraphs`.
   */
  async subgraphs(
    graphId: string,
    namespace?: string,
    recurse = false,
    config?: RunnableConfig,
  ): Promise<Record<string, unknown>> {
    const graph = await this.introspectable(graphId, config);
    const result: Record<string, unknown> = {};
    for await (const [name, subgraph] of graph.getSubgraphsAsync(namespace, recurse)) {
      result[name] = await this.schemasOf(graphId, subgraph, name);
    }
    return result;
  }

  /**
   * One (sub)graph's schemas: those it was built with, else those of its TypeScript types (waiting
   * for the extraction when it is still running), else its channels.
   */
  private async schemasOf(graphId: string, graph: unknown, namespace: string): Promise<SubgraphSchemas> {
    const helpers = await schemaHelpersFor(this.entry(graphId).spec.path);
    const runtime = runtimeSchemas(graph, helpers);
    if (runtime) return runtime;
    await this.typeSchemasStarting;
    const fromTypes = (await this.typeSchemas?.get(graphId))?.[namespace];
    return fromTypes ?? channelSchemas(graph);
  }

  /**
   * Starts reading, in the background, the types of the graphs that need them (when the registry
   * was loaded with `typeSchemas`): a static graph some (sub)graph of which has no runtime schema,
   * and every factory (what it builds is not known before a request). The server calls it once
   * listening, so that the worker does not compete with the start; a reload starts it again.
   */
  startTypeSchemas(): Promise<void> {
    const starting = this.beginTypeSchemas();
    this.typeSchemasStarting = starting.catch(() => undefined);
    return starting;
  }

  private async beginTypeSchemas(): Promise<void> {
    await this.typeSchemas?.close('the graphs were reloaded');
    const settings = this.options.typeSchemas;
    if (!settings) return;
    const targets: GraphSpec[] = [];
    for (const [graphId, entry] of this.entries) {
      if (entry.loaded.kind === 'factory' || !(await this.hasRuntimeSchemas(graphId))) targets.push(entry.spec);
    }
    this.typeSchemas = TypeSchemaExtraction.start(targets, settings);
  }

  private async hasRuntimeSchemas(graphId: string): Promise<boolean> {
    try {
      const graph = await this.introspectable(graphId);
      const helpers = await schemaHelpersFor(this.entry(graphId).spec.path);
      if (!runtimeSchemas(graph, helpers)) return false;
      for await (const [, subgraph] of graph.getSubgraphsAsync(undefined, true)) {
        if (!runtimeSchemas(subgraph, helpers)) return false;
      }
      return true;
    } catch {
      return false;
    }
  }

  private entry(graphId: string): Entry {
    const entry = this.entries.get(graphId);
    if (!entry) throw new GraphNotFoundError(graphId);
    return entry;
  }

  // Introspection needs no persistence; a compiled export is read as is (never mutated).
  private async introspectable(graphId: string, config?: RunnableConfig): Promise<CompiledGraphLike> {
    const entry = this.entry(graphId);
    if (entry.loaded.kind === 'compiled') return entry.loaded.graph;
    return this.get(graphId, { config, checkpointer: false });
  }
}
