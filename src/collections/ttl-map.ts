// A map whose entries expire a fixed time after they were last written and which never holds more
// than a fixed number of entries (the oldest go first). Used wherever a component remembers facts
// about traces it has seen (root spans, aliases, filtered runs), so that memory stays bounded
// however many traces pass through.

interface Entry<V> {
  readonly value: V;
  readonly writtenAt: number;
}

export class TtlMap<K, V> {
  // A Map iterates in insertion order; re-inserting on write keeps it ordered by write time, so
  // expiry and eviction only ever look at the front.
  private readonly entries = new Map<K, Entry<V>>();
  // The front is found with one long-lived iterator rather than a new one each time: a Map keeps
  // deleted entries as holes until it is rehashed, and a new iterator walks over every hole left at
  // the front. At its cap (one eviction per write) that was ~0.14 ms per write at 500k entries.
  private cursor?: Iterator<[K, Entry<V>]>;
  private front?: [K, Entry<V>];

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The value, or undefined when absent or expired. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.writtenAt >= this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, writtenAt: this.now() });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.oldest()![0]);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every expired entry; cheap to call often, since it stops at the first live entry. */
  sweep(): void {
    const now = this.now();
    for (let front = this.oldest(); front && now - front[1].writtenAt >= this.ttlMs; front = this.oldest()) {
      this.entries.delete(front[0]);
    }
  }

  clear(): void {
    this.entries.clear();
    this.cursor = undefined;
    this.front = undefined;
  }

  /** The oldest entry still in the map (the iterator passes over entries deleted or re-set since). */
  private oldest(): [K, Entry<V>] | undefined {
    for (;;) {
      if (this.front === undefined) {
        this.cursor ??= this.entries.entries();
        const next = this.cursor.next();
        if (next.done) {
          // A finished iterator never sees later entries: the next call starts a new one.
          this.cursor = undefined;
          return undefined;
        }
        this.front = next.value;
      }
      // Deleted, or re-set (its new entry is further on): skip it.
      if (this.entries.get(this.front[0]) === this.front[1]) return this.front;
      this.front = undefined;
    }
  }
}
