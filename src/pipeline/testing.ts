// The shared test kit for components: settings that need no service, sinks that record what they
// consume, and a conformance suite that every plugin's tests run (after the Collector's generated
// component tests and goleak).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { defaultsOf, validateAgainst } from '../config/ajv.ts';
import type { Logger } from 'pino';
import { componentTelemetry } from '../telemetry/component.ts';
import { silentLogger } from '../telemetry/logger.ts';
import { createMetricsRegistry } from '../telemetry/metrics.ts';
import type { ComponentKind, ComponentSettings, Consumer, Factory, Host, Lifecycle } from './component.ts';
import type { DataOf, DataType, RequestContext } from './data.ts';
import type { Delivery } from './delivery.ts';

export function nopHost(overrides: Partial<Host> = {}): Host {
  return {
    state: () => 'ready',
    metrics: createMetricsRegistry({ processMetrics: false }),
    resolvePath: (path: string) => path,
    getExtensions: () => new Map(),
    ...overrides,
  };
}

/** Settings for a component outside a service; `logger` (default: silent) receives its logs. */
export function nopSettings(
  kind: ComponentKind = 'receiver',
  id = 'test',
  host: Host = nopHost(),
  options: { readonly logger?: Logger } = {},
): ComponentSettings {
  const logger = options.logger ?? silentLogger();
  return { id, kind, telemetry: componentTelemetry({ id, kind, logger, registry: host.metrics }), host };
}

/**
 * A consumer that records every batch and its context. `fail` makes the next calls reject. It
 * holds nothing past `consume()`, so deliveries settle when it returns; the recorded context
 * leaves the delivery out (it is bookkeeping, not who sent the data): see `deliveries`.
 */
export class Sink<T extends DataType = DataType> implements Consumer<T> {
  readonly mutatesData = false;
  readonly batches: { data: DataOf[T]; context: RequestContext }[] = [];
  /** The delivery of each recorded batch, if it had one. */
  readonly deliveries: (Delivery | undefined)[] = [];
  fail?: (data: DataOf[T], context: RequestContext) => Error | undefined;
  private waiters: { predicate: () => boolean; resolve: () => void }[] = [];

  async consume(data: DataOf[T], context: RequestContext): Promise<void> {
    const failure = this.fail?.(data, context);
    if (failure) throw failure;
    const { delivery, ...who } = context;
    this.batches.push({ data, context: who });
    this.deliveries.push(delivery);
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.predicate()) return true;
      waiter.resolve();
      return false;
    });
  }

  /** Resolves once `predicate` holds (checked after each batch), or rejects after `timeoutMs`. */
  async waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
    if (predicate()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('Sink.waitFor timed out')), timeoutMs);
      this.waiters.push({ predicate, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}

export interface ConformanceOptions<C> {
  /** The plugin folder's `testdata` directory, holding `*.yaml` fixtures (see below). */
  readonly testdataDir?: string;
  /** Config used for the lifecycle checks, e.g. with `port: 0`; default: the schema's defaults. */
  readonly config?: C | (() => C | Promise<C>);
  /** One batch to feed a processor or exporter during the create→start→consume→shutdown check. */
  readonly sample?: () => DataOf[DataType];
  /** Skip the leaked-handle check (only for components whose libraries keep global handles). */
  readonly skipHandleCheck?: boolean;
}

/**
 * Registers the conformance tests for a factory:
 * - the default config validates;
 * - each `testdata/*.yaml` fixture `{config, expect?, error?}` validates to a config containing
 *   `expect`, or fails with a message containing `error`;
 * - create→shutdown, create→start→(consume)→shutdown, and a second shutdown all work;
 * - no handles (sockets, timers, files) are left afterwards.
 */
export function runComponentConformance<C>(factory: Factory, options: ConformanceOptions<C> = {}): void {
  describe(`${factory.kind} ${factory.type}: conformance`, () => {
    it('validates its default config', () => {
      const config = defaultsOf(factory.configSchema);
      assert.deepEqual(validateAgainst(factory.configSchema, config, factory.type), []);
      assert.deepEqual(factory.validate?.(config) ?? [], []);
    });

    if (options.testdataDir) {
      for (const file of readdirSync(options.testdataDir)
        .filter((f) => f.endsWith('.yaml'))
        .sort()) {
        it(`fixture ${file}`, () => {
          const fixture = parseYaml(readFileSync(join(options.testdataDir!, file), 'utf8')) as {
            config?: unknown;
            expect?: unknown;
            error?: string;
          };
          const config = structuredClone(fixture.config ?? {});
          const errors = validateAgainst(factory.configSchema, config, factory.type);
          if (errors.length === 0 && factory.validate) errors.push(...factory.validate(config));
          if (fixture.error !== undefined) {
            assert.ok(
              errors.some((message) => message.includes(fixture.error!)),
              `expected an error containing ${JSON.stringify(fixture.error)}, got ${JSON.stringify(errors)}`,
            );
          } else {
            assert.deepEqual(errors, []);
            if (fixture.expect !== undefined) assertContains(config, fixture.expect, factory.type);
          }
        });
      }
    }

    const makeConfig = async (): Promise<C> => {
      const base =
        typeof options.config === 'function' ? await (options.config as () => C | Promise<C>)() : options.config;
      const config = structuredClone(base ?? ({} as C));
      validateAgainst(factory.configSchema, config, factory.type);
      return config;
    };

    const create = (config: C): Lifecycle & Partial<Consumer> => {
      const settings = nopSettings(factory.kind, factory.type);
      if (factory.kind === 'exporter' || factory.kind === 'extension') return factory.create(settings, config);
      return factory.create(settings, config, new Sink() as Consumer<never>);
    };

    it('create → shutdown, twice', async () => {
      const component = create(await makeConfig());
      await component.shutdown(Date.now() + 5000);
      await component.shutdown(Date.now() + 5000);
    });

    it('create → start → consume → shutdown leaves no handles behind', async () => {
      const before = countHandles();
      const controller = new AbortController();
      const component = create(await makeConfig());
      await component.start(controller.signal);
      if (options.sample && component.consume) {
        await component.consume(options.sample() as never, { project: 'default', apiKey: 'test-key' });
      }
      controller.abort();
      await component.shutdown(Date.now() + 5000);
      await component.shutdown(Date.now() + 5000);
      if (options.skipHandleCheck) return;
      await sleep(50); // Let closed sockets finish closing.
      const leaked = diffHandles(before, countHandles());
      assert.deepEqual(leaked, [], `handles left after shutdown: ${leaked.join(', ')}`);
    });
  });
}

function countHandles(): string[] {
  return process.getActiveResourcesInfo().filter((name) => name !== 'TTYWrap' && name !== 'PipeWrap');
}

function diffHandles(before: readonly string[], after: readonly string[]): string[] {
  const remaining = [...before];
  const leaked: string[] = [];
  for (const name of after) {
    const index = remaining.indexOf(name);
    if (index >= 0) remaining.splice(index, 1);
    else leaked.push(name);
  }
  return leaked;
}

/** Asserts that `actual` holds every key of `expected` with equal values (recursively). */
export function assertContains(actual: unknown, expected: unknown, path = '$'): void {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    assert.ok(actual !== null && typeof actual === 'object', `${path}: expected an object`);
    for (const [key, value] of Object.entries(expected)) {
      assertContains((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
    }
    return;
  }
  assert.deepEqual(actual, expected, `${path} differs`);
}
