// LangChain's `AsyncLocalStorageProviderSingleton.runWithConfig` without configuring a callback
// manager it would not use. `@langchain/core` and LangGraph enter it for every runnable a graph
// step runs (13 times per run of the `chat` example graph), and it builds the run's callback
// manager (`CallbackManager._configureSync`: a copy of the manager, tags, metadata merged twice,
// handlers de-duplicated) only to find a LangSmith tracer among its handlers. With LangSmith
// tracing off and no LangSmith tracer in the run's callbacks — what the server runs with unless
// a user enables LangSmith — there is none to find, and the result does not depend on the manager:
// the store is a fresh disabled `RunTree` carrying the config, as the library makes it. With the
// run tracer attached, the 13 calls of a `chat` run took 688 µs against 476 µs this way on a
// loaded machine (bench/agent/README.md).
//
// The run trees themselves: LangSmith's `RunTree` constructor defines its 30 fields one by one,
// reads the environment for its endpoint, project and replicas, and draws an id and times: 15-20
// µs per run tree. Here the constructor builds one run tree a second; the others are copies of the
// latest it built, each with its own id, times, dotted order and containers, made as the
// constructor makes them, so that what it read from the environment is at most a second old (and
// is not used: these run trees have tracing disabled, and any LangSmith tracing has the library's
// function run). Should a LangSmith release give its run trees another field holding an object, a
// parent, or replicas, every run tree is built by the constructor again.
//
// Whenever the manager could matter the library's own function runs: a handler named as LangSmith's
// tracer in the callbacks, LangSmith tracing enabled (by a `traceable` parent or the environment,
// read as the library reads it), or context variables in the current store (where the library's
// configure hooks, which may add handlers, and the variables the store passes on live).

import { AsyncLocalStorageProviderSingleton, _CONTEXT_VARIABLES_KEY } from '@langchain/core/singletons';
import { LangChainTracer } from '@langchain/core/tracers/tracer_langchain';

/** The key of the config in a run tree's `extra` (`@langchain/core`'s own, a registered symbol). */
const LC_CHILD_KEY = Symbol.for('lc:child_config');
/** The name LangSmith's `LangChainTracer` has. */
const LANGSMITH_TRACER_NAME = 'langchain_tracer';
/** The environment variables `@langchain/core`'s `isTracingEnabled()` reads (value "true"). */
const TRACING_VARIABLES = ['LANGSMITH_TRACING_V2', 'LANGCHAIN_TRACING_V2', 'LANGSMITH_TRACING', 'LANGCHAIN_TRACING'];

/** LangSmith's `RunTree`, as `@langchain/core` builds it (LangSmith is its dependency, not the server's). */
interface RunTreeLike {
  id: string;
  trace_id: string;
  dotted_order: string;
  start_time: number;
  _serialized_start_time: string;
  child_runs: unknown[];
  serialized: object;
  inputs: object;
  caller_options: object;
  replicas: unknown[];
  extra: Record<string | symbol, unknown>;
}
type RunTreeClass = new (config: { name: string; tracingEnabled: boolean }) => RunTreeLike;

type RunWithConfig = (config: unknown, callback: () => unknown, avoidCreatingRootRunTree?: boolean) => unknown;

interface Provider {
  runWithConfig: RunWithConfig;
  getInstance(): { getStore(): unknown; run(store: unknown, callback: () => unknown): unknown };
}

/** Whether the run's callbacks (an array of handlers or a callback manager) may hold LangSmith's tracer. */
function mayHoldLangSmithTracer(callbacks: unknown): boolean {
  if (callbacks === undefined || callbacks === null) return false;
  const handlers = Array.isArray(callbacks) ? callbacks : (callbacks as { handlers?: unknown }).handlers;
  if (!Array.isArray(handlers)) return true;
  return handlers.some((handler) => (handler as { name?: unknown } | null)?.name === LANGSMITH_TRACER_NAME);
}

function langSmithTracingEnabled(): boolean {
  const traceable = LangChainTracer.getTraceableRunTree() as { tracingEnabled?: boolean } | undefined;
  if (traceable?.tracingEnabled !== undefined) return traceable.tracingEnabled;
  return TRACING_VARIABLES.some((name) => process.env[name] === 'true');
}

/** The fields of a fresh run tree that hold objects: the client, shared, and containers of its own. */
const OBJECT_FIELDS = new Set(['child_runs', 'extra', 'serialized', 'inputs', 'client', 'replicas', 'caller_options']);

/**
 * Whether copies of `tree` can stand for run trees its constructor builds: it has the fields of this
 * LangSmith release's run trees, no parent, replicas or metadata, and is first in its order.
 */
function isCopyable(tree: RunTreeLike): boolean {
  const fields = tree as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value === 'object' && value !== null && !OBJECT_FIELDS.has(key)) return false;
  }
  return (
    fields.parent_run === undefined &&
    fields.execution_order === 1 &&
    Array.isArray(tree.child_runs) &&
    tree.child_runs.length === 0 &&
    Array.isArray(tree.replicas) &&
    tree.replicas.length === 0 &&
    typeof tree.extra === 'object' &&
    Object.keys(tree.extra).length === 1 &&
    Object.keys(tree.extra.metadata ?? { x: 1 }).length === 0 &&
    Object.getOwnPropertySymbols(fields).length === 0 &&
    Object.getOwnPropertyNames(fields).length === Object.keys(fields).length &&
    typeof tree._serialized_start_time === 'string' &&
    typeof tree.dotted_order === 'string'
  );
}

/** How long the constructor's latest run tree is copied before it builds another. */
const TEMPLATE_MS = 1000;

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
const idBytes = new Uint8Array(6);

/**
 * The id LangSmith gives a run tree started at `msecs`: a UUID v7 of that millisecond with a zero
 * sequence (`uuid7FromTime`), its last 42 bits random.
 */
function runTreeId(msecs: number): string {
  globalThis.crypto.getRandomValues(idBytes);
  const high = Math.floor(msecs / 0x1_0000_0000);
  const low = msecs >>> 0;
  return (
    HEX[(high >>> 8) & 0xff]! +
    HEX[high & 0xff]! +
    HEX[low >>> 24]! +
    HEX[(low >>> 16) & 0xff]! +
    '-' +
    HEX[(low >>> 8) & 0xff]! +
    HEX[low & 0xff]! +
    '-7000-8000-' +
    HEX[idBytes[0]! & 0x03]! +
    HEX[idBytes[1]!]! +
    HEX[idBytes[2]!]! +
    HEX[idBytes[3]!]! +
    HEX[idBytes[4]!]! +
    HEX[idBytes[5]!]!
  );
}

/** A run tree's fields as its constructor left them, and its prototype: what copies are made from. */
interface Template {
  readonly fields: RunTreeLike;
  readonly prototype: object;
}

/** A run tree like the template's started at `start`, with the id, times, order and containers its constructor gives each. */
function copyRunTree(template: Template, start: number): RunTreeLike {
  // A spread, then the prototype: V8 keeps this object's properties fast, where `Object.assign` on
  // `Object.create(prototype)` made a dictionary of them (8.5 against 0.25 µs a copy).
  const tree = Object.setPrototypeOf({ ...template.fields }, template.prototype) as RunTreeLike;
  // LangSmith's microsecond-precision start: the millisecond, then the execution order (1) as three digits.
  const serializedStart = `${new Date(start).toISOString().slice(0, -1)}001Z`;
  const id = runTreeId(start);
  tree.id = id;
  tree.start_time = start;
  tree.child_runs = [];
  tree.extra = { metadata: {} };
  tree.serialized = {};
  tree.inputs = {};
  tree.trace_id = id;
  tree.dotted_order = serializedStart.replace(/[-:.]/g, '') + id;
  tree.replicas = [];
  tree._serialized_start_time = serializedStart;
  tree.caller_options = {};
  return tree;
}

let installed = false;

/** Replaces `runWithConfig` on LangChain's async local storage provider (process-wide, idempotent). */
export function installRunWithConfig(): void {
  if (installed) return;
  installed = true;
  const provider = AsyncLocalStorageProviderSingleton as unknown as Provider;
  const prototype = Object.getPrototypeOf(provider) as Provider;
  const library = prototype.runWithConfig;
  let RunTree: RunTreeClass | undefined;
  /** The latest run tree the constructor built, as built, copied for the others of its second. */
  let template: Template | undefined;
  /**
   * The class of the run trees the library makes, taken from one it makes outside any run; none
   * while LangChain has no async local storage yet (its store is then always undefined).
   */
  const runTreeClass = (self: Provider): RunTreeClass | undefined => {
    if (RunTree) return RunTree;
    const storage = self.getInstance();
    const made = storage.run(undefined, () => library.call(self, {}, () => storage.getStore()));
    if (typeof made === 'object' && made !== null) RunTree = made.constructor as RunTreeClass;
    return RunTree;
  };
  prototype.runWithConfig = function runWithConfig(
    this: Provider,
    config: unknown,
    callback: () => unknown,
    avoidCreatingRootRunTree?: boolean,
  ): unknown {
    const storage = this.getInstance();
    const previous = storage.getStore() as Record<symbol, unknown> | undefined;
    if (
      previous?.[_CONTEXT_VARIABLES_KEY] !== undefined ||
      mayHoldLangSmithTracer((config as { callbacks?: unknown } | undefined)?.callbacks) ||
      langSmithTracingEnabled()
    ) {
      return library.call(this, config, callback, avoidCreatingRootRunTree);
    }
    const Tree = runTreeClass(this);
    if (!Tree) {
      return library.call(this, config, callback, avoidCreatingRootRunTree);
    }
    let runTree: RunTreeLike | undefined;
    if (!avoidCreatingRootRunTree) {
      const now = Date.now();
      if (!template || now - template.fields.start_time >= TEMPLATE_MS || now < template.fields.start_time) {
        runTree = new Tree({ name: '<runnable_lambda>', tracingEnabled: false });
        // Taken as built, before the config is added or the run changes it.
        template = isCopyable(runTree)
          ? { fields: { ...runTree }, prototype: Object.getPrototypeOf(runTree) as object }
          : undefined;
      } else {
        runTree = copyRunTree(template, now);
      }
      runTree.extra = { ...runTree.extra, [LC_CHILD_KEY]: config };
    }
    return storage.run(runTree, callback);
  };
}
