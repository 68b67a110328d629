// Tests of graph loading: parsing the graph map, importing every export form, binding the server's
// persistence without touching the user's export, introspection, and the system assistant ids.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { InMemoryStore, MemorySaver } from '@langchain/langgraph';
import {
  GraphLoadError,
  GraphNotFoundError,
  GraphRegistry,
  parseGraphEnv,
  parseGraphSpecs,
  systemAssistantId,
} from './registry.ts';
import type { GraphSpec } from './registry.ts';
import { projectWithItsOwnLangGraph } from '../../testing/langgraph-copy.ts';
import { tempDir } from 'tracepipe/testing';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, 'fixtures');
const counterFile = join(fixtures, 'counter.ts');

function spec(exportName: string, path = counterFile, graphId = exportName): GraphSpec {
  return { graphId, path, exportName };
}

async function loadError(specs: GraphSpec[]): Promise<GraphLoadError> {
  try {
    await GraphRegistry.load(specs);
  } catch (error) {
    assert.ok(error instanceof GraphLoadError, `expected GraphLoadError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the load to fail');
}

describe('parseGraphSpecs', () => {
  it('resolves inline graphs against the base directory', () => {
    const specs = parseGraphSpecs(
      { graphs: { agent: './src/agent.ts:graph', other: 'lib/other.js:make' } },
      '/srv/app',
    );
    assert.deepEqual(specs, [
      { graphId: 'agent', path: '/srv/app/src/agent.ts', exportName: 'graph' },
      { graphId: 'other', path: '/srv/app/lib/other.js', exportName: 'make' },
    ]);
  });

  it('reads langgraph.json relative to the base directory and its graphs relative to the file', () => {
    const specs = parseGraphSpecs({ langgraph_config: 'fixtures/langgraph.json' }, here);
    assert.deepEqual(specs, [
      { graphId: 'counter', path: counterFile, exportName: 'compiled' },
      { graphId: 'described', path: join(fixtures, 'plain.js'), exportName: 'graph' },
      { graphId: 'defaulted', path: counterFile, exportName: 'default' },
    ]);
  });

  it('uses inline graphs alone when both are given', () => {
    const specs = parseGraphSpecs({ graphs: { only: './x.ts:g' }, langgraph_config: './does-not-exist.json' }, '/srv');
    assert.deepEqual(
      specs.map((s) => s.graphId),
      ['only'],
    );
  });

  it('rejects an empty graph map', () => {
    assert.throws(
      () => parseGraphSpecs({}, '/srv'),
      (error: unknown) => error instanceof GraphLoadError && error.failure === 'invalid_spec',
    );
    assert.throws(() => parseGraphSpecs({ graphs: {} }, '/srv'), /no graphs configured/);
  });

  it('rejects a missing langgraph.json, naming the file', () => {
    assert.throws(
      () => parseGraphSpecs({ langgraph_config: './nope/langgraph.json' }, '/srv'),
      (error: unknown) =>
        error instanceof GraphLoadError &&
        error.failure === 'config_missing' &&
        error.message.includes('/srv/nope/langgraph.json'),
    );
  });

  it('rejects a langgraph.json that is not JSON or has no graphs object', () => {
    assert.throws(() => parseGraphSpecs({ langgraph_config: 'fixture.env' }, fixtures), /is not valid JSON/);
    assert.throws(() => parseGraphSpecs({ langgraph_config: 'registry.test.ts' }, here), /is not valid JSON/);
  });

  it('rejects a langgraph.json whose graphs are not an object, or that is not an object', () => {
    assert.throws(
      () => parseGraphSpecs({ langgraph_config: 'bad-graphs.json' }, fixtures),
      /"graphs" must be an object mapping graph ids/,
    );
    assert.throws(() => parseGraphSpecs({ langgraph_config: 'not-object.json' }, fixtures), /must hold a JSON object/);
  });

  it('rejects bad graph ids, empty paths and bad export names, naming the graph', () => {
    assert.throws(() => parseGraphSpecs({ graphs: { 'bad id/x': './a.ts:g' } }, '/srv'), /graph id "bad id\/x"/);
    assert.throws(
      () => parseGraphSpecs({ graphs: { agent: '' } }, '/srv'),
      /graphs\.agent: expected "path\/to\/file\.ts:exportName"/,
    );
    assert.throws(
      () => parseGraphSpecs({ graphs: { agent: './a.ts:not-valid' } }, '/srv'),
      /graphs\.agent: "not-valid" is not a valid export name/,
    );
    assert.throws(
      () => parseGraphSpecs({ graphs: { agent: 42 as unknown as string } }, '/srv'),
      (error: unknown) => error instanceof GraphLoadError && error.graphId === 'agent',
    );
  });

  it('takes the default export when the spec names none', () => {
    assert.deepEqual(parseGraphSpecs({ graphs: { g: './a.ts' } }, '/srv'), [
      { graphId: 'g', path: '/srv/a.ts', exportName: 'default' },
    ]);
    assert.deepEqual(parseGraphSpecs({ graphs: { g: './a.ts:' } }, '/srv'), [
      { graphId: 'g', path: '/srv/a.ts', exportName: 'default' },
    ]);
  });

  it('round-trips any valid id, relative path and export name (property)', () => {
    const segment = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/),
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.stringMatching(/^[A-Za-z_$][\w$]{0,15}$/),
        (graphId, segments, exportName) => {
          const path = `./${segments.join('/')}.ts`;
          const [parsed] = parseGraphSpecs({ graphs: { [graphId]: `${path}:${exportName}` } }, '/base');
          assert.deepEqual(parsed, { graphId, path: resolve('/base', path), exportName });
        },
      ),
    );
  });

  it('never throws anything but GraphLoadError on arbitrary spec strings (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (graphId, text) => {
        try {
          parseGraphSpecs({ graphs: { [graphId]: text } }, '/base');
        } catch (error) {
          assert.ok(error instanceof GraphLoadError);
        }
      }),
    );
  });
});

describe('parseGraphEnv', () => {
  it('reads an env object, stringifying values', () => {
    assert.deepEqual(parseGraphEnv({ langgraph_config: 'langgraph.json' }, fixtures), {
      FIXTURE_FLAG: 'on',
      FIXTURE_NUMBER: '7',
    });
  });

  it('reads a .env file named by the langgraph.json', () => {
    assert.deepEqual(parseGraphEnv({ langgraph_config: 'with-dotenv.json' }, fixtures), {
      FIXTURE_A: 'one',
      FIXTURE_B: 'two words',
      FIXTURE_C: 'three',
    });
  });

  it('rejects an env that is neither an object nor a file, and a missing env file', () => {
    assert.throws(
      () => parseGraphEnv({ langgraph_config: 'bad-env.json' }, fixtures),
      /"env" must be an object or the path of a \.env file/,
    );
    assert.throws(
      () => parseGraphEnv({ langgraph_config: 'missing-env.json' }, fixtures),
      (error: unknown) =>
        error instanceof GraphLoadError && error.failure === 'config_missing' && /missing\.env/.test(error.message),
    );
  });

  it('is empty for inline graphs', () => {
    assert.deepEqual(parseGraphEnv({ graphs: { g: './a.ts:g' }, langgraph_config: 'langgraph.json' }, fixtures), {});
  });
});

describe('systemAssistantId', () => {
  it('matches the reference server for its documented graph ids', () => {
    assert.equal(systemAssistantId('agent'), 'fe096781-5601-53d2-b2f6-0d3403f7e9ca');
    assert.equal(systemAssistantId('agent_simple'), '41237ec1-a1e5-5297-9ec9-e27936781bda');
    assert.equal(systemAssistantId('weather'), '5fb44052-6611-57fc-99b4-527b0d62f788');
    assert.equal(systemAssistantId('simple_runtime'), '14c4a82c-001b-58a5-bc2a-f4f16ddcb167');
  });
});

describe('GraphRegistry.load', () => {
  it('loads every export form and lists ids in config order', async () => {
    const registry = await GraphRegistry.load([
      spec('compiled'),
      spec('stateGraph'),
      spec('factory'),
      spec('asyncFactory'),
      spec('promised'),
      spec('default'),
      spec('graph', join(fixtures, 'plain.js'), 'plain_js'),
    ]);
    assert.deepEqual(registry.ids(), [
      'compiled',
      'stateGraph',
      'factory',
      'asyncFactory',
      'promised',
      'default',
      'plain_js',
    ]);
    assert.equal(registry.has('compiled'), true);
    assert.equal(registry.has('missing'), false);
    assert.deepEqual(registry.spec('plain_js'), {
      graphId: 'plain_js',
      path: join(fixtures, 'plain.js'),
      exportName: 'graph',
    });
    assert.throws(() => registry.spec('missing'), GraphNotFoundError);
    for (const graphId of registry.ids().filter((id) => id !== 'plain_js')) {
      const graph = await registry.get(graphId, { checkpointer: false });
      assert.deepEqual(await graph.invoke({ label: 'x' }), { count: 1, label: 'x' }, graphId);
    }
    const plain = await registry.get('plain_js', { checkpointer: false });
    assert.deepEqual(await plain.invoke({ text: 'hi' }), { text: 'HI' });
  });

  it('names the graph and file when the file is missing', async () => {
    const error = await loadError([spec('graph', join(fixtures, 'missing.ts'), 'ghost')]);
    assert.equal(error.failure, 'file_missing');
    assert.equal(error.graphId, 'ghost');
    assert.match(error.message, /graph "ghost" \(.*missing\.ts:graph\): file not found/);
  });

  it('names the export and lists the available ones when the export is missing', async () => {
    const error = await loadError([spec('nothingHere', counterFile, 'agent')]);
    assert.equal(error.failure, 'export_missing');
    assert.match(error.message, /graph "agent" .*no export "nothingHere" \(exports: .*compiled.*\)/);
  });

  it('rejects exports that are not graphs', async () => {
    for (const exportName of ['notAGraph', 'aNumber']) {
      const error = await loadError([spec(exportName)]);
      assert.equal(error.failure, 'not_a_graph');
      assert.match(
        error.message,
        new RegExp(`graph "${exportName}" .*not a compiled graph, a StateGraph or a graph factory`),
      );
    }
  });

  it('reports a module that throws on import', async () => {
    const error = await loadError([spec('graph', join(fixtures, 'throws-on-import.ts'), 'broken')]);
    assert.equal(error.failure, 'import_failed');
    assert.match(error.message, /graph "broken" .*import failed: module initialisation failed/);
  });

  it('stops at the first broken graph', async () => {
    const error = await loadError([
      spec('compiled'),
      spec('notAGraph'),
      spec('graph', join(fixtures, 'missing.ts'), 'later'),
    ]);
    assert.equal(error.graphId, 'notAGraph');
  });
});

describe('GraphRegistry.get', () => {
  it('binds the server checkpointer and store without mutating the export', async () => {
    const module = await import('./fixtures/counter.ts');
    const registry = await GraphRegistry.load([spec('compiled'), spec('compiledWithSaver')]);
    const checkpointer = new MemorySaver();
    const store = new InMemoryStore();
    const graph = await registry.get('compiled', { checkpointer, store });
    assert.equal(graph.checkpointer, checkpointer);
    assert.equal(graph.store, store);
    assert.equal(module.compiled.checkpointer, undefined, 'the module export keeps no checkpointer');
    assert.equal(module.compiled.store, undefined);

    const config = { configurable: { thread_id: 't1' } };
    await graph.invoke({ label: 'a' }, config);
    await graph.invoke({ label: 'b' }, config);
    assert.equal((await graph.getState(config)).values.count, 2, 'state accumulates on the thread');

    const replaced = await registry.get('compiledWithSaver', { checkpointer });
    assert.equal(replaced.checkpointer, checkpointer, "the server's checkpointer replaces the graph's own");
    assert.ok(module.compiledWithSaver.checkpointer instanceof MemorySaver);
    assert.notEqual(module.compiledWithSaver.checkpointer, checkpointer);
  });

  it('returns the same bound instance for the same persistence, another for other persistence', async () => {
    const registry = await GraphRegistry.load([spec('compiled'), spec('stateGraph')]);
    const checkpointer = new MemorySaver();
    for (const graphId of ['compiled', 'stateGraph']) {
      const first = await registry.get(graphId, { checkpointer });
      assert.equal(await registry.get(graphId, { checkpointer }), first);
      assert.notEqual(await registry.get(graphId, { checkpointer: new MemorySaver() }), first);
      const without = await registry.get(graphId, { checkpointer: false });
      assert.ok(!without.checkpointer, 'no checkpointer');
    }
  });

  it('compiles a StateGraph with the server persistence', async () => {
    const registry = await GraphRegistry.load([spec('stateGraph')]);
    const checkpointer = new MemorySaver();
    const graph = await registry.get('stateGraph', { checkpointer });
    assert.equal(graph.checkpointer, checkpointer);
    await graph.invoke({ label: 'x' }, { configurable: { thread_id: 't' } });
    assert.equal((await graph.getState({ configurable: { thread_id: 't' } })).values.count, 1);
  });

  it('calls factories with the run config, every time', async () => {
    const registry = await GraphRegistry.load([spec('factory'), spec('asyncFactory')]);
    for (const graphId of ['factory', 'asyncFactory']) {
      const graph = await registry.get(graphId, {
        config: { configurable: { node_name: 'custom_node' } },
        checkpointer: new MemorySaver(),
      });
      const drawn = (await graph.getGraphAsync()).toJSON() as { nodes: { id: string }[] };
      assert.ok(
        drawn.nodes.some((node) => node.id === 'custom_node'),
        graphId,
      );
      const plain = await registry.get(graphId);
      const plainDrawn = (await plain.getGraphAsync()).toJSON() as { nodes: { id: string }[] };
      assert.ok(
        plainDrawn.nodes.some((node) => node.id === 'increment'),
        graphId,
      );
    }
  });

  it('reports factories that throw or return something else', async () => {
    const registry = await GraphRegistry.load([spec('throwingFactory'), spec('badFactory')]);
    await assert.rejects(registry.get('throwingFactory'), (error: unknown) => {
      assert.ok(error instanceof GraphLoadError);
      assert.equal(error.failure, 'factory_failed');
      assert.match(error.message, /graph "throwingFactory": the graph factory threw: factory exploded/);
      return true;
    });
    await assert.rejects(
      registry.get('badFactory'),
      /graph "badFactory": the graph factory returned Object, not a compiled graph/,
    );
  });

  it('throws GraphNotFoundError (404) for an unknown id everywhere', async () => {
    const registry = await GraphRegistry.load([spec('compiled')]);
    for (const call of [
      () => registry.get('nope'),
      () => registry.drawable('nope'),
      () => registry.schemas('nope'),
      () => registry.subgraphs('nope'),
    ]) {
      await assert.rejects(call(), (error: unknown) => {
        assert.ok(error instanceof GraphNotFoundError);
        assert.equal(error.statusCode, 404);
        assert.equal(error.message, 'Graph "nope" not found');
        return true;
      });
    }
  });
});

describe('GraphRegistry introspection (example graphs)', async () => {
  const examples = resolve(here, '../../../../../examples/graphs/langgraph.json');
  const registry = await GraphRegistry.load(parseGraphSpecs({ langgraph_config: examples }, '/'));

  it('draws the graph as {nodes, edges}, with subgraphs expanded by xray', async () => {
    const flat = (await registry.drawable('subgraph')) as {
      nodes: { id: string; type: string }[];
      edges: { source: string; target: string }[];
    };
    assert.deepEqual(
      flat.nodes.map((node) => node.id),
      ['__start__', 'research', 'review', '__end__'],
    );
    assert.equal(flat.nodes[0]!.type, 'schema');
    assert.equal(flat.nodes[1]!.type, 'runnable');
    assert.ok(flat.edges.some((edge) => edge.source === 'research' && edge.target === 'review'));
    const expanded = (await registry.drawable('subgraph', { xray: true })) as { nodes: { id: string }[] };
    assert.ok(expanded.nodes.some((node) => node.id === 'research:make_plan'));
  });

  it('serves the state, input, output and context schemas', async () => {
    const schemas = (await registry.schemas('chat')) as unknown as Record<
      string,
      { properties?: Record<string, unknown> }
    >;
    assert.deepEqual(Object.keys(schemas).sort(), [
      'config_schema',
      'context_schema',
      'input_schema',
      'output_schema',
      'state_schema',
    ]);
    assert.ok(schemas.state_schema!.properties!.messages);
    assert.ok(schemas.input_schema!.properties!.messages);
    assert.deepEqual(Object.keys(schemas.context_schema!.properties!).sort(), ['model_name', 'system_prompt']);
    assert.deepEqual(schemas.config_schema, schemas.context_schema);
  });

  it('describes an Annotation graph by its channels', async () => {
    const counter = await GraphRegistry.load([spec('compiled')]);
    const schemas = (await counter.schemas('compiled')) as unknown as Record<
      string,
      { properties?: Record<string, unknown> } | null
    >;
    assert.deepEqual(Object.keys(schemas.state_schema!.properties!).sort(), ['count', 'label']);
    assert.equal(schemas.context_schema, null);
  });

  it('lists subgraphs with their schemas, recursively on request', async () => {
    const subgraphs = (await registry.subgraphs('subgraph')) as Record<
      string,
      { state: { properties: Record<string, unknown> } }
    >;
    assert.deepEqual(Object.keys(subgraphs), ['research']);
    assert.deepEqual(Object.keys(subgraphs.research!.state.properties).sort(), ['messages', 'plan']);
    assert.deepEqual(Object.keys(await registry.subgraphs('subgraph', 'research', true)), ['research']);
    assert.deepEqual(Object.keys(await registry.subgraphs('chat', undefined, true)), []);
  });
});

describe('graphs built with another copy of @langchain/langgraph', () => {
  it('names them, and they still load and run', async () => {
    const dir = tempDir('agent-api-langgraph-copy-');
    try {
      const graphFile = projectWithItsOwnLangGraph(dir);
      const registry = await GraphRegistry.load([
        spec('compiled'),
        spec('stateGraph'),
        spec('factory'),
        spec('graph', graphFile, 'copy_compiled'),
        spec('stateGraph', graphFile, 'copy_builder'),
      ]);
      assert.deepEqual(registry.builtWithAnotherLangGraph(), ['copy_compiled', 'copy_builder']);
      for (const graphId of ['copy_compiled', 'copy_builder']) {
        const graph = await registry.get(graphId, { checkpointer: false });
        assert.deepEqual(await graph.invoke({ text: 'hi' }), { text: 'hi!' }, graphId);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
