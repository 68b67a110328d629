// End-to-end delivery tracking: how a receiver learns that every item of a request it acknowledged
// has left the process's memory for good (uploaded, written to a durable queue, or deliberately
// dropped and counted), so that its write-ahead journal may forget the request.
//
// A `Delivery` is a reference count. The receiver creates one per request (holding one reference)
// and passes it down in `RequestContext.delivery`. Every component that keeps data *after* its
// `consume()` resolved — a batcher's buffer, an exporter's sending queue, a retry in flight —
// takes a reference with `hold()` and releases it once that data is settled. When the receiver
// has also released its own reference after `consume()` returned, the count reaches zero and the
// delivery is settled.
//
// A component that merges data of many requests into one batch (the batch processor) holds each
// request's delivery once per item and passes one `DeliveryGroup` downstream instead: when the
// group settles, every held parent reference is released.
//
// A component that gives data up without storing it (a disk that cannot be written, a shutdown past
// its deadline) calls `abandon()` instead of `release()`: the delivery then ends as `abandoned`,
// and the source delivers the data again from its journal (at once, or at the next start).
// `durable` tells a component whether that is possible (a journal holds the data) or whether
// giving up means a loss, to be counted as dropped.

/** A release function; calling it more than once has no further effect. */
export type Release = () => void;

/** How a delivery ended: every holder settled its part, or at least one gave its part up. */
export type DeliveryOutcome = 'settled' | 'abandoned';

export class Delivery {
  private references = 1;
  private abandoned = false;

  constructor(
    /** True when a journal keeps the data until settled: giving it up loses nothing. */
    readonly durable: boolean,
    private readonly onSettled: (outcome: DeliveryOutcome) => void,
  ) {}

  /** Whether every reference has been released. */
  get settled(): boolean {
    return this.references === 0;
  }

  /** Takes one more reference; returns its (idempotent) release. */
  hold(): Release {
    if (this.references === 0) throw new Error('a settled delivery cannot be held again');
    this.references++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release();
    };
  }

  /** Releases the creator's reference (or one taken by `retain`). */
  release(): void {
    if (this.references === 0) return;
    this.references--;
    if (this.references === 0) this.onSettled(this.abandoned ? 'abandoned' : 'settled');
  }

  /** Releases a reference whose data was given up without being stored: it must be delivered again. */
  abandon(): void {
    this.abandoned = true;
    this.release();
  }

  /** Takes a reference released only through `release()`: for counted holds (one per item). */
  retain(): void {
    if (this.references === 0) throw new Error('a settled delivery cannot be held again');
    this.references++;
  }
}

/**
 * One delivery standing for references held on many others: settling it releases each of them.
 * Created by a component that merges requests into one batch; the creator's own reference is the
 * group's, and the parents' references were taken as the items were added.
 */
export class DeliveryGroup extends Delivery {
  constructor(parents: readonly Delivery[]) {
    super(
      parents.every((parent) => parent.durable),
      (outcome) => {
        for (const parent of parents) {
          if (outcome === 'abandoned') parent.abandon();
          else parent.release();
        }
      },
    );
  }
}

/**
 * Holds the delivery of a context, if it has one: the function for components that keep a batch
 * past `consume()`. Returns the release (a no-op when the data carries no delivery).
 */
export function holdDelivery(delivery: Delivery | undefined): Release {
  return delivery ? delivery.hold() : noRelease;
}

const noRelease: Release = () => {};
