// LangChain's `CallbackManager.copy()` with its metadata copied in one pass. Once a callback handler
// is attached to a run (the run tracer), `@langchain/core` and LangGraph copy the run's callback
// manager for the runnables they enter (`runWithConfig`, `ensureLangGraphConfig`, `mergeCallbacks`):
// 27 times per traced run of the `chat` example graph, 21 of them with a LangGraph node's 13
// metadata keys (the run's ids and LangGraph's `langgraph_*` keys). The library's `copy()` adds the
// metadata one key at a time through `addMetadata`, which spreads the manager's two metadata
// objects for each key: 5.0-5.3 µs per copy against 0.95-1.05 this way, 0.165 ms of a traced run
// in a profile (bench/agent/README.md), the largest single cost of attaching a handler.
//
// The replacement builds the same manager: the same handlers, tags and inheritance flags, added
// as the library adds them; `metadata` with the own enumerable string keys of the original's, in
// their order, and `inheritableMetadata` with those of them that the original's inheritable
// metadata has, the values taken from `metadata` — what the one-key-at-a-time version yields.
// Metadata with a `__proto__` key (which a spread copies as data and an assignment would not) is
// left to the library's own `copy()`.

import { CallbackManager } from '@langchain/core/callbacks/manager';
import type { BaseCallbackHandler } from '@langchain/core/callbacks/base';

type Metadata = Record<string, unknown>;

/** The fields `copy()` reads: public on the class, `_parentRunId` in its declaration file. */
interface ManagerFields {
  handlers: BaseCallbackHandler[];
  inheritableHandlers: BaseCallbackHandler[];
  tags: string[];
  inheritableTags: string[];
  metadata: Metadata;
  inheritableMetadata: Metadata;
  _parentRunId?: string;
}

let installed = false;

/** Replaces `CallbackManager.prototype.copy` (process-wide, idempotent). */
export function installCallbackManagerCopy(): void {
  if (installed) return;
  installed = true;
  const prototype = CallbackManager.prototype as unknown as { copy: typeof CallbackManager.prototype.copy };
  const libraryCopy = prototype.copy;
  prototype.copy = function copy(
    this: CallbackManager,
    additionalHandlers: BaseCallbackHandler[] = [],
    inherit = true,
  ): CallbackManager {
    const source = this as unknown as ManagerFields;
    const keys = Object.keys(source.metadata);
    if (keys.includes('__proto__')) return libraryCopy.call(this, additionalHandlers, inherit);
    const manager = new CallbackManager(source._parentRunId);
    const target = manager as unknown as ManagerFields;
    for (const handler of source.handlers) manager.addHandler(handler, source.inheritableHandlers.includes(handler));
    for (const tag of source.tags) manager.addTags([tag], source.inheritableTags.includes(tag));
    const metadata: Metadata = {};
    const inheritableMetadata: Metadata = {};
    for (const key of keys) {
      const value = source.metadata[key];
      metadata[key] = value;
      if (Object.prototype.propertyIsEnumerable.call(source.inheritableMetadata, key)) inheritableMetadata[key] = value;
    }
    target.metadata = metadata;
    target.inheritableMetadata = inheritableMetadata;
    for (const handler of additionalHandlers) {
      // As the library does: a console handler is not added twice.
      if (
        target.handlers.some(
          (existing) => existing.name === 'console_callback_handler' && existing.name === handler.name,
        )
      )
        continue;
      manager.addHandler(handler, inherit);
    }
    return manager;
  };
}
