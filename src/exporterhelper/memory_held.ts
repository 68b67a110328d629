// What an exporter holds in memory, for its gauges and its outage log: every accepted batch from
// the moment `consume()` queued it until it is settled — waiting for a sender, being sent, or
// sleeping before a retry (a sender's batch is held as much as a waiting one). Also which tenants
// these batches belong to (counted, never named) and how many were held while the destination
// failed: those are delayed by the outage, whether or not their own attempts failed.

import type { ExporterMetrics } from './metrics.ts';

/** What the helper reads of every request (see queued_exporter.ts). */
export interface ExportRequest {
  /** Items (spans, runs) in the request: what a drop loses. */
  readonly items: number;
  /** Bytes it holds in memory, when known cheaply: bounds the sending queue and feeds a gauge. */
  readonly bytes?: number;
  /** Whose it is (an API key): only counted, for "tenants affected" in logs; never logged. */
  readonly tenant?: string;
}

/** One request as the helper tracks it. */
export interface Tracked<R extends ExportRequest> {
  readonly request: R;
  /** Was held while the destination failed: delivering it now is "late". */
  failed: boolean;
}

export class MemoryHeld {
  private batches = 0;
  private items = 0;
  private bytes = 0;
  private failingBatches = 0;
  private readonly tenants = new Map<string, number>();
  private readonly tracked = new Set<Tracked<ExportRequest>>();

  constructor(private readonly metrics: ExporterMetrics) {}

  /** Batches held while the destination failed that are not settled yet. */
  get failing(): number {
    return this.failingBatches;
  }

  /** The tenants with a batch held in memory (to count them; never to log them). */
  tenantKeys(): Iterable<string> {
    return this.tenants.keys();
  }

  add(tracked: Tracked<ExportRequest>): void {
    this.tracked.add(tracked);
    this.change(tracked, 1);
    if (tracked.failed) this.failingBatches++;
  }

  remove(tracked: Tracked<ExportRequest>): void {
    if (!this.tracked.delete(tracked)) return;
    this.change(tracked, -1);
    if (tracked.failed) this.failingBatches--;
  }

  /** An attempt failed: every batch held now waits for the destination to come back. */
  markAllFailed(): void {
    if (this.failingBatches === this.batches) return;
    for (const tracked of this.tracked) {
      if (tracked.failed) continue;
      tracked.failed = true;
      this.failingBatches++;
    }
  }

  private change({ request }: Tracked<ExportRequest>, sign: 1 | -1): void {
    this.batches += sign;
    this.items += sign * request.items;
    this.bytes += sign * (request.bytes ?? 0);
    const tenant = request.tenant ?? '';
    const count = (this.tenants.get(tenant) ?? 0) + sign;
    if (count > 0) this.tenants.set(tenant, count);
    else this.tenants.delete(tenant);
    this.metrics.memoryHeld(this.batches, this.items, this.bytes);
  }
}
