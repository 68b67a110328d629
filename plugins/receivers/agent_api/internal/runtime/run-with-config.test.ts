import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { CallbackManager } from '@langchain/core/callbacks/manager';
import { setContextVariable } from '@langchain/core/context';
import { AsyncLocalStorageProviderSingleton, _CONTEXT_VARIABLES_KEY } from '@langchain/core/singletons';
import { RunTree } from 'langsmith';
import { graph as toolsGraph } from '../../../../../examples/graphs/tools.ts';
import { installRunWithConfig } from './run-with-config.ts';
import { tracedRun } from '../../testing/traced-run.ts';

// The example graphs switch to a real OpenAI model when a key is set; these tests always run offline.
delete process.env.OPENAI_API_KEY;

type RunWithConfig = (config: unknown, callback: () => unknown, avoidCreatingRootRunTree?: boolean) => unknown;
const prototype = Object.getPrototypeOf(AsyncLocalStorageProviderSingleton) as { runWithConfig: RunWithConfig };
const libraryRunWithConfig = prototype.runWithConfig;
// The library's function as the replacement finds it, counting the calls it hands over.
let handedOver = 0;
prototype.runWithConfig = function (this: unknown, ...args: Parameters<RunWithConfig>) {
  handedOver++;
  return libraryRunWithConfig.apply(this, args);
};
installRunWithConfig();
installRunWithConfig();
const ours = prototype.runWithConfig;

const LC_CHILD_KEY = Symbol.for('lc:child_config');
const TRACING_VARIABLES = ['LANGSMITH_TRACING_V2', 'LANGCHAIN_TRACING_V2', 'LANGSMITH_TRACING', 'LANGCHAIN_TRACING'];

class NamedHandler extends BaseCallbackHandler {
  constructor(readonly name: string) {
    super();
  }
}

/** The store `fn` runs `callback` in, for `config`. */
function storeOf(fn: RunWithConfig, config: unknown, avoidCreatingRootRunTree?: boolean): unknown {
  return fn.call(
    AsyncLocalStorageProviderSingleton,
    config,
    () => AsyncLocalStorageProviderSingleton.getInstance().getStore(),
    avoidCreatingRootRunTree,
  );
}

/** A run tree's fields, those drawn per run tree (its id, times and order) left out. */
function fieldsOf(store: unknown) {
  if (!(store instanceof RunTree)) return store;
  const {
    id: _id,
    trace_id: _traceId,
    dotted_order: _dottedOrder,
    start_time: _startTime,
    _serialized_start_time: _serialized,
    ...rest
  } = store as unknown as Record<string, unknown>;
  const extra = store.extra as Record<string | symbol, unknown>;
  return { ...rest, keys: Object.keys(store), extra: { ...extra }, child: extra[LC_CHILD_KEY] };
}

// The first call takes the run tree class from one the library makes; the tests count from after it.
storeOf(ours, {});

function assertAlike(config: unknown, avoidCreatingRootRunTree?: boolean): unknown {
  const before = handedOver;
  const store = storeOf(ours, config, avoidCreatingRootRunTree);
  assert.equal(handedOver, before, 'answered without the library');
  assert.deepEqual(fieldsOf(store), fieldsOf(storeOf(libraryRunWithConfig, config, avoidCreatingRootRunTree)));
  return store;
}

describe('installRunWithConfig', () => {
  afterEach(() => {
    for (const name of TRACING_VARIABLES) delete process.env[name];
  });

  it('replaces runWithConfig once', () => {
    assert.notEqual(ours, libraryRunWithConfig);
    installRunWithConfig();
    assert.equal(prototype.runWithConfig, ours);
  });

  it('runs the callback in a disabled run tree carrying the config, as the library does', () => {
    const handler = new NamedHandler('tracepipe_run_tracer');
    const manager = new CallbackManager(undefined, { handlers: [handler], inheritableHandlers: [handler] });
    for (const config of [
      undefined,
      {},
      { tags: ['a'], metadata: { run_id: 'r1' } },
      { callbacks: [handler], metadata: { run_id: 'r1' } },
      { callbacks: manager, tags: ['langsmith:hidden'], configurable: { thread_id: 't1' } },
    ]) {
      const store = assertAlike(config) as RunTree;
      assert.ok(store instanceof RunTree);
      assert.equal(store.tracingEnabled, false);
      assert.equal((store.extra as Record<symbol, unknown>)[LC_CHILD_KEY], config);
    }
  });

  it('runs the callback without a store where the caller asks for no root run tree', () => {
    assert.equal(assertAlike({ metadata: { a: 1 } }, true), undefined);
  });

  it('gives every run its own run tree', () => {
    const first = storeOf(ours, {}) as RunTree;
    const second = storeOf(ours, {}) as RunTree;
    assert.notEqual(first.id, second.id);
  });

  it("hands over to the library where LangSmith's tracer may be among the callbacks", () => {
    const before = handedOver;
    storeOf(ours, { callbacks: [new NamedHandler('langchain_tracer')] });
    // Not a manager: the library's own error, not an answer without it.
    assert.throws(() => storeOf(ours, { callbacks: { handlers: 'not an array' } }));
    assert.equal(handedOver, before + 2);
  });

  it('hands over to the library where LangSmith tracing is enabled by the environment', () => {
    for (const name of TRACING_VARIABLES) {
      process.env[name] = 'true';
      const before = handedOver;
      storeOf(ours, {});
      assert.equal(handedOver, before + 1, name);
      delete process.env[name];
    }
  });

  it('follows a disabled parent run tree over the environment, as the library does', () => {
    process.env.LANGSMITH_TRACING = 'true';
    const inner = storeOf(ours, {}) as RunTree;
    const before = handedOver;
    const nested = AsyncLocalStorageProviderSingleton.getInstance().run(inner, () => storeOf(ours, { tags: ['x'] }));
    assert.equal(handedOver, before);
    assert.ok(nested instanceof RunTree);
  });

  it('hands over to the library inside a store with context variables, which reach the callback', () => {
    const parent = storeOf(ours, {}) as RunTree;
    const before = handedOver;
    const store = AsyncLocalStorageProviderSingleton.getInstance().run(parent, () => {
      setContextVariable('answer', 42);
      return storeOf(ours, {});
    }) as Record<symbol, Record<string, unknown> | undefined>;
    assert.equal(handedOver, before + 1);
    assert.equal(store[_CONTEXT_VARIABLES_KEY]?.answer, 42);
  });
});

/** The run tree `fn` makes for `config` inside a runnable whose run tree is `parent`. */
function nestedStoreOf(fn: RunWithConfig, parent: unknown, config: unknown): RunTree {
  return AsyncLocalStorageProviderSingleton.getInstance().run(parent, () => storeOf(fn, config)) as RunTree;
}

/** What LangSmith derives from a run tree's start: its id (a UUID v7 of that millisecond), times, order. */
function assertStartDerived(tree: RunTree): void {
  const fields = tree as unknown as { start_time: number; _serialized_start_time: string };
  assert.match(tree.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7000-8000-0[0-3][0-9a-f]{10}$/);
  assert.equal(parseInt(tree.id.slice(0, 8) + tree.id.slice(9, 13), 16), fields.start_time);
  assert.equal(tree.trace_id, tree.id);
  assert.equal(fields._serialized_start_time, `${new Date(fields.start_time).toISOString().slice(0, -1)}001Z`);
  assert.equal(tree.dotted_order, fields._serialized_start_time.replace(/[-:.]/g, '') + tree.id);
}

describe('the run trees a run makes', () => {
  afterEach(() => {
    delete process.env.LANGCHAIN_ENDPOINT;
  });

  it('are copies of the run tree the library builds, with the config, as the library makes them', () => {
    const outer = storeOf(ours, { tags: ['outer'] }) as RunTree;
    const handler = new NamedHandler('tracepipe_run_tracer');
    const manager = new CallbackManager(undefined, { handlers: [handler], inheritableHandlers: [handler] });
    for (const config of [{}, { tags: ['a'], metadata: { run_id: 'r1' } }, { callbacks: manager }]) {
      const before = handedOver;
      const nested = nestedStoreOf(ours, outer, config);
      assert.equal(handedOver, before, 'answered without the library');
      assert.ok(nested instanceof RunTree);
      assert.notEqual(nested, outer);
      assert.deepEqual(fieldsOf(nested), fieldsOf(nestedStoreOf(libraryRunWithConfig, outer, config)));
      assert.equal((nested.extra as Record<symbol, unknown>)[LC_CHILD_KEY], config);
    }
  });

  it('get their own id, times and dotted order, derived as LangSmith derives them', () => {
    const outer = storeOf(ours, {}) as RunTree;
    assertStartDerived(nestedStoreOf(libraryRunWithConfig, outer, {}));
    const copies = [nestedStoreOf(ours, outer, {}), nestedStoreOf(ours, outer, {})];
    for (const copy of copies) assertStartDerived(copy);
    assert.notEqual(copies[0]!.id, copies[1]!.id);
    assert.notEqual(copies[0]!.id, outer.id);
  });

  it('share no container with each other or with the run tree they copy', () => {
    const outer = storeOf(ours, {}) as RunTree;
    const [first, second] = [nestedStoreOf(ours, outer, {}), nestedStoreOf(ours, outer, {})] as unknown as Record<
      string,
      unknown
    >[];
    for (const key of ['child_runs', 'extra', 'serialized', 'inputs', 'caller_options', 'replicas']) {
      assert.notEqual(first![key], second![key], key);
      assert.notEqual(first![key], (outer as unknown as Record<string, unknown>)[key], key);
    }
    assert.notEqual((first!.extra as { metadata: object }).metadata, (second!.extra as { metadata: object }).metadata);
    assert.equal(first!.client, second!.client, 'the shared client, as the library shares it');
  });

  it('copy none of the changes a run makes to its own run tree', () => {
    const outer = storeOf(ours, {}) as RunTree;
    Object.assign(outer, { name: 'renamed', end_time: 1, outputs: { done: true } });
    assert.deepEqual(
      fieldsOf(nestedStoreOf(ours, outer, {})),
      fieldsOf(nestedStoreOf(libraryRunWithConfig, outer, {})),
    );
    assert.deepEqual(fieldsOf(storeOf(ours, {})), fieldsOf(storeOf(libraryRunWithConfig, {})));
  });

  it('follow the environment within a second', (t) => {
    const outer = storeOf(ours, {}) as RunTree;
    process.env.LANGCHAIN_ENDPOINT = 'http://langsmith.invalid';
    const now = Date.now();
    t.mock.method(Date, 'now', () => now + 1000);
    const nested = nestedStoreOf(ours, outer, {}) as unknown as { api_url: string };
    assert.equal(nested.api_url, 'http://langsmith.invalid');
    assert.deepEqual(fieldsOf(nested), fieldsOf(nestedStoreOf(libraryRunWithConfig, outer, {})));
  });
});

describe('a traced run with the replacement', () => {
  it('reads its config in the graph and records its spans', async () => {
    const before = handedOver;
    const { result, spans } = await tracedRun(toolsGraph, 'tools');
    assert.equal(handedOver, before, 'no call handed over');
    assert.ok((result as { messages: unknown[] }).messages.length >= 4);
    const names = spans.map((span) => span.name);
    assert.ok(names.length >= 5, names.join(', '));
  });
});
