// An OpenTelemetry context manager that knows which LangChain run is executing, so that graph code
// calling `trace.getTracer(...).startActiveSpan(...)` inside a node gets the node's span as its
// parent.
//
// Why not `context.with(nodeContext, ...)` around the node: LangChain calls `handleChainStart` and
// only then runs the node, outside the handler, so the handler cannot wrap the node's execution.
// What LangChain does keep while a node runs is its own AsyncLocalStorage holding the node's
// config, whose callback manager names the run (`getParentRunId()`) and carries the run tracer.
// `active()` reads that; a context entered explicitly (`context.with`) inside the same LangChain
// run takes precedence, since it is nested deeper than the run.

import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createContextKey, trace } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';

/** Implemented by the run tracer: the context whose span children of LangChain run `runId` attach to. */
export const CONTEXT_OF_RUN = Symbol('tracepipe.agent_api.contextOfRun');

export interface RunContextSource {
  [CONTEXT_OF_RUN](runId: string): Context | undefined;
}

// Marks a context entered with `with()` by the LangChain run context that was current then.
const ENTERED_IN_RUN = createContextKey('tracepipe.agent_api.entered_in_langchain_run');

export class LangChainContextManager extends AsyncLocalStorageContextManager {
  override active(): Context {
    const explicit = super.active();
    const run = currentRunContext();
    if (!run || explicit.getValue(ENTERED_IN_RUN) === run) return explicit;
    const span = trace.getSpan(run);
    return span ? trace.setSpan(explicit, span) : explicit;
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const run = currentRunContext();
    return super.with(run ? context.setValue(ENTERED_IN_RUN, run) : context, fn, thisArg, ...args);
  }
}

/** The context of the LangChain run executing now, when a run tracer records it. */
function currentRunContext(): Context | undefined {
  const callbacks: unknown = AsyncLocalStorageProviderSingleton.getRunnableConfig()?.callbacks;
  if (typeof callbacks !== 'object' || callbacks === null || Array.isArray(callbacks)) return undefined;
  const manager = callbacks as { getParentRunId?: () => string | undefined; handlers?: unknown[] };
  const runId = manager.getParentRunId?.();
  if (!runId) return undefined;
  for (const handler of manager.handlers ?? []) {
    if (isRunContextSource(handler)) {
      const context = handler[CONTEXT_OF_RUN](runId);
      if (context) return context;
    }
  }
  return undefined;
}

function isRunContextSource(handler: unknown): handler is RunContextSource {
  return typeof handler === 'object' && handler !== null && CONTEXT_OF_RUN in handler;
}
