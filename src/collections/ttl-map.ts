// A map whose entries expire a fixed time after they were last written and which never holds more
// than a fixed number of entries (the oldest go first). Used wherever a component remembers facts
// about traces it has seen (root spans, dotted orders), so that memory stays bounded however many
// traces pass through.

export class TtlMap<K, V> {
  // A Map iterates in insertion order; re-inserting on write keeps it ordered by write time, so
  // expiry and eviction only ever look at the front.
  private readonly entries = new Map<K, { value: V; writtenAt: number }>();

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
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as K;
      this.entries.delete(oldest);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every expired entry; cheap to call often, since it stops at the first live entry. */
  sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (now - entry.writtenAt < this.ttlMs) break;
      this.entries.delete(key);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
