import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { CallbackManager } from '@langchain/core/callbacks/manager';
import { ConsoleCallbackHandler } from '@langchain/core/tracers/console';
import type { AnyValue } from 'tracepipe/plugin';
import { graph as subgraphGraph } from '../../../../../examples/graphs/subgraph.ts';
import { graph as toolsGraph } from '../../../../../examples/graphs/tools.ts';
import { installCallbackManagerCopy } from './callback-manager-copy.ts';
import { TRACED_RUN_IDS, tracedRun } from '../../testing/traced-run.ts';

// The example graphs switch to a real OpenAI model when a key is set; these tests always run offline.
delete process.env.OPENAI_API_KEY;

const libraryCopy = CallbackManager.prototype.copy;
installCallbackManagerCopy();
installCallbackManagerCopy();
const onePassCopy = CallbackManager.prototype.copy;

class NamedHandler extends BaseCallbackHandler {
  constructor(readonly name: string) {
    super();
  }
}

/** Everything `copy()` sets, with the objects' key order (deepEqual ignores it). */
function fieldsOf(manager: CallbackManager) {
  const fields = manager as unknown as {
    handlers: BaseCallbackHandler[];
    inheritableHandlers: BaseCallbackHandler[];
    tags: string[];
    inheritableTags: string[];
    metadata: Record<string, unknown>;
    inheritableMetadata: Record<string, unknown>;
  };
  return {
    parentRunId: manager.getParentRunId(),
    handlers: fields.handlers,
    inheritableHandlers: fields.inheritableHandlers,
    tags: fields.tags,
    inheritableTags: fields.inheritableTags,
    metadata: fields.metadata,
    metadataKeys: Object.keys(fields.metadata),
    inheritableMetadata: fields.inheritableMetadata,
    inheritableMetadataKeys: Object.keys(fields.inheritableMetadata),
  };
}

function assertCopiesAlike(manager: CallbackManager, ...args: Parameters<CallbackManager['copy']>) {
  const ours = manager.copy(...args);
  const library = libraryCopy.apply(manager, args);
  assert.ok(ours instanceof CallbackManager);
  assert.deepEqual(fieldsOf(ours), fieldsOf(library));
  return ours;
}

/** A manager as LangGraph's nodes have them: a run's metadata, then LangGraph's keys, some local. */
function nodeManager(): CallbackManager {
  const manager = new CallbackManager('parent-run');
  manager.addHandler(new NamedHandler('traced'), true);
  manager.addHandler(new NamedHandler('local'), false);
  manager.addTags(['graph:step:1']);
  manager.addTags(['seq:step:2', 'graph:step:1'], false);
  manager.addMetadata({ run_id: 'r', thread_id: 't', graph_id: 'chat', user_id: null, run_attempt: 1 });
  manager.addMetadata({ langgraph_step: 1, langgraph_node: 'call_model', '2': 'integer-like', nested: { a: [1] } });
  manager.addMetadata({ langgraph_checkpoint_ns: 'call_model:x', run_id: 'overridden' }, false);
  return manager;
}

describe('installCallbackManagerCopy', () => {
  it('replaces CallbackManager.prototype.copy once', () => {
    assert.notEqual(CallbackManager.prototype.copy, libraryCopy);
  });

  it('copies a node manager as the library does: handlers, tags, metadata, what is inherited, key order', () => {
    const manager = nodeManager();
    const copy = assertCopiesAlike(manager);
    const fields = fieldsOf(copy);
    // A key set locally over an inherited one: the copy inherits the local value, as the library's does.
    assert.equal(fields.metadata.run_id, 'overridden');
    assert.equal(fields.inheritableMetadata.run_id, 'overridden');
    assert.equal('langgraph_checkpoint_ns' in fields.inheritableMetadata, false);
    assert.deepEqual(fields.metadataKeys.slice(0, 2), ['2', 'run_id']);
  });

  it('does not share the metadata objects with the manager it copies', () => {
    const manager = nodeManager();
    const copy = manager.copy();
    copy.addMetadata({ added: true });
    (copy as unknown as { metadata: Record<string, unknown> }).metadata.mutated = 1;
    assert.equal('added' in (manager as unknown as { metadata: object }).metadata, false);
    assert.equal('mutated' in (manager as unknown as { metadata: object }).metadata, false);
  });

  it('adds additional handlers, inheritable or not, and never a second console handler', () => {
    const manager = nodeManager();
    manager.addHandler(new ConsoleCallbackHandler(), true);
    assertCopiesAlike(manager, [new NamedHandler('extra'), new ConsoleCallbackHandler()], false);
    assertCopiesAlike(manager, [new NamedHandler('extra')], true);
  });

  it('copies empty managers and managers built from options alike', () => {
    assertCopiesAlike(new CallbackManager());
    const shared = new NamedHandler('shared');
    assertCopiesAlike(
      new CallbackManager(undefined, {
        handlers: [shared, new NamedHandler('only-local')],
        inheritableHandlers: [shared],
        tags: ['a', 'b', 'a'],
        inheritableTags: ['b'],
        metadata: { x: 1, y: 2 },
        inheritableMetadata: { y: 'other', z: 3 },
      }),
    );
  });

  it('leaves metadata with a __proto__ key to the library', () => {
    const metadata = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const manager = new CallbackManager(undefined, { metadata, inheritableMetadata: metadata });
    const copy = assertCopiesAlike(manager);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf((copy as unknown as { metadata: object }).metadata), Object.prototype);
  });
});

/** A traced run's spans as content: ids, times and the values that differ per run left out. */
async function tracedContent(graph: unknown, graphId: string, copy: CallbackManager['copy']): Promise<unknown[]> {
  CallbackManager.prototype.copy = copy;
  try {
    const { runId, threadId } = TRACED_RUN_IDS;
    const metadata = { run_id: runId, thread_id: threadId, graph_id: graphId, user_id: null, run_attempt: 1 };
    const { spans } = await tracedRun(graph, graphId, { metadata });
    const names = new Map(spans.map((span) => [span.spanId, span.name]));
    // Message, task and checkpoint ids are drawn per run; the rest of each value is compared.
    const stable = (value: AnyValue): unknown =>
      value.type === 'string'
        ? value.value.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
        : value.type === 'int'
          ? value.value.toString()
          : 'value' in value
            ? value.value
            : value.type;
    return spans.map((span) => ({
      name: span.name,
      parent: names.get(span.parentSpanId) ?? null,
      kind: span.kind,
      status: span.status,
      attributes: span.attributes.map((attribute) => [attribute.key, stable(attribute.value)]),
      events: span.events.map((event) => event.name),
    }));
  } finally {
    CallbackManager.prototype.copy = onePassCopy;
  }
}

describe('a traced run with the one-pass copy', () => {
  for (const [graphId, graph] of [
    ['tools', toolsGraph],
    ['subgraph', subgraphGraph],
  ] as const) {
    it(`records the same spans as with the library's copy (${graphId})`, async () => {
      const library = await tracedContent(graph, graphId, libraryCopy);
      const onePass = await tracedContent(graph, graphId, onePassCopy);
      assert.ok(library.length >= 3, `${library.length} spans`);
      assert.deepEqual(onePass, library);
    });
  }
});
