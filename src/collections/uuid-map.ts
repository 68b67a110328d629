// A TtlMap<string, string> for what processors remember per trace or per run — a trace's root span,
// a root span's alias — whose keys and values are nearly always lower-case UUIDs. It keeps TtlMap's
// rules (an entry expires `ttlMs` after it was written, at most `maxEntries` are kept and the oldest
// go first, a re-set entry becomes the newest) outside the JS heap: as strings in a Map, an entry
// cost about 170 bytes of heap that every full garbage collection traced, and at the default caps
// these maps held hundreds of thousands of entries (bench/pipeline/README.md, "Memory").
//
// - Records of fixed size, oldest first, in chunks of CHUNK_RECORDS (typed arrays, outside the JS
//   heap): key (4 words), value (4 words), write time (f64). Expiry and the cap only ever remove the
//   oldest record: they advance a head index and drop each chunk the head leaves.
// - An open-addressing hash table (Uint32Array, linear probing) from the key to its record's index.
//   Indices only grow, so a slot behind the head is stale at no cost; stale slots go when the table
//   is rebuilt, as it is whenever half of it is in use.
// - A pair that is not two UUIDs is kept in a TtlMap beside the table, with the same rules (and its
//   own cap of `maxEntries`).
//
// A re-set or deleted entry leaves a dead record, skipped when the head passes it; once dead records
// outnumber live ones (and a chunk's worth), the live ones are copied to fresh chunks.

import { TtlMap } from './ttl-map.ts';
import { UUID_CHARS, hashWords, parseWholeUuid, writeUuid } from './uuid-words.ts';

/** Knobs for tests: collisions, compaction and the 2^32 wrap of indices, without gigabytes. */
export interface UuidMapOptions {
  /** Initial and smallest hash table size, a power of two. */
  readonly minSlots?: number;
  /** Records per chunk. */
  readonly chunkRecords?: number;
  /** Index of the first record. */
  readonly startIndex?: number;
}

interface Chunk {
  /** Per record: key (4 words), value (4 words), then the write time's two words. */
  readonly words: Uint32Array;
  /** The same memory as f64: a record's write time at `index * 5 + 4`, DEAD once it is gone. */
  readonly times: Float64Array;
}

const RECORD_WORDS = 10;
const TIME_OFFSET = 4; // in f64 units within a record
const DEAD = -Infinity; // no clock reads this
const DEFAULT_CHUNK_RECORDS = 1 << 14; // 640 KiB
const EMPTY = 0xffffffff; // a slot never used; no record has this index (see MAX_SPAN)
const DEFAULT_MIN_SLOTS = 1024;
const MAX_LOAD = 1 / 2;
const REBUILT_LOAD = 1 / 3;
// Indices are kept modulo 2^32 in the table. With the records from head to tail, and the records
// written between two rebuilds, each under 2^30, a stale slot is always more than 2^30 behind the
// head modulo 2^32, so it never reads as live.
const MAX_SPAN = 2 ** 30;
const MAX_WRITES_BETWEEN_REBUILDS = 2 ** 30;

const keyWords = new Uint32Array(4);
const valueWords = new Uint32Array(4);
const text = Buffer.alloc(UUID_CHARS);

export class UuidMap {
  private chunks: Chunk[] = [];
  /** Chunk number (index / chunkRecords) of chunks[0]. */
  private firstChunk = 0;
  /** Indices of the oldest record and of the next one. */
  private head = 0;
  private tail = 0;
  private slots: Uint32Array;
  private mask = 0;
  /** Slots not EMPTY (live, stale, or pointing at a dead record). */
  private usedSlots = 0;
  private tailAtRebuild = 0;
  private live = 0;
  /** Pairs that are not two UUIDs. */
  private readonly texts: TtlMap<string, string>;
  private readonly minSlots: number;
  private readonly chunkRecords: number;
  private readonly startIndex: number;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
    options: UuidMapOptions = {},
  ) {
    this.minSlots = options.minSlots ?? DEFAULT_MIN_SLOTS;
    this.chunkRecords = options.chunkRecords ?? DEFAULT_CHUNK_RECORDS;
    this.startIndex = options.startIndex ?? 0;
    this.texts = new TtlMap(ttlMs, maxEntries, now);
    this.slots = new Uint32Array(this.minSlots);
    this.clear();
  }

  get size(): number {
    return this.live + this.texts.size;
  }

  /** Bytes held outside the JS heap (records and table), for measurements. */
  get externalBytes(): number {
    return this.chunks.length * this.chunkRecords * RECORD_WORDS * 4 + this.slots.byteLength;
  }

  /**
   * What a byte budget counts: the records from the oldest to the newest (dead ones between them
   * included, until compaction) and the table. Within a chunk of `externalBytes`; pairs kept as
   * text are not counted.
   */
  get heldBytes(): number {
    return (this.tail - this.head) * RECORD_WORDS * 4 + this.slots.byteLength;
  }

  /** Write time of the oldest live record, expired or not; undefined when there is none. */
  oldestWrittenAt(): number | undefined {
    while (this.head < this.tail) {
      const written = this.timeAt(this.head);
      if (written !== DEAD) return written;
      this.advanceHead();
    }
    return undefined;
  }

  /** Forgets the oldest record: how a byte budget shared with other memories is kept. */
  forgetOldest(): void {
    while (this.head < this.tail) {
      if (this.advanceHead()) return;
    }
  }

  /** The value, or undefined when absent or expired. */
  get(key: string): string | undefined {
    if (parseWholeUuid(key, keyWords, 0)) {
      const index = this.find();
      if (index >= 0) {
        const chunk = this.chunkAt(index);
        const at = (index % this.chunkRecords) * RECORD_WORDS;
        if (this.now() - chunk.times[at / 2 + TIME_OFFSET]! >= this.ttlMs) {
          this.kill(index);
          return undefined;
        }
        writeUuid(chunk.words, at + 4, text, 0);
        return text.toString('latin1');
      }
    }
    return this.texts.size > 0 ? this.texts.get(key) : undefined;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  set(key: string, value: string): void {
    if (!parseWholeUuid(key, keyWords, 0) || !parseWholeUuid(value, valueWords, 0)) {
      this.delete(key);
      this.texts.set(key, value);
      return;
    }
    if (this.texts.size > 0) this.texts.delete(key);
    // The key's live slot, else the first reusable one on its probe path.
    let slot = -1;
    for (let i = hashWords(keyWords, 0) & this.mask; ; i = (i + 1) & this.mask) {
      const index = this.slotIndex(i);
      if (index === -1 || index === -2) {
        if (slot < 0) slot = i;
        if (index === -1) break;
      } else if (this.recordHasKey(index)) {
        this.kill(index);
        slot = i;
        break;
      }
    }
    if (this.slots[slot] === EMPTY) this.usedSlots++;
    const index = this.append();
    this.slots[slot] = index >>> 0;
    while (this.live > this.maxEntries || this.tail - this.head > MAX_SPAN) this.forgetOldest();

    const dead = this.tail - this.head - this.live;
    if (dead > this.live && dead > this.chunkRecords) this.rebuild(true);
    else if (this.usedSlots > this.slots.length * MAX_LOAD) this.rebuild(false);
    else if (this.tail - this.tailAtRebuild > MAX_WRITES_BETWEEN_REBUILDS) this.rebuild(false);
  }

  delete(key: string): void {
    if (parseWholeUuid(key, keyWords, 0)) {
      const index = this.find();
      if (index >= 0) this.kill(index);
    }
    if (this.texts.size > 0) this.texts.delete(key);
  }

  /** Drops every expired entry; cheap to call often, since it stops at the first live one. */
  sweep(): void {
    const now = this.now();
    while (this.head < this.tail) {
      const written = this.timeAt(this.head);
      if (written !== DEAD && now - written < this.ttlMs) break;
      this.advanceHead();
    }
    // A table sized for a burst long gone is given back.
    if (this.slots.length > this.minSlots && this.live * 8 < this.slots.length) this.rebuild(false);
    this.texts.sweep();
  }

  clear(): void {
    this.chunks = [];
    this.head = this.tail = this.tailAtRebuild = this.startIndex;
    this.firstChunk = Math.floor(this.startIndex / this.chunkRecords);
    this.live = 0;
    this.slots = new Uint32Array(this.minSlots).fill(EMPTY);
    this.mask = this.minSlots - 1;
    this.usedSlots = 0;
    this.texts.clear();
  }

  // --- table ---

  /** Index of the live record whose key is in `keyWords`, or -1. */
  private find(): number {
    for (let i = hashWords(keyWords, 0) & this.mask; ; i = (i + 1) & this.mask) {
      const index = this.slotIndex(i);
      if (index === -1) return -1;
      if (index !== -2 && this.recordHasKey(index)) return index;
    }
  }

  /** A slot's record index, -1 when the slot is empty, -2 when it is stale (behind the head, or dead). */
  private slotIndex(slot: number): number {
    const value = this.slots[slot]!;
    if (value === EMPTY) return -1;
    // Distance from the head, modulo 2^32 like the slot's value.
    const offset = (value - this.head) >>> 0;
    if (offset >= this.tail - this.head) return -2;
    const index = this.head + offset;
    return this.timeAt(index) === DEAD ? -2 : index;
  }

  private recordHasKey(index: number): boolean {
    const words = this.chunkAt(index).words;
    const at = (index % this.chunkRecords) * RECORD_WORDS;
    return (
      words[at] === keyWords[0] &&
      words[at + 1] === keyWords[1] &&
      words[at + 2] === keyWords[2] &&
      words[at + 3] === keyWords[3]
    );
  }

  /**
   * Rebuilds the hash table from the live records, sized for them (stale slots go); when
   * compacting, first copies the live records, in order, to fresh chunks after the current tail.
   */
  private rebuild(compact: boolean): void {
    if (compact) this.compact();
    let size = this.minSlots;
    while (size * REBUILT_LOAD < this.live) size *= 2;
    this.slots = new Uint32Array(size).fill(EMPTY);
    this.mask = size - 1;
    this.usedSlots = 0;
    this.tailAtRebuild = this.tail;
    for (let index = this.head; index < this.tail; index++) {
      if (this.timeAt(index) === DEAD) continue;
      const words = this.chunkAt(index).words;
      let i = hashWords(words, (index % this.chunkRecords) * RECORD_WORDS) & this.mask;
      while (this.slots[i] !== EMPTY) i = (i + 1) & this.mask;
      this.slots[i] = index >>> 0;
      this.usedSlots++;
    }
  }

  // --- records ---

  private chunkAt(index: number): Chunk {
    return this.chunks[Math.floor(index / this.chunkRecords) - this.firstChunk]!;
  }

  private timeAt(index: number): number {
    return this.chunkAt(index).times[(index % this.chunkRecords) * (RECORD_WORDS / 2) + TIME_OFFSET]!;
  }

  /** Writes `keyWords` → `valueWords`, now, as the newest record; returns its index. */
  private append(): number {
    const index = this.tail;
    if (index % this.chunkRecords === 0 || this.chunks.length === 0) {
      if (this.chunks.length === 0) this.firstChunk = Math.floor(index / this.chunkRecords);
      const buffer = new ArrayBuffer(this.chunkRecords * RECORD_WORDS * 4);
      this.chunks.push({ words: new Uint32Array(buffer), times: new Float64Array(buffer) });
    }
    const { words, times } = this.chunkAt(index);
    const at = (index % this.chunkRecords) * RECORD_WORDS;
    words.set(keyWords, at);
    words.set(valueWords, at + 4);
    times[at / 2 + TIME_OFFSET] = this.now();
    this.tail = index + 1;
    this.live++;
    return index;
  }

  /** Marks a live record dead: its entry is gone. */
  private kill(index: number): void {
    this.chunkAt(index).times[(index % this.chunkRecords) * (RECORD_WORDS / 2) + TIME_OFFSET] = DEAD;
    this.live--;
  }

  /** Moves the head past one record; drops the chunk it leaves. Returns whether it was live. */
  private advanceHead(): boolean {
    const live = this.timeAt(this.head) !== DEAD;
    if (live) this.live--;
    this.head++;
    // Empty: the chunk under the head goes too (append starts a new one).
    if (this.head === this.tail) this.chunks = [];
    while (this.chunks.length > 0 && this.firstChunk < Math.floor(this.head / this.chunkRecords)) {
      this.chunks.shift();
      this.firstChunk++;
    }
    return live;
  }

  /** Copies the live records, oldest first, to fresh chunks starting at the next chunk boundary. */
  private compact(): void {
    const { head, tail } = this;
    const old = { chunks: this.chunks, firstChunk: this.firstChunk };
    const oldChunk = (index: number) => old.chunks[Math.floor(index / this.chunkRecords) - old.firstChunk]!;
    const start = Math.ceil(tail / this.chunkRecords) * this.chunkRecords;
    this.chunks = [];
    this.head = this.tail = start;
    this.firstChunk = start / this.chunkRecords;
    const live = this.live;
    for (let index = head; index < tail; index++) {
      const { words, times } = oldChunk(index);
      const at = (index % this.chunkRecords) * RECORD_WORDS;
      const written = times[at / 2 + TIME_OFFSET]!;
      if (written === DEAD) continue;
      keyWords.set(words.subarray(at, at + 4));
      valueWords.set(words.subarray(at + 4, at + 8));
      const to = this.append();
      const target = this.chunkAt(to);
      target.times[(to % this.chunkRecords) * (RECORD_WORDS / 2) + TIME_OFFSET] = written;
    }
    this.live = live;
  }
}
