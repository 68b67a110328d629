// The component registry: explicit lists, duplicate and malformed factories rejected.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TracepipeError } from '../src/errors.ts';
import { Registry } from '../src/pipeline/registry.ts';
import { components } from '../distribution/components.ts';
import type { Catalog } from '../src/pipeline/catalog.ts';
import { componentKey, loadFactories, referencedComponents } from '../src/pipeline/catalog.ts';
import { stubFactory } from './helpers.ts';

describe('registry', () => {
  it('lists factories by kind, sorted', () => {
    const registry = new Registry([
      stubFactory('exporter', 'zeta'),
      stubFactory('exporter', 'alpha'),
      stubFactory('receiver', 'r'),
    ]);
    assert.deepEqual(registry.types('exporter'), ['alpha', 'zeta']);
    assert.deepEqual(registry.types('receiver'), ['r']);
    assert.equal(registry.get('exporter', 'alpha')?.type, 'alpha');
    assert.equal(registry.get('processor', 'alpha'), undefined);
  });

  it('throws on a duplicate kind/type', () => {
    assert.throws(
      () => new Registry([stubFactory('exporter', 'twice'), stubFactory('exporter', 'twice')]),
      (error: unknown) => error instanceof TracepipeError && error.code === 'TP_ERR_REGISTRY_DUPLICATE',
    );
    // The same type under another kind is a different component.
    assert.doesNotThrow(() => new Registry([stubFactory('exporter', 'same'), stubFactory('receiver', 'same')]));
  });

  it('rejects malformed factories with the reason', () => {
    const cases: [unknown, RegExp][] = [
      [{ ...stubFactory('exporter', 'ok'), type: 'Not-Snake' }, /lower_snake_case/],
      [{ ...stubFactory('exporter', 'ok'), configSchema: undefined }, /configSchema/],
      [{ ...stubFactory('exporter', 'ok'), create: 1 }, /create must be a function/],
      [{ ...stubFactory('processor', 'ok'), consumes: 'logs' }, /consumes must be one of spans, runs/],
      [{ ...stubFactory('receiver', 'ok'), produces: 'any' }, /produces must be one of/],
      [{ ...stubFactory('processor', 'ok'), consumes: 'any' }, /consumes and produces are both 'any' or neither/],
      [{ ...stubFactory('exporter', 'ok'), kind: 'connector' }, /kind must be one of/],
    ];
    for (const [factory, reason] of cases) {
      assert.throws(() => new Registry([factory as never]), reason);
    }
  });

  it('freezes registered factories, and the built-ins register without conflict', async () => {
    const registry = new Registry(await loadFactories(components));
    for (const factory of registry.all()) assert.ok(Object.isFrozen(factory), `${factory.type} is not frozen`);
  });
});

describe('catalog', () => {
  it('names every built-in component by the kind and type its module exports', async () => {
    // loadFactories throws when an entry's module exports another kind/type than the entry says.
    const factories = await loadFactories(components);
    assert.deepEqual(
      factories.map((factory) => `${factory.kind}/${factory.type}`),
      components.map((entry) => `${entry.kind}/${entry.type}`),
    );
    assert.equal(new Set(factories.map((factory) => `${factory.kind}/${factory.type}`)).size, factories.length);
  });

  it('loads only what a config refers to', async () => {
    const loaded: string[] = [];
    const catalog: Catalog = components.map((entry) => ({
      ...entry,
      load: async () => {
        loaded.push(`${entry.kind}/${entry.type}`);
        return entry.load();
      },
    }));
    const data = { receivers: { otlp: {} }, processors: { 'batch/fast': {} }, exporters: { debug: {} } };
    const referenced = referencedComponents(data);
    await loadFactories(catalog, (entry) => referenced.has(componentKey(entry.kind, entry.type)));
    assert.deepEqual(loaded.sort(), ['exporter/debug', 'processor/batch', 'receiver/otlp']);
  });

  it('rejects an entry whose module exports another component', async () => {
    const catalog: Catalog = [{ kind: 'exporter', type: 'one', load: async () => stubFactory('exporter', 'two') }];
    await assert.rejects(loadFactories(catalog), /catalog entry exporter\/one loaded the factory of exporter\/two/);
  });
});
