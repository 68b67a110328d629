// The metrics every queued, retrying exporter reports, under one set of names so that dashboards
// work for any exporter: what is held (batches, items and bytes, in memory and on disk, and the age
// of the disk queue), retries, failures by status, items dropped (through the framework's
// per-component `dropped` counter, with a reason) and items left to the receiver's journal.

import type { Registry } from 'prom-client';
import { componentCounters, counter, gauge } from '../telemetry/metrics.ts';

/**
 * Why items were dropped: the on-disk queue hit its cap, the destination rejected them one by one,
 * they could not be encoded, their queue file was unreadable, or (with no on-disk queue) their
 * retries ran out or shutdown came before they could be sent; or a bug (`internal_error`).
 */
export type DropReason =
  'disk_queue_full' | 'rejected' | 'unencodable' | 'corrupt' | 'retries_exhausted' | 'shutdown' | 'internal_error';

export function exporterMetrics(registry: Registry, componentId: string, dataType: string) {
  const id = { component_id: componentId };
  const queueBatches = gauge<'component_id' | 'queue'>(registry, {
    name: 'tracepipe_exporter_queue_batches',
    help: 'Batches held: in memory (waiting for a sender, being sent or waiting to retry), or in the on-disk queue.',
    labelNames: ['component_id', 'queue'],
  });
  const queueItems = gauge<'component_id' | 'queue'>(registry, {
    name: 'tracepipe_exporter_queue_items',
    help: 'Items (spans, runs) of the batches in `tracepipe_exporter_queue_batches`.',
    labelNames: ['component_id', 'queue'],
  });
  const memoryBytes = gauge<'component_id'>(registry, {
    name: 'tracepipe_exporter_memory_queue_bytes',
    help: 'Bytes of the batches held in memory (their encoded bodies), when the exporter knows them.',
    labelNames: ['component_id'],
  });
  const leftToJournal = counter<'component_id'>(registry, {
    name: 'tracepipe_exporter_items_left_to_journal_total',
    help: 'Items given up without being stored, but not lost: their receiver journal replays them at the next start.',
    labelNames: ['component_id'],
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
    memoryHeld: (batches: number, items: number, bytes: number) => {
      queueBatches.set({ ...id, queue: 'memory' }, batches);
      queueItems.set({ ...id, queue: 'memory' }, items);
      memoryBytes.set(id, bytes);
    },
    diskDepth: (depth: number, items: number, bytes: number, oldestAgeSeconds: number) => {
      queueBatches.set({ ...id, queue: 'disk' }, depth);
      queueItems.set({ ...id, queue: 'disk' }, items);
      queueBytes.set(id, bytes);
      oldestAge.set(id, oldestAgeSeconds);
    },
    retry: () => retries.inc(id),
    failure: (status: string) => failures.inc({ ...id, status }),
    leftToJournal: (items: number) => leftToJournal.inc(id, items),
    dropped: (reason: DropReason, items: number) =>
      dropped.inc({ component_id: componentId, component_kind: 'exporter', data_type: dataType, reason }, items),
  };
}

export type ExporterMetrics = ReturnType<typeof exporterMetrics>;
