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

let installed = false;

/** Replaces `runWithConfig` on LangChain's async local storage provider (process-wide, idempotent). */
export function installRunWithConfig(): void {
  if (installed) return;
  installed = true;
  const provider = AsyncLocalStorageProviderSingleton as unknown as Provider;
  const prototype = Object.getPrototypeOf(provider) as Provider;
  const library = prototype.runWithConfig;
  let RunTree: RunTreeClass | undefined;
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
      runTree = new Tree({ name: '<runnable_lambda>', tracingEnabled: false });
      runTree.extra = { ...runTree.extra, [LC_CHILD_KEY]: config };
    }
    return storage.run(runTree, callback);
  };
}
