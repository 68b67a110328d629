// The delivery hold of one batch an exporter accepted (src/pipeline/delivery.ts): taken when the
// batch enters the sending queue, released once the batch is settled — sent, stored on disk, or
// dropped and counted — and, when the batch was split, only once every part is. A part given up
// without being stored (shutdown past the deadline, a disk that cannot be written) abandons the
// hold: whoever keeps the data (`keeper`) delivers it again, so releasing would say "kept" falsely.

import type { Delivery } from '../pipeline/delivery.ts';

/**
 * Who still has a batch's data if the exporter gives it up without storing it: the receiver's
 * journal (a durable delivery), the on-disk queue (a batch replayed from it, whose file stays until
 * settled), or nobody — then giving up is a loss, counted as dropped.
 */
export type Keeper = 'journal' | 'disk' | undefined;

export class Settlement {
  private pending = 1;
  private gaveUp = false;

  private constructor(
    private readonly delivery: Delivery | undefined,
    readonly keeper: Keeper,
  ) {}

  /** For a batch handed to `consume()`: holds its delivery, if it has one. */
  static hold(delivery: Delivery | undefined): Settlement {
    delivery?.retain();
    return new Settlement(delivery, delivery?.durable ? 'journal' : undefined);
  }

  /** For a batch replayed from the on-disk queue: no delivery, its file is the keeper. */
  static stored(): Settlement {
    return new Settlement(undefined, 'disk');
  }

  /** Whether a part was given up without being stored. */
  get givenUp(): boolean {
    return this.gaveUp;
  }

  /** `parts` more requests now share the hold (a batch split: each part settles on its own). */
  addParts(parts: number): void {
    this.pending += parts;
  }

  /** One part was sent, stored on disk, or dropped and counted. */
  settled(): void {
    this.finish();
  }

  /** One part was given up without being stored: the hold is abandoned (delivered again by its keeper). */
  leftUnsettled(): void {
    this.gaveUp = true;
    this.finish();
  }

  /** Releases the hold at once: the batch was refused before it was accepted. */
  cancel(): void {
    this.delivery?.release();
  }

  private finish(): void {
    this.pending--;
    if (this.pending > 0) return;
    if (this.gaveUp) this.delivery?.abandon();
    else this.delivery?.release();
  }
}
