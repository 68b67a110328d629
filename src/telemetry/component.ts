// What a component reports about itself, already bound to it: a logger that carries its id and
// kind, and metric instruments whose series carry its `component_id` label. The framework builds
// one per component and hands it in through `ComponentSettings.telemetry`, as the OpenTelemetry
// Collector hands each component its `component.TelemetrySettings`; components never label their
// own logs or metrics by hand.

import type { Logger } from 'pino';
import type { LabelValues, Registry } from 'prom-client';
import type { ComponentKind } from '../pipeline/component.ts';
import { componentCounters, counter, gauge, histogram } from './metrics.ts';

/** A component's logger and meter. */
export interface TelemetrySettings {
  /** A pino child logger carrying `component: {id, kind}` (logged as `component.id`, `component.kind`). */
  readonly logger: Logger;
  readonly meter: ComponentMeter;
}

/** What an instrument is: its name, help and the labels the component sets itself. */
export interface InstrumentConfig<L extends string> {
  readonly name: string;
  readonly help: string;
  /** The component's own labels; `component_id` comes first and is filled in. */
  readonly labelNames?: readonly L[];
}

export interface ComponentCounter<L extends string = never> {
  inc(value?: number): void;
  inc(labels: LabelValues<L>, value?: number): void;
}

export interface ComponentGauge<L extends string = never> {
  set(value: number): void;
  set(labels: LabelValues<L>, value: number): void;
  inc(value?: number): void;
  inc(labels: LabelValues<L>, value?: number): void;
  dec(value?: number): void;
  dec(labels: LabelValues<L>, value?: number): void;
}

export interface ComponentHistogram<L extends string = never> {
  observe(value: number): void;
  observe(labels: LabelValues<L>, value: number): void;
}

/**
 * Metric instruments bound to one component. Instruments are get-or-create by name in the
 * process's registry, so every instance of a component type shares a metric and is told apart by
 * its `component_id` label.
 */
export interface ComponentMeter {
  /** The process's registry, for what the instruments below do not cover (collect callbacks). */
  readonly registry: Registry;
  counter<L extends string = never>(config: InstrumentConfig<L>): ComponentCounter<L>;
  gauge<L extends string = never>(config: InstrumentConfig<L>): ComponentGauge<L>;
  histogram<L extends string = never>(
    config: InstrumentConfig<L> & { readonly buckets?: readonly number[] },
  ): ComponentHistogram<L>;
  /**
   * Counts items this component had to drop, in the framework's
   * `tracepipe_component_items_dropped_total` (labelled with its id and kind, `data_type` and
   * `reason`), where dashboards find every drop of the pipeline.
   */
  dropped(dataType: string, reason: string, items?: number): void;
}

type Bound<L extends string> = LabelValues<L | 'component_id'>;

/** The telemetry of one component: `logger` is the process's, `registry` its metrics registry. */
export function componentTelemetry(options: {
  readonly id: string;
  readonly kind: ComponentKind;
  readonly logger: Logger;
  readonly registry: Registry;
}): TelemetrySettings {
  const { id, kind, registry } = options;
  // Argument lists of the overloads above: `(value?)` or `(labels, value?)`.
  const split = <L extends string>(
    first: LabelValues<L> | number | undefined,
    second: number | undefined,
  ): [Bound<L>, number | undefined] =>
    typeof first === 'object'
      ? [{ component_id: id, ...first } as Bound<L>, second]
      : [{ component_id: id } as Bound<L>, first];
  const labelNames = <L extends string>(config: InstrumentConfig<L>): (L | 'component_id')[] => [
    'component_id',
    ...(config.labelNames ?? []),
  ];
  const { dropped } = componentCounters(registry);
  const meter: ComponentMeter = {
    registry,
    counter<L extends string = never>(config: InstrumentConfig<L>): ComponentCounter<L> {
      const metric = counter<L | 'component_id'>(registry, { ...config, labelNames: labelNames(config) });
      return {
        inc: (first?: LabelValues<L> | number, second?: number) => metric.inc(...split<L>(first, second)),
      };
    },
    gauge<L extends string = never>(config: InstrumentConfig<L>): ComponentGauge<L> {
      const metric = gauge<L | 'component_id'>(registry, { ...config, labelNames: labelNames(config) });
      return {
        set: (first: LabelValues<L> | number, second?: number) => {
          const [labels, value] = split<L>(first, second);
          metric.set(labels, value ?? 0);
        },
        inc: (first?: LabelValues<L> | number, second?: number) => metric.inc(...split<L>(first, second)),
        dec: (first?: LabelValues<L> | number, second?: number) => metric.dec(...split<L>(first, second)),
      };
    },
    histogram<L extends string = never>(
      config: InstrumentConfig<L> & { readonly buckets?: readonly number[] },
    ): ComponentHistogram<L> {
      const { buckets, ...rest } = config;
      const metric = histogram<L | 'component_id'>(registry, {
        ...rest,
        labelNames: labelNames(config),
        ...(buckets ? { buckets: [...buckets] } : {}),
      });
      return {
        observe: (first: LabelValues<L> | number, second?: number) => {
          const [labels, value] = split<L>(first, second);
          metric.observe(labels, value ?? 0);
        },
      };
    },
    dropped: (dataType, reason, items = 1) =>
      dropped.inc({ component_id: id, component_kind: kind, data_type: dataType, reason }, items),
  };
  return { logger: options.logger.child({ component: { id, kind } }), meter };
}
