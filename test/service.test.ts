// The service: wiring, start order, reverse stop, fan-out ownership, readiness and metrics.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseConfigText, validateConfig } from '../src/config/load.ts';
import type { ServiceConfig } from '../src/config/load.ts';
import type { Consumer, ExporterFactory, Factory } from '../src/pipeline/component.ts';
import { FanoutConsumer } from '../src/pipeline/consumers.ts';
import { ThrottleError } from '../src/pipeline/errors.ts';
import { Registry } from '../src/pipeline/registry.ts';
import { Service } from '../src/pipeline/service.ts';
import { Sink } from '../src/pipeline/testing.ts';
import { silentLogger } from '../src/telemetry/logger.ts';
import { componentCounters, createMetricsRegistry } from '../src/telemetry/metrics.ts';
import type { SpanBatch } from '../src/model/spans.ts';
import { makeBatch, plainSpan } from '../src/testkit/spans.ts';
import journalFactories from './fixtures/journal-plugin.ts';
import { tempDir } from './helpers.ts';

function load(yaml: string, factories: readonly Factory[] = journalFactories): ServiceConfig {
  const { config, errors } = validateConfig(parseConfigText(yaml), new Registry(factories), tempDir());
  assert.deepEqual(errors, []);
  return config!;
}

function journalLines(config: ServiceConfig, file = 'journal.txt'): string[] {
  return readFileSync(`${config.baseDir}/${file}`, 'utf8').trim().split('\n');
}

/** What the factories of a test's own components share: no config, and nothing to start or stop. */
const base = {
  stability: 'stable',
  description: 'test',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
} as const;
const lifecycle = { start: async () => {}, shutdown: async () => {} };

/** A service with a silent logger and its own metrics registry (`metrics`, when the test reads it). */
function quietService(config: ServiceConfig, metrics = createMetricsRegistry({ processMetrics: false })): Service {
  return new Service(config, { logger: silentLogger(), metrics });
}

/**
 * A processor of spans that passes on what it is given, untouched; `refusal` is its `refusal()`,
 * and `created` is told what it passes on to.
 */
function passingProcessor(
  type: string,
  mutatesData: boolean,
  hooks: { refusal?: Consumer['refusal']; created?: (next: Consumer) => void } = {},
): Factory {
  return {
    ...base,
    kind: 'processor',
    type,
    consumes: 'spans',
    produces: 'spans',
    create: (_s, _c, next) => {
      hooks.created?.(next);
      return {
        ...lifecycle,
        mutatesData,
        ...(hooks.refusal ? { refusal: hooks.refusal } : {}),
        consume: (data, context) => next.consume(data, context),
      };
    },
  };
}

/** An exporter of spans, `keep`, that takes every batch and does nothing with it. */
const discardingExporter: Factory = {
  ...base,
  kind: 'exporter',
  type: 'keep',
  consumes: 'spans',
  create: () => ({ ...lifecycle, mutatesData: false, consume: async () => {} }),
};

const pipeline = `
receivers: { journal_source: { journal: journal.txt, spans: 2 } }
processors: { journal_hold: { journal: journal.txt } }
exporters: { journal_sink: { journal: journal.txt } }
service:
  pipelines:
    traces: { receivers: [journal_source], processors: [journal_hold], exporters: [journal_sink] }
`;

describe('service lifecycle', () => {
  it('starts exporters → processors → receivers, stops in reverse, flushing held data on stop', async () => {
    const config = load(pipeline);
    const service = quietService(config);
    assert.equal(service.host.state(), 'starting');
    await service.start();
    assert.equal(service.host.state(), 'ready');
    await service.shutdown();
    assert.equal(service.host.state(), 'stopped');
    await service.shutdown(); // idempotent
    assert.deepEqual(journalLines(config), [
      'exporter:journal_sink:start',
      'processor:journal_hold:start',
      'receiver:journal_source:start',
      'processor:journal_hold:hold 2',
      'receiver:journal_source:shutdown',
      'exporter:journal_sink:export 2',
      'processor:journal_hold:shutdown',
      'exporter:journal_sink:shutdown',
    ]);
  });

  it('counts items per component in the metrics registry', async () => {
    const config = load(pipeline);
    const metrics = createMetricsRegistry({ processMetrics: false });
    const service = quietService(config, metrics);
    await service.start();
    await service.shutdown();
    const text = await metrics.metrics();
    assert.match(
      text,
      /tracepipe_component_items_sent_total\{component_id="journal_source",component_kind="receiver",data_type="spans"\} 2/,
    );
    assert.match(
      text,
      /tracepipe_component_items_received_total\{component_id="journal_hold",component_kind="processor",data_type="spans"\} 2/,
    );
    assert.match(
      text,
      /tracepipe_component_items_received_total\{component_id="journal_sink",component_kind="exporter",data_type="spans"\} 2/,
    );
  });

  it('labels a processor of `any` type with the data type its pipeline carries there', async () => {
    const passThrough: Factory = {
      kind: 'processor',
      type: 'pass_through',
      stability: 'stable',
      description: 'passes on whatever its pipeline carries',
      consumes: 'any',
      produces: 'any',
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create: (_settings, _config, next) => ({
        mutatesData: false,
        start: async () => {},
        shutdown: async () => {},
        consume: (data, context) => next.consume(data, context),
      }),
    };
    const config = load(
      pipeline
        .replace('processors: { journal_hold', 'processors: { pass_through: {}, journal_hold')
        .replace('processors: [journal_hold]', 'processors: [pass_through, journal_hold]'),
      [...journalFactories, passThrough],
    );
    const metrics = createMetricsRegistry({ processMetrics: false });
    const service = quietService(config, metrics);
    await service.start();
    await service.shutdown();
    const text = await metrics.metrics();
    for (const direction of ['received', 'sent'])
      assert.match(
        text,
        new RegExp(
          `tracepipe_component_items_${direction}_total\\{component_id="pass_through",component_kind="processor",data_type="spans"\\} 2`,
        ),
      );
  });

  it('stops what had started when a component fails to start, and reports which one', async () => {
    const config = load(pipeline.replace('spans: 2 }', 'spans: 2, fail_start: true }'));
    const service = quietService(config);
    await assert.rejects(service.start(), /component journal_source failed to start: configured to fail/);
    assert.equal(service.host.state(), 'stopped');
    assert.deepEqual(journalLines(config).slice(-3), [
      'receiver:journal_source:shutdown',
      'processor:journal_hold:shutdown',
      'exporter:journal_sink:shutdown',
    ]);
  });

  it('gathers shutdown failures instead of stopping at the first', async () => {
    const failing = (type: string): Factory =>
      ({
        ...(journalFactories[2] as Factory),
        type,
        create: () => ({
          mutatesData: false,
          start: async () => {},
          consume: async () => {},
          shutdown: async () => {
            throw new Error(`${type} broke`);
          },
        }),
      }) as Factory;
    const config = load(
      pipeline
        .replace(
          'exporters: { journal_sink: { journal: journal.txt } }',
          'exporters: { broken_a: { journal: j }, broken_b: { journal: j } }',
        )
        .replace('exporters: [journal_sink]', 'exporters: [broken_a, broken_b]'),
      [...journalFactories, failing('broken_a'), failing('broken_b')],
    );
    const service = quietService(config);
    await service.start();
    await assert.rejects(service.shutdown(), (error: unknown) => {
      assert.ok(error instanceof AggregateError);
      assert.equal(error.errors.length, 2);
      assert.match(error.message, /broken_a broke.*broken_b broke/);
      return true;
    });
  });
});

describe('fan-out', () => {
  const batch = (): SpanBatch => ({ resourceSpans: [] });

  it('gives a mutating consumer its own copy and read-only consumers the original', async () => {
    const seen: SpanBatch[] = [];
    const record = (mutatesData: boolean): Consumer<'spans'> => ({
      mutatesData,
      consume: async (data) => void seen.push(data),
    });
    const original = batch();
    await new FanoutConsumer([record(true), record(false)]).consume(original, { project: 'p' });
    assert.notEqual(seen[0], original);
    assert.equal(seen[1], original);
  });

  it('clones for a pipeline whose later processor mutates, though its first one does not', async () => {
    const kept = new Map<string, SpanBatch>();
    const factories: Factory[] = [
      {
        ...base,
        kind: 'receiver',
        type: 'emit',
        produces: 'spans',
        create: (_settings, _config, next) => ({
          start: async () => next.consume(makeBatch([plainSpan({ name: 'original' })]), { project: 'p' }),
          shutdown: async () => {},
        }),
      },
      // Passes on what it is given, untouched: it does not mutate, but it does not copy either.
      passingProcessor('pass', false),
      {
        ...base,
        kind: 'processor',
        type: 'rename',
        consumes: 'spans',
        produces: 'spans',
        create: (_s, _c, next) => ({
          ...lifecycle,
          mutatesData: true,
          consume: async (data: SpanBatch, context) => {
            (data.resourceSpans[0]!.scopeSpans[0]!.spans[0] as { name: string }).name = 'renamed';
            await next.consume(data, context);
          },
        }),
      },
      {
        ...base,
        kind: 'exporter',
        type: 'keep',
        consumes: 'spans',
        create: (settings) => ({
          ...lifecycle,
          mutatesData: false,
          consume: async (data: SpanBatch) => void kept.set(settings.id, data),
        }),
      },
    ];
    const config = load(
      `receivers: { emit: {} }
processors: { pass: {}, rename: {} }
exporters: { keep/a: {}, keep/b: {} }
service:
  pipelines:
    traces/a: { receivers: [emit], processors: [pass, rename], exporters: [keep/a] }
    traces/b: { receivers: [emit], exporters: [keep/b] }
`,
      factories,
    );
    const service = quietService(config);
    await service.start();
    await service.shutdown();
    assert.equal(kept.get('keep/a')!.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.name, 'renamed');
    assert.equal(kept.get('keep/b')!.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.name, 'original');
  });

  it("passes a pipeline's refusal up to its receiver, through the fan-out and the clone for a mutating pipeline", async () => {
    const refusal = new ThrottleError('gate: closed', 1000);
    let closed = false;
    let receiverOutput: Consumer | undefined;
    const factories: Factory[] = [
      {
        ...base,
        kind: 'receiver',
        type: 'emit',
        produces: 'spans',
        create: (_settings, _config, next) => {
          receiverOutput = next;
          return lifecycle;
        },
      },
      passingProcessor('gate', false, { refusal: () => (closed ? refusal : undefined) }),
      passingProcessor('rename', true),
      discardingExporter,
    ];
    const config = load(
      `receivers: { emit: {} }
processors: { gate: {}, rename: {} }
exporters: { keep/a: {}, keep/b: {} }
service:
  pipelines:
    traces/a: { receivers: [emit], processors: [gate, rename], exporters: [keep/a] }
    traces/b: { receivers: [emit], exporters: [keep/b] }
`,
      factories,
    );
    const service = quietService(config);
    await service.start();
    try {
      assert.equal(receiverOutput!.refusal?.(), undefined);
      closed = true;
      assert.equal(receiverOutput!.refusal?.(), refusal);
      closed = false;
      assert.equal(receiverOutput!.refusal?.(), undefined);
    } finally {
      await service.shutdown();
    }
  });

  it('tells each processor whether anything downstream writes to what it passes on', async () => {
    const outputs = new Map<string, boolean>();
    const processor = (type: string, mutatesData: boolean): Factory =>
      passingProcessor(type, mutatesData, { created: (next) => outputs.set(type, next.mutatesData) });
    const factories: Factory[] = [
      {
        ...base,
        kind: 'receiver',
        type: 'emit',
        produces: 'spans',
        create: () => ({ start: async () => {}, shutdown: async () => {} }),
      },
      processor('first', false),
      processor('pass', false),
      processor('rename', true),
      processor('last', false),
      discardingExporter,
    ];
    const config = load(
      `receivers: { emit: {} }
processors: { first: {}, pass: {}, rename: {}, last: {} }
exporters: { keep: {} }
service:
  pipelines:
    traces: { receivers: [emit], processors: [first, pass, rename, last], exporters: [keep] }
`,
      factories,
    );
    quietService(config);
    // `first` and `pass` hand on objects that `rename` may write to, even through `pass`.
    assert.deepEqual(Object.fromEntries(outputs), { first: true, pass: true, rename: false, last: false });
  });

  it('tries every consumer and then rejects with the first failure', async () => {
    const ok = new Sink<'spans'>();
    const failing = new Sink<'spans'>();
    failing.fail = () => new Error('full');
    await assert.rejects(new FanoutConsumer<'spans'>([failing, ok]).consume(batch(), { project: 'p' }), /full/);
    assert.equal(ok.batches.length, 1);
  });
});

describe('service shutdown report', () => {
  /** An exporter that counts drops with the given reasons: some at start, some while stopping. */
  function droppingExporter(atStart: string, atShutdown: string[]): Factory {
    return Object.freeze({
      kind: 'exporter',
      type: 'dropping',
      stability: 'development',
      description: 'Test exporter that counts drops.',
      consumes: 'spans',
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create(settings) {
        const labels = { component_id: settings.id, component_kind: 'exporter', data_type: 'spans' };
        const { dropped } = componentCounters(settings.host.metrics);
        return {
          mutatesData: false,
          async consume() {},
          async start() {
            dropped.inc({ ...labels, reason: atStart }, 5);
          },
          async shutdown() {
            for (const reason of atShutdown) dropped.inc({ ...labels, reason }, 3);
          },
        };
      },
    } satisfies ExporterFactory);
  }

  const yaml = `
receivers: { journal_source: { journal: journal.txt, spans: 0 } }
exporters: { dropping: {} }
service: { pipelines: { traces: { receivers: [journal_source], exporters: [dropping] } } }
`;

  for (const [reasons, lost] of [
    [['shutdown'], 3],
    [['shutdown_deadline', 'retries_exhausted'], 6],
    [['invalid_id', 'too_large'], 0],
    [[], 0],
  ] as const) {
    it(`reports ${lost} items lost when ${reasons.join(' and ') || 'nothing'} is counted while stopping`, async () => {
      const config = load(yaml, [...journalFactories, droppingExporter('shutdown', [...reasons])]);
      const service = quietService(config);
      await service.start();
      // The drop counted at start (before the shutdown) is not the shutdown's.
      assert.deepEqual(await service.shutdown(), { lostItems: lost });
    });
  }
});
