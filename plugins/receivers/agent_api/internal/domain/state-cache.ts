// The latest state of recently read threads, as the JSON the API answers, so that reading a
// thread's state again costs a thread lookup instead of two checkpoint reads, their
// deserialisation and the state's serialisation. Only where this process is the only writer of the
// checkpoints (`CheckpointDatabase.onChange`): every write drops the thread's entry.
//
// A read that was computing a state while the thread was written may have read the state before
// the write: it answers it (as it would have without a cache) but does not keep it. Bounded by the
// number of threads and by the total length of the kept JSON, oldest read first, so that a server
// with many threads, or threads with large states, keeps a fixed amount.

export interface StateCacheOptions {
  readonly maxThreads: number;
  /** Total JSON characters kept (about bytes for ASCII-heavy states). */
  readonly maxChars: number;
}

interface Entry {
  /** What else the state depends on: the thread's graph and config. */
  readonly key: string;
  readonly json: string;
}

export class StateCache {
  private readonly entries = new Map<string, Entry>();
  /** Per thread being computed now: readers in flight, and writes seen since they started. */
  private readonly inflight = new Map<string, { readers: number; writes: number }>();
  private chars = 0;

  constructor(private readonly options: StateCacheOptions) {}

  /** Threads whose state is kept (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** The kept JSON of the thread's latest state when its graph and config (`key`) are the same. */
  async get(threadId: string, key: string, compute: () => Promise<string>): Promise<string> {
    const entry = this.entries.get(threadId);
    if (entry && entry.key === key) {
      // Most recently read last.
      this.entries.delete(threadId);
      this.entries.set(threadId, entry);
      return entry.json;
    }
    let reading = this.inflight.get(threadId);
    if (!reading) this.inflight.set(threadId, (reading = { readers: 0, writes: 0 }));
    reading.readers++;
    const writesBefore = reading.writes;
    try {
      const json = await compute();
      if (reading.writes === writesBefore) this.put(threadId, { key, json });
      return json;
    } finally {
      if (--reading.readers === 0) this.inflight.delete(threadId);
    }
  }

  /** The thread's checkpoints changed (undefined: every thread's). */
  invalidate(threadId: string | undefined): void {
    if (threadId === undefined) {
      this.entries.clear();
      this.chars = 0;
      for (const reading of this.inflight.values()) reading.writes++;
      return;
    }
    this.drop(threadId);
    const reading = this.inflight.get(threadId);
    if (reading) reading.writes++;
  }

  private put(threadId: string, entry: Entry): void {
    this.drop(threadId);
    if (entry.json.length > this.options.maxChars) return;
    this.entries.set(threadId, entry);
    this.chars += entry.json.length;
    while (this.entries.size > this.options.maxThreads || this.chars > this.options.maxChars)
      this.drop(this.entries.keys().next().value!);
  }

  private drop(threadId: string): void {
    const entry = this.entries.get(threadId);
    if (!entry) return;
    this.entries.delete(threadId);
    this.chars -= entry.json.length;
  }
}
