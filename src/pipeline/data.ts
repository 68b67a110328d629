// The data types that flow between components, and the request context that travels with them.

import type { RunBatch } from '../model/runs.ts';
import type { Delivery } from './delivery.ts';
import type { SpanBatch } from '../model/spans.ts';
import { countSpans } from '../model/spans.ts';

/** What a component consumes or produces. A pipeline's stages must agree on these at start-up. */
export type DataType = 'spans' | 'runs';
export const DATA_TYPES: readonly DataType[] = ['spans', 'runs'];

export interface DataOf {
  spans: SpanBatch;
  runs: RunBatch;
}

/**
 * Who sent the data. Resolved by the receiver (the `X-API-Key` and `Service-Project` headers, else its defaults) and carried
 * unchanged to the exporters, so that each tenant's data is uploaded with that tenant's key.
 * Batchers never mix two contexts whose `apiKey` differs in one upload.
 */
export interface RequestContext {
  /** The backend API key, from the request header or the configured default; undefined when none. */
  readonly apiKey?: string;
  /** The backend project name. */
  readonly project: string;
  /** Id of the receiver that accepted the data (e.g. `otlp`), for logs and metrics. */
  readonly receiver?: string;
  /**
   * Settlement of the request's data (see delivery.ts): a component that keeps data after its
   * `consume()` resolved holds it until that data is sent, stored durably or dropped and counted.
   * Absent when the source does not track delivery.
   */
  readonly delivery?: Delivery;
}

/** What an exporter may consume: one data type, or `any` for type-agnostic sinks (debug, file). */
export type ConsumedType = DataType | 'any';

/** Counts the items (spans or runs) in a batch: the unit of per-component metrics. */
export function countItems(data: DataOf[DataType]): number {
  return 'runs' in data ? (data as RunBatch).runs.length : countSpans(data as SpanBatch);
}
