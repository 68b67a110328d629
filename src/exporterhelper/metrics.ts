// The metrics every queued, retrying exporter reports, under one set of names so that dashboards
// work for any exporter: what is held (batches, items and bytes, in memory and on disk, and the age
// of the disk queue), retries, failures by status, items dropped (through the framework's
// per-component `dropped` counter, with a reason) and items left to the receiver's journal.

import type { ComponentMeter } from '../telemetry/component.ts';

/**
 * Why items were dropped: the on-disk queue hit its cap, the destination rejected them one by one,
 * they could not be encoded, their queue file was unreadable, or (with no on-disk queue) their
 * retries ran out or shutdown came before they could be sent; or a bug (`internal_error`).
 */
export type DropReason =
  'disk_queue_full' | 'rejected' | 'unencodable' | 'corrupt' | 'retries_exhausted' | 'shutdown' | 'internal_error';

export function exporterMetrics(meter: ComponentMeter, dataType: string) {
  const queueBatches = meter.gauge({
    name: 'tracepipe_exporter_queue_batches',
    help: 'Batches held: in memory (waiting for a sender, being sent or waiting to retry), or in the on-disk queue.',
    labelNames: ['queue'],
  });
  const queueItems = meter.gauge({
    name: 'tracepipe_exporter_queue_items',
    help: 'Items (spans, runs) of the batches in `tracepipe_exporter_queue_batches`.',
    labelNames: ['queue'],
  });
  const memoryBytes = meter.gauge({
    name: 'tracepipe_exporter_memory_queue_bytes',
    help: 'Bytes of the batches held in memory (their encoded bodies), when the exporter knows them.',
  });
  const leftToJournal = meter.counter({
    name: 'tracepipe_exporter_items_left_to_journal_total',
    help: 'Items given up without being stored, but not lost: their receiver journal replays them at the next start.',
  });
  const queueBytes = meter.gauge({
    name: 'tracepipe_exporter_disk_queue_bytes',
    help: 'Bytes held by the on-disk queue.',
  });
  const oldestAge = meter.gauge({
    name: 'tracepipe_exporter_disk_queue_oldest_age_seconds',
    help: 'Age of the oldest batch in the on-disk queue (0 when it is empty).',
  });
  const retries = meter.counter({
    name: 'tracepipe_exporter_retries_total',
    help: 'Send attempts that were retried after a retryable failure.',
  });
  const overflowed = meter.counter({
    name: 'tracepipe_exporter_items_overflowed_to_disk_total',
    help: 'Items written straight to the on-disk queue because the memory queue was full (`sending_queue.overflow_to_disk`).',
  });
  const failures = meter.counter({
    name: 'tracepipe_exporter_send_failures_total',
    help: 'Failed send attempts, by HTTP status (or `network`, `timeout`).',
    labelNames: ['status'],
  });
  return {
    memoryHeld: (batches: number, items: number, bytes: number) => {
      queueBatches.set({ queue: 'memory' }, batches);
      queueItems.set({ queue: 'memory' }, items);
      memoryBytes.set(bytes);
    },
    diskDepth: (depth: number, items: number, bytes: number, oldestAgeSeconds: number) => {
      queueBatches.set({ queue: 'disk' }, depth);
      queueItems.set({ queue: 'disk' }, items);
      queueBytes.set(bytes);
      oldestAge.set(oldestAgeSeconds);
    },
    retry: () => retries.inc(),
    overflowed: (items: number) => overflowed.inc(items),
    failure: (status: string) => failures.inc({ status }),
    leftToJournal: (items: number) => leftToJournal.inc(items),
    dropped: (reason: DropReason, items: number) => meter.dropped(dataType, reason, items),
  };
}

export type ExporterMetrics = ReturnType<typeof exporterMetrics>;
