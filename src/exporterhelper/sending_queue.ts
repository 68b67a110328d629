// A bounded in-memory queue of batches in front of an exporter's transport, drained by a fixed
// number of concurrent consumers. `offer()` resolves once the batch is queued — that is when an
// exporter's `consume()` resolves — and a full queue (by count, or by bytes when the batches' sizes
// are known) either refuses with ThrottleError (so the refusal travels back to the client as a
// retryable status) or makes the caller wait, as the `block_on_overflow` option of the
// `sending_queue` block says. Room can be reserved before the batch exists (`reserve`), so that an
// exporter encodes a batch only once it has a place: a refused batch costs no encoding, and a
// waiting one holds no encoded body outside the queue's bounds.

import { ThrottleError } from '../pipeline/errors.ts';

/** The `sending_queue` block, as exporters' configs spell it. */
export interface SendingQueueConfig {
  /** Batches held in memory, waiting for a consumer. */
  readonly queue_size: number;
  /** Bytes of the batches waiting for a consumer (when `sizeOf` is given). */
  readonly max_bytes: number;
  /** Wait for room instead of refusing when the queue is full. */
  readonly block_on_overflow: boolean;
  /** For the exporter helper: write to its on-disk queue instead of refusing when full. */
  readonly overflow_to_disk?: boolean;
}

export interface SendingQueueOptions<T> extends SendingQueueConfig {
  /** How many batches are handled at once. */
  readonly consumers: number;
  /**
   * Handles one batch. It owns every outcome (send, persist, dead-letter): a rejection here is a
   * bug, reported through `onHandlerError`, never a silent loss.
   */
  readonly handle: (item: T) => Promise<void>;
  readonly onHandlerError: (error: unknown, item: T) => void;
  /** A batch's size in bytes, when known cheaply: bounds the queue by `max_bytes` too. */
  readonly sizeOf?: (item: T) => number;
  /** The delay suggested to clients when the queue refuses a batch. */
  readonly retryAfterMs?: number;
}

/** The queue no longer accepts batches (the exporter is shutting down). Retryable upstream. */
export class QueueClosedError extends Error {
  override readonly name = 'QueueClosedError';
  constructor() {
    super('the sending queue is closed');
  }
}

/** Room for one batch in the queue, reserved before the batch is made. */
export interface QueueSlot<T> {
  /**
   * Queues the batch in the reserved room. Rejects with QueueClosedError after `close()`, and, when
   * the batch is larger than the room reserved for it and the rest is taken, as `offer` does.
   */
  fill(item: T): Promise<void>;
  /** Gives the room back unused (nothing to queue, or making the batch failed). */
  release(): void;
}

/** Batch sizes remembered for sizing a reservation: the largest of them is reserved. */
const SIZES_REMEMBERED = 8;

export class SendingQueue<T> {
  private readonly items: T[] = [];
  private readonly spaceWaiters: (() => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private active = 0;
  private waitingBytes = 0;
  /** Room reserved for batches not made yet: a count, and the bytes set aside for them. */
  private reservedSlots = 0;
  private reservedBytes = 0;
  /** Sizes of the last batches queued (a ring), to size the next reservation. */
  private readonly recentSizes: number[] = [];
  private nextSize = 0;
  private closed = false;

  constructor(private readonly options: SendingQueueOptions<T>) {}

  /** Batches waiting for a consumer. */
  get depth(): number {
    return this.items.length;
  }

  /** Batches being handled right now. */
  get inFlight(): number {
    return this.active;
  }

  /**
   * Queues a batch. Resolves once it is queued; rejects with ThrottleError when the queue is full
   * (unless `block_on_overflow`), or QueueClosedError after `close()`.
   */
  async offer(item: T): Promise<void> {
    const slot = await this.reserve(this.options.sizeOf?.(item) ?? 0);
    await slot.fill(item);
  }

  /**
   * Reserves room for a batch that is yet to be made, waiting or refusing as `offer` does. The room
   * is one place and, unless `size` is known, the size of the largest of the last batches queued:
   * a batch larger than that is still queued when the queue has room for it (or waits, or is
   * refused, as an offer of it would be). Every slot must be filled or released.
   */
  async reserve(size = this.expectedSize()): Promise<QueueSlot<T>> {
    await this.waitForRoom(size);
    this.reservedSlots++;
    this.reservedBytes += size;
    let open = true;
    const giveBack = (): void => {
      if (!open) return;
      open = false;
      this.reservedSlots--;
      this.reservedBytes -= size;
    };
    return {
      fill: async (item) => {
        giveBack();
        const actual = this.options.sizeOf?.(item) ?? 0;
        // Bytes set aside beyond the batch's size are room for others.
        if (actual < size) this.wakeSpaceWaiters();
        // A place was reserved, so only the bytes of a batch larger than expected can be short.
        if (actual > size) await this.waitForRoom(actual);
        if (this.closed) throw new QueueClosedError();
        this.items.push(item);
        this.waitingBytes += actual;
        this.rememberSize(actual);
        this.pump();
      },
      release: () => {
        if (!open) return;
        giveBack();
        this.wakeSpaceWaiters();
      },
    };
  }

  private async waitForRoom(size: number): Promise<void> {
    while (!this.closed && this.isFull(size)) {
      if (!this.options.block_on_overflow) {
        throw new ThrottleError('the sending queue is full', this.options.retryAfterMs ?? 1000);
      }
      await new Promise<void>((resolve) => this.spaceWaiters.push(resolve));
    }
    if (this.closed) throw new QueueClosedError();
  }

  private expectedSize(): number {
    let largest = 0;
    for (const size of this.recentSizes) if (size > largest) largest = size;
    return largest;
  }

  private rememberSize(size: number): void {
    if (!this.options.sizeOf) return;
    this.recentSizes[this.nextSize] = size;
    this.nextSize = (this.nextSize + 1) % SIZES_REMEMBERED;
  }

  /** Bytes of the batches waiting for a consumer. */
  get bytes(): number {
    return this.waitingBytes;
  }

  // A batch larger than `max_bytes` on its own still goes into an empty queue: it could never be
  // queued otherwise. Reserved room counts as taken.
  private isFull(size: number): boolean {
    const taken = this.items.length + this.reservedSlots;
    if (taken >= this.options.queue_size) return true;
    return taken > 0 && this.waitingBytes + this.reservedBytes + size > this.options.max_bytes;
  }

  /** Stops accepting batches; waiting offers are released with QueueClosedError. Idempotent. */
  close(): void {
    this.closed = true;
    this.wakeSpaceWaiters();
  }

  // Every blocked caller re-checks: one large batch leaving may make room for several.
  private wakeSpaceWaiters(): void {
    for (const wake of this.spaceWaiters.splice(0)) wake();
  }

  /**
   * Resolves true once nothing is queued or in flight, or false at `deadline` (epoch ms).
   */
  async drain(deadline: number): Promise<boolean> {
    if (this.isIdle()) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    });
    try {
      return await Promise.race([idle, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Removes and returns the batches no consumer has started (for persisting at shutdown). */
  takeWaiting(): T[] {
    const waiting = this.items.splice(0);
    this.waitingBytes = 0;
    this.notifyIdle();
    return waiting;
  }

  private isIdle(): boolean {
    return this.items.length === 0 && this.active === 0;
  }

  private notifyIdle(): void {
    if (this.isIdle()) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  private pump(): void {
    while (this.active < this.options.consumers && this.items.length > 0) {
      const item = this.items.shift()!;
      this.active++;
      this.waitingBytes -= this.options.sizeOf?.(item) ?? 0;
      this.wakeSpaceWaiters();
      void this.run(item);
    }
  }

  private async run(item: T): Promise<void> {
    try {
      await this.options.handle(item);
    } catch (error) {
      this.options.onHandlerError(error, item);
    } finally {
      this.active--;
      this.pump();
      this.notifyIdle();
    }
  }
}
