// Making run tracing the process's OpenTelemetry globals, so that spans graph code opens with
// `trace.getTracer(...)` nest under the run and reach the pipeline. A global that the host
// application registered first is never replaced: OpenTelemetry allows one registration per
// process, and overriding it would silently take its spans away from the host's exporters.

import { context, trace } from '@opentelemetry/api';
import { LangChainContextManager } from './context-manager.ts';
import { runTracing } from './provider.ts';

export interface GlobalRegistration {
  /** `ours`: graph code's spans in a run's trace are recorded with the run; `foreign`: they go to the host's provider. */
  readonly tracerProvider: 'ours' | 'foreign';
  /** `ours`: the span of the node executing is the active span; `foreign`: the host's manager decides. */
  readonly contextManager: 'ours' | 'foreign';
}

let registration: GlobalRegistration | undefined;

/** Registers the run tracing provider and context manager as globals where none is; idempotent. */
export function registerGlobalRunTracing(): GlobalRegistration {
  if (registration) return registration;
  const contextManager = new LangChainContextManager().enable();
  const ownContextManager = context.setGlobalContextManager(contextManager);
  if (!ownContextManager) contextManager.disable();
  const ownProvider = trace.setGlobalTracerProvider(runTracing().provider);
  registration = {
    tracerProvider: ownProvider ? 'ours' : 'foreign',
    contextManager: ownContextManager ? 'ours' : 'foreign',
  };
  return registration;
}
