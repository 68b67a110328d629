// The metrics every queued, retrying exporter reports, under one set of names so that dashboards
// work for any exporter: queue depth and age (memory and disk), retries, failures by status, and
// items dropped (through the framework's per-component `dropped` counter, with a reason).

import type { Registry } from 'prom-client';
import { componentCounters, counter, gauge } from '../telemetry/metrics.ts';

/**
 * Why items were dropped: the on-disk queue hit its cap, the destination rejected them one by one,
 * they could not be encoded, their queue file was unreadable, or (with no on-disk queue) their
 * retries ran out or shutdown came before they could be sent; or a bug (`internal_error`).
 */
export type DropReason =
  | 'disk_queue_full'
  | 'rejected'
  | 'unencodable'
  | 'corrupt'
  | 'retries_exhausted'
  | 'shutdown'
  | 'internal_error';

export function exporterMetrics(registry: Registry, componentId: string, dataType: string) {
  const id = { component_id: componentId };
  const queueBatches = gauge<'component_id' | 'queue'>(registry, {
    name: 'tracepipe_exporter_queue_batches',
    help: 'Batches waiting to be sent: in the in-memory sending queue, or in the on-disk queue.',
    labelNames: ['component_id', 'queue'],
  });
  const queueBytes = gauge<'component_id'>(registry, {
    name: 'tracepipe_exporter_disk_queue_bytes',
    help: 'Bytes held by the on-disk queue.',
    labelNames: ['component_id'],
  });
  const oldestAge = gauge<'component_id'>(registry, {
    name: 'tracepipe_exporter_disk_queue_oldest_age_seconds',
    help: 'Age of the oldest batch in the on-disk queue (0 when it is empty).',
    labelNames: ['component_id'],
  });
  const retries = counter<'component_id'>(registry, {
    name: 'tracepipe_exporter_retries_total',
    help: 'Send attempts that were retried after a retryable failure.',
    labelNames: ['component_id'],
  });
  const failures = counter<'component_id' | 'status'>(registry, {
    name: 'tracepipe_exporter_send_failures_total',
    help: 'Failed send attempts, by HTTP status (or `network`, `timeout`).',
    labelNames: ['component_id', 'status'],
  });
  const dropped = componentCounters(registry).dropped;
  return {
    memoryDepth: (depth: number) => queueBatches.set({ ...id, queue: 'memory' }, depth),
    diskDepth: (depth: number, bytes: number, oldestAgeSeconds: number) => {
      queueBatches.set({ ...id, queue: 'disk' }, depth);
      queueBytes.set(id, bytes);
      oldestAge.set(id, oldestAgeSeconds);
    },
    retry: () => retries.inc(id),
    failure: (status: string) => failures.inc({ ...id, status }),
    dropped: (reason: DropReason, items: number) =>
      dropped.inc({ component_id: componentId, component_kind: 'exporter', data_type: dataType, reason }, items),
  };
}

export type ExporterMetrics = ReturnType<typeof exporterMetrics>;
