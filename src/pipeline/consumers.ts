// Consumer plumbing the framework puts between components: a fan-out to several consumers
// (cloning only for the ones that mutate), and an observer that counts items in each direction.

import type { Consumer } from './component.ts';
import type { DataOf, DataType, RequestContext } from './data.ts';
import { countItems } from './data.ts';
import { isThrottle } from './errors.ts';
import type { ThrottleError } from './errors.ts';
import type { ComponentCounters } from '../telemetry/metrics.ts';

/**
 * Sends every batch to all consumers. Consumers that mutate data get their own deep copy (the last
 * mutating one may take the original when no read-only consumer shares it), so no consumer ever
 * sees another's changes. Resolves when all have accepted; rejects with the first failure, after
 * all have been tried — the caller's retry then re-sends to all (at-least-once, as the Collector).
 */
export class FanoutConsumer<T extends DataType> implements Consumer<T> {
  readonly mutatesData = false;
  private readonly readOnly: Consumer<T>[];
  private readonly mutating: Consumer<T>[];

  private readonly refusing: Consumer<T>[];

  constructor(consumers: readonly Consumer<T>[]) {
    this.readOnly = consumers.filter((consumer) => !consumer.mutatesData);
    this.mutating = consumers.filter((consumer) => consumer.mutatesData);
    this.refusing = consumers.filter((consumer) => consumer.refusal !== undefined);
  }

  /** The first refusal of its consumers: one refusing consumer fails the whole batch. */
  refusal(): ThrottleError | undefined {
    for (const consumer of this.refusing) {
      const refusal = consumer.refusal!();
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  }

  async consume(data: DataOf[T], context: RequestContext): Promise<void> {
    const deliveries: Promise<void>[] = [];
    this.mutating.forEach((consumer, index) => {
      const lastAndAlone = index === this.mutating.length - 1 && this.readOnly.length === 0;
      deliveries.push(consumer.consume(lastAndAlone ? data : structuredClone(data), context));
    });
    for (const consumer of this.readOnly) deliveries.push(consumer.consume(data, context));
    const results = await Promise.allSettled(deliveries);
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw (failure as PromiseRejectedResult).reason;
  }
}

export function fanout<T extends DataType>(consumers: readonly Consumer<T>[]): Consumer<T> {
  return consumers.length === 1 ? consumers[0]! : new FanoutConsumer(consumers);
}

/** Labels that identify one component in the per-component counters. */
export interface ComponentLabels {
  readonly component_id: string;
  readonly component_kind: string;
  readonly data_type: string;
}

/**
 * Wraps a component's input so that the items it accepts, refuses (throttled) and fails are
 * counted under its labels. Used on every processor and exporter input, and on every receiver's
 * output (what the receiver sent downstream).
 */
export function observeConsumer<T extends DataType>(
  inner: Consumer<T>,
  labels: ComponentLabels,
  counters: ComponentCounters,
  direction: 'received' | 'sent',
): Consumer<T> {
  return {
    mutatesData: inner.mutatesData,
    ...refusalOf(inner),
    async consume(data: DataOf[T], context: RequestContext): Promise<void> {
      const items = countItems(data);
      try {
        await inner.consume(data, context);
        counters[direction].inc(labels, items);
      } catch (error) {
        (isThrottle(error) ? counters.refused : counters.failed).inc(labels, items);
        throw error;
      }
    },
  };
}

/**
 * A wrapper's `refusal` member that asks `inner`, or none when `inner` never refuses ahead: spread
 * into a consumer that passes batches to `inner`, so that a receiver still sees the refusal.
 */
export function refusalOf<T extends DataType>(inner: Consumer<T>): Pick<Consumer<T>, 'refusal'> {
  return inner.refusal === undefined ? {} : { refusal: () => inner.refusal!() };
}
