// The process's own metrics (prom-client): one registry per service, per-component item counters
// that the framework maintains around every consumer, and a get-or-create helper so that two
// instances of one component type share a metric (distinguished by their `component_id` label).

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration, Metric } from 'prom-client';

export function createMetricsRegistry(options: { processMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'tracepipe_process_' });
  return registry;
}

/** The registered metric `name` when it is of `kind`'s class, or a new one from `create`. */
function getOrCreate<M extends Metric>(
  registry: Registry,
  name: string,
  kind: abstract new (...args: never[]) => M,
  create: () => M,
): M {
  const existing = registry.getSingleMetric(name);
  if (existing) {
    if (!(existing instanceof kind))
      throw new Error(`metric ${name} already registered as a ${existing.constructor.name.toLowerCase()}`);
    return existing;
  }
  return create();
}

export function counter<L extends string>(
  registry: Registry,
  config: Omit<CounterConfiguration<L>, 'registers'>,
): Counter<L> {
  return getOrCreate(registry, config.name, Counter, () => new Counter({ ...config, registers: [registry] }));
}

export function gauge<L extends string>(
  registry: Registry,
  config: Omit<GaugeConfiguration<L>, 'registers'>,
): Gauge<L> {
  return getOrCreate(registry, config.name, Gauge, () => new Gauge({ ...config, registers: [registry] }));
}

export function histogram<L extends string>(
  registry: Registry,
  config: Omit<HistogramConfiguration<L>, 'registers'>,
): Histogram<L> {
  return getOrCreate(registry, config.name, Histogram, () => new Histogram({ ...config, registers: [registry] }));
}

const COMPONENT_LABELS = ['component_id', 'component_kind', 'data_type'] as const;
type ComponentLabel = (typeof COMPONENT_LABELS)[number];

/** The framework's per-component counters: items in, out, dropped (refused) and failed. */
export function componentCounters(registry: Registry) {
  const labelNames = [...COMPONENT_LABELS];
  return {
    received: counter<ComponentLabel>(registry, {
      name: 'tracepipe_component_items_received_total',
      help: 'Items (spans or runs) a component accepted from upstream.',
      labelNames,
    }),
    sent: counter<ComponentLabel>(registry, {
      name: 'tracepipe_component_items_sent_total',
      help: 'Items a component passed downstream and that were accepted there.',
      labelNames,
    }),
    refused: counter<ComponentLabel>(registry, {
      name: 'tracepipe_component_items_refused_total',
      help: 'Items a component refused because its buffers were full (the client was asked to retry).',
      labelNames,
    }),
    failed: counter<ComponentLabel>(registry, {
      name: 'tracepipe_component_items_failed_total',
      help: 'Items a component rejected as invalid or could not handle.',
      labelNames,
    }),
    dropped: counter<ComponentLabel | 'reason'>(registry, {
      name: 'tracepipe_component_items_dropped_total',
      help: 'Items a component had to drop (counted and logged, never silent), by reason.',
      labelNames: [...labelNames, 'reason'],
    }),
  };
}

export type ComponentCounters = ReturnType<typeof componentCounters>;
