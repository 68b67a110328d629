// Buffers that request bodies are assembled in, lent for one request and used again by the next.
//
// A body that arrives in several chunks (anything over one socket read, so every request of 100
// GenAI spans) is copied into one buffer for the decoder. Under the container image's
// `MALLOC_MMAP_THRESHOLD_=65536` (see the Dockerfile) a new buffer of 64 KiB or more is a fresh
// mapping: mapped, faulted in page by page, unmapped when collected. For a 200 KB body that cost
// ~1 ms of CPU (about half of it system time) where copying into a buffer already mapped costs
// ~13 µs (2 cores AMD EPYC, Node v20.20.2). Lending a buffer is safe because nothing keeps the
// body once the intake is done with it: the journal writes it before `accept` settles and the
// decoders copy what they keep (strings, hex ids, bytes values).

/** The smallest buffer made; sizes are rounded up to powers of two so that bodies of similar size share one. */
const MIN_CAPACITY = 64 * 1024;
/** Larger bodies get a buffer of their own, not kept: the pool holds no more than a few of these. */
const MAX_POOLED_BYTES = 4 * 1024 * 1024;
/** Free buffers kept; more requests in flight at once than this allocate. */
const MAX_FREE = 4;

export class BodyBuffers {
  private readonly free: ArrayBuffer[] = [];
  private readonly lent = new Set<ArrayBuffer>();

  /** A buffer of exactly `bytes` bytes (contents undefined), to be given back with `release`. */
  acquire(bytes: number): Buffer {
    if (bytes > MAX_POOLED_BYTES) return Buffer.allocUnsafeSlow(bytes);
    let chosen = -1;
    for (let i = 0; i < this.free.length; i++) {
      const capacity = this.free[i]!.byteLength;
      if (capacity >= bytes && (chosen < 0 || capacity < this.free[chosen]!.byteLength)) chosen = i;
    }
    const buffer =
      chosen >= 0 ? this.free.splice(chosen, 1)[0]! : new ArrayBuffer(Math.max(MIN_CAPACITY, nextPowerOfTwo(bytes)));
    this.lent.add(buffer);
    return Buffer.from(buffer, 0, bytes);
  }

  /** Gives back a body once nothing reads it any more; a body not lent from here is ignored. */
  release(body: Buffer): void {
    const buffer = body.buffer as ArrayBuffer;
    if (!this.lent.delete(buffer)) return;
    if (this.free.length < MAX_FREE) this.free.push(buffer);
  }

  /** Bytes held by free buffers (for tests). */
  get freeBytes(): number {
    return this.free.reduce((sum, buffer) => sum + buffer.byteLength, 0);
  }
}

function nextPowerOfTwo(bytes: number): number {
  return 2 ** Math.ceil(Math.log2(bytes));
}
