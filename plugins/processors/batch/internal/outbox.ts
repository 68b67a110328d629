// The batcher's outgoing side: one open batch per API key (a batch never mixes keys, so each
// tenant's runs are uploaded with that tenant's key), sealed when it reaches `batchSize` runs or
// would pass `maxBatchBytes`, or by the caller (interval, shutdown). Sealed batches are delivered
// downstream one at a time per tenant, in order, so a parent's batch always arrives before its
// children's; a batch whose delivery fails stays at the head of its queue and is retried. A tenant
// whose oldest batch has waited a whole tick (see `tick`) or was refused is behind: its runs are the
// backlog, which the batcher bounds.

import type { Run, Consumer, RequestContext, Delivery } from 'tracepipe/plugin';
import { DeliveryGroup, isPermanent, isThrottle } from 'tracepipe/plugin';

export type FlushTrigger = 'size' | 'bytes' | 'interval' | 'shutdown';

export interface SealedBatch {
  readonly runs: Run[];
  readonly bytes: number;
  /** Who sent the runs (the delivery left out: see `deliveries`). */
  readonly context: RequestContext;
  /** The delivery of each run that has one: held once per run since the run was taken. */
  readonly deliveries: Delivery[];
  /** Created at the first delivery attempt and reused by retries, so that parents settle once. */
  group?: DeliveryGroup;
  /** The outbox's tick count when the batch was sealed. */
  readonly sealedAt: number;
}

interface Tenant {
  context: RequestContext;
  open: Run[];
  openBytes: number;
  openDeliveries: Delivery[];
  readonly sealed: SealedBatch[];
  delivering?: Promise<void>;
  /** Epoch ms before which a failed delivery is not retried. */
  retryAt: number;
  /** Runs open or sealed. */
  runs: number;
  /** Downstream refused its last delivery attempt (until one succeeds). */
  refused: boolean;
}

export interface OutboxOptions {
  readonly batchSize: number;
  readonly maxBatchBytes: number;
  /** Wait before retrying a failed delivery (a ThrottleError's own delay wins when longer). */
  readonly retryDelayMs: number;
  readonly now?: () => number;
}

export interface OutboxEvents {
  flushed(trigger: FlushTrigger): void;
  delivered(runs: number): void;
  /** A batch the downstream refused as permanently bad: it cannot be retried. */
  rejected(batch: SealedBatch, error: unknown): void;
  failed(batch: SealedBatch, error: unknown): void;
}

export class Outbox {
  private readonly tenants = new Map<string, Tenant>();
  private readonly now: () => number;
  private runCount = 0;
  private byteCount = 0;
  private ticks = 0;

  constructor(
    private readonly options: OutboxOptions,
    private readonly next: Consumer<'runs'>,
    private readonly events: OutboxEvents,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Runs buffered or awaiting delivery. */
  get runs(): number {
    return this.runCount;
  }

  get bytes(): number {
    return this.byteCount;
  }

  /**
   * Runs of the tenants that are behind: downstream refused their last batch, or has not taken
   * their oldest one though it was sealed before the last tick. A downstream that takes a burst at
   * once leaves no batch across a tick (its hand-overs finish before any timer runs), so a burst
   * counts here only once downstream stops taking it.
   */
  get backlogRuns(): number {
    let runs = 0;
    for (const tenant of this.tenants.values()) {
      const oldest = tenant.sealed[0];
      if (tenant.refused || (oldest !== undefined && oldest.sealedAt < this.ticks - 1)) runs += tenant.runs;
    }
    return runs;
  }

  /** Counts one flush interval: a batch sealed before the previous tick has waited a whole one. */
  tick(): void {
    this.ticks++;
  }

  /**
   * Adds one run (with its serialised size) to its tenant's open batch, sealing as the limits say.
   * The reference the caller holds on the context's delivery passes to the outbox, which releases
   * it once the batch is delivered (or refused for good).
   */
  add(run: Run, bytes: number, context: RequestContext): void {
    const key = context.apiKey ?? '';
    const delivery = context.delivery;
    let tenant = this.tenants.get(key);
    if (!tenant)
      this.tenants.set(
        key,
        (tenant = {
          context,
          open: [],
          openBytes: 0,
          openDeliveries: [],
          sealed: [],
          retryAt: 0,
          runs: 0,
          refused: false,
        }),
      );
    if (tenant.open.length > 0 && tenant.openBytes + bytes > this.options.maxBatchBytes) this.seal(tenant, 'bytes');
    // The batch's context, without the delivery, is copied once per batch rather than per run: an
    // object rest per run was a runtime call and an object for every run the proxy forwards.
    if (tenant.open.length === 0) tenant.context = withoutDelivery(context);
    tenant.open.push(run);
    if (delivery) tenant.openDeliveries.push(delivery);
    tenant.openBytes += bytes;
    tenant.runs++;
    this.runCount++;
    this.byteCount += bytes;
    if (tenant.open.length >= this.options.batchSize) this.seal(tenant, 'size');
    // Only a run larger than a batch may be gets here (the check above sealed the batch before
    // it): it leaves alone.
    else if (tenant.openBytes > this.options.maxBatchBytes) this.seal(tenant, 'bytes');
  }

  /** Seals every open batch (the interval tick, shutdown). */
  sealAll(trigger: FlushTrigger): void {
    for (const tenant of this.tenants.values()) if (tenant.open.length > 0) this.seal(tenant, trigger);
  }

  private seal(tenant: Tenant, trigger: FlushTrigger): void {
    tenant.sealed.push({
      runs: tenant.open,
      bytes: tenant.openBytes,
      context: tenant.context,
      deliveries: tenant.openDeliveries,
      sealedAt: this.ticks,
    });
    tenant.open = [];
    tenant.openBytes = 0;
    tenant.openDeliveries = [];
    this.events.flushed(trigger);
  }

  /**
   * Starts delivering every tenant's sealed batches that are due; resolves when those deliveries
   * have finished (successfully or not). Never rejects.
   */
  deliver(options: { ignoreBackoff?: boolean } = {}): Promise<void> {
    const running: Promise<void>[] = [];
    for (const [key, tenant] of this.tenants) {
      const due = options.ignoreBackoff === true || tenant.retryAt <= this.now();
      if (!tenant.delivering && tenant.sealed.length > 0 && due) {
        tenant.delivering = this.deliverTenant(tenant).finally(() => {
          tenant.delivering = undefined;
          if (tenant.open.length === 0 && tenant.sealed.length === 0) this.tenants.delete(key);
          // A batch sealed while this delivery was finishing found it busy; it goes now.
          else if (tenant.sealed.length > 0 && tenant.retryAt <= this.now()) void this.deliver();
        });
      }
      if (tenant.delivering) running.push(tenant.delivering);
    }
    return Promise.all(running).then(() => undefined);
  }

  /** Whether nothing is buffered, queued or being delivered. */
  get empty(): boolean {
    return this.runCount === 0;
  }

  /** Gives up on everything still held (shutdown past its deadline); returns what was given up. */
  abandon(): SealedBatch[] {
    this.sealAll('shutdown');
    const abandoned: SealedBatch[] = [];
    for (const tenant of this.tenants.values()) abandoned.push(...tenant.sealed.splice(0));
    this.tenants.clear();
    this.runCount = 0;
    this.byteCount = 0;
    return abandoned;
  }

  private async deliverTenant(tenant: Tenant): Promise<void> {
    while (tenant.sealed.length > 0) {
      const batch = tenant.sealed[0]!;
      if (batch.deliveries.length > 0) batch.group ??= new DeliveryGroup(batch.deliveries);
      try {
        await this.next.consume(
          { runs: batch.runs },
          batch.group ? { ...batch.context, delivery: batch.group } : batch.context,
        );
      } catch (error) {
        if (isPermanent(error)) {
          tenant.refused = false;
          this.forget(tenant, batch);
          this.events.rejected(batch, error);
          settle(batch);
          continue;
        }
        const delay = isThrottle(error)
          ? Math.max(error.retryAfterMs, this.options.retryDelayMs)
          : this.options.retryDelayMs;
        tenant.retryAt = this.now() + delay;
        tenant.refused = true;
        this.events.failed(batch, error);
        return;
      }
      tenant.refused = false;
      this.forget(tenant, batch);
      this.events.delivered(batch.runs.length);
      settle(batch);
    }
  }

  private forget(tenant: Tenant, batch: SealedBatch): void {
    // (Its deliveries are settled by the caller, once the outcome is counted.)
    // Already gone when `abandon()` gave up on it while it was being delivered.
    if (tenant.sealed[0] !== batch) return;
    tenant.sealed.shift();
    tenant.runs -= batch.runs.length;
    this.runCount -= batch.runs.length;
    this.byteCount -= batch.bytes;
  }
}

/** Releases the outbox's hold on a batch's deliveries: downstream now holds what it kept. */
export function settle(batch: SealedBatch): void {
  if (batch.group) batch.group.release();
  else for (const delivery of batch.deliveries) delivery.release();
}

/** The context without its delivery (a sealed batch keeps its runs' deliveries apart). */
function withoutDelivery(context: RequestContext): RequestContext {
  const { delivery: _delivery, ...who } = context;
  return who;
}
