// The batcher's memory of released runs' dotted orders, so that late children find their parent's.
// It behaves as a TtlMap<run id, {dotted, traceId}> would (an entry expires `ttlMs` after it was
// written, at most `maxEntries` are kept and the oldest go first, a re-set entry becomes the newest)
// in a fraction of the memory. As strings and objects, an entry cost about 300 bytes of heap; a
// segment of UUID and fixed-format time packs into 24 bytes.
//
// - Records, oldest first, in an arena of 1 MiB chunks (Uint32Array, outside the JS heap): a header
//   word (segment count, kind), the write time (milliseconds after the chunk's base time, a number
//   kept per chunk), then the segments: per segment its 22-character `YYYYMMDDTHHMMSSffffffZ` time
//   packed field by field into two words (see parseSegmentTime: lossless, and formatting it back
//   needs no calendar arithmetic) and its UUID (4 words). The run's id is the last segment's, the
//   trace id the first's.
// - A child written while its parent's record is the entry last looked up or written (the batcher
//   releases a parent, then its waiting children; or looks a parent up for a late child) and in the
//   same chunk is a child record: the parent record's offset in the chunk, then only its own
//   segment. A chunk stays until the head has left it, so the parent's words outlive any record of
//   the chunk that refers to them, even once the parent itself is forgotten or re-set; compaction
//   writes a child out whole when its parent is not copied along. A root takes 8 words, a child of
//   one 9 instead of 14.
//   Expiry and the cap only ever remove the oldest record: they advance a head position and drop
//   each chunk the head leaves. No allocation per entry, nothing for the garbage collector to trace.
// - An open-addressing hash table (Uint32Array, linear probing) from the UUID key to its record's
//   position. Positions only grow, so a slot behind the head is stale at no cost; stale slots go
//   when the table is rebuilt, as it is whenever half of it is in use.
// - What does not fit that shape (a run id that is not a lower-case UUID — runs processors other
//   than `genai` may use any string —, a time whose hour is past 31 or minute or second past 63) is kept
//   as text: its record only holds its place in the order, the strings live in a Map beside it.
//
// A re-set or deleted entry leaves a dead record, skipped when the head passes it; once dead
// records outweigh live ones the arena is compacted, so memory follows the live entries.

import { UUID_CHARS, hashWords, parseUuid, writeUuid } from 'tracepipe/collections';

export interface RememberedOrder {
  readonly dotted: string;
  /** The first segment's id. */
  readonly traceId: string;
}

/** Knobs for tests: collisions, compaction and the 2^32 wrap of positions, without gigabytes. */
export interface DottedOrderMemoryOptions {
  /** Initial and smallest hash table size, a power of two. */
  readonly minSlots?: number;
  /** Words of dead records tolerated (while they are fewer than the live ones) before compacting. */
  readonly compactAfterWords?: number;
  /** Chunk number of the first position. */
  readonly startChunk?: number;
}

interface TextEntry extends RememberedOrder {
  readonly key: string;
}

const CHUNK_WORDS = 1 << 18; // 1 MiB
const HEADER_WORDS = 2; // count and kind, write time
const SEGMENT_WORDS = 6; // start time (2), UUID (4)
// A child record: the header, its parent record's offset in the chunk, its own segment.
const CHILD_WORDS = HEADER_WORDS + 1 + SEGMENT_WORDS;
const MAX_SEGMENTS = Math.floor((CHUNK_WORDS - HEADER_WORDS) / SEGMENT_WORDS); // a record never spans chunks
// Header word: segment count << 3 | DEAD? | kind. END, a zero word as in a fresh chunk, marks the
// unused rest of a chunk.
const END = 0;
const BINARY = 1;
const TEXT = 2;
const CHILD = 3;
const KIND = 3;
const DEAD = 4;
const COUNT_SHIFT = 3;

// Slots hold positions modulo 2^32; EMPTY would be a chunk's last word, where no record starts.
const EMPTY = 0xffffffff;
const EMPTY_SLOT = -1;
const STALE_SLOT = -2;
const MAX_LOAD = 1 / 2;
const REBUILT_LOAD = 1 / 3;
const DEFAULT_MIN_SLOTS = 1024;
// With the arena's span (head to tail) and the words written between two rebuilds each under 2^30,
// a stale slot's position is always more than 2^30 words behind the head modulo 2^32, so it never
// reads as live. Each bound is 4 GiB of records, far beyond any configured cap.
const MAX_SPAN_WORDS = 2 ** 30;
const MAX_WORDS_BETWEEN_REBUILDS = 2 ** 30;

const TIME_CHARS = 22;
const SEGMENT_CHARS = TIME_CHARS + UUID_CHARS;
const T = 84;
const Z = 90;
const DOT = 46;

// A write time is kept as a signed 32-bit offset from its chunk's base time.
const MIN_TIME_OFFSET = -(2 ** 31);
const MAX_TIME_OFFSET = 2 ** 31 - 1;
// A parsed key's UUID.
const keyWords = new Uint32Array(4);
// A parsed order's segments before they are copied to the arena; a record's, gathered to be read.
let parsed = new Uint32Array(64 * SEGMENT_WORDS);
let gathered = new Uint32Array(64 * SEGMENT_WORDS);

// Character code → decimal digit value, -1 for any other character.
const DIGIT_VALUE = new Int8Array(0x10000).fill(-1);
for (let i = 0; i < 10; i++) DIGIT_VALUE[48 + i] = i;

export class DottedOrderMemory {
  private chunks: Uint32Array[] = [];
  /** Base time of each chunk, from which its records' write times are kept as offsets. */
  private bases: number[] = [];
  /** Chunk number (absolute position / CHUNK_WORDS) of chunks[0]. */
  private firstChunk = 0;
  /** Absolute word positions of the oldest record and of the next one. */
  private head = 0;
  private tail = 0;
  private slots: Uint32Array;
  private mask: number;
  /** Slots not EMPTY (live, stale, or pointing at a dead record). */
  private usedSlots = 0;
  private tailAtRebuild = 0;
  private liveEntries = 0;
  private liveWords = 0;
  /** Strings of text records, by record position. */
  private texts = new Map<number, TextEntry>();
  /** Text records whose key is not a UUID, so not in the hash table: key → record position. */
  private readonly textKeys = new Map<string, number>();
  private readonly minSlots: number;
  private readonly compactAfterWords: number;
  private readonly startChunk: number;
  private out = Buffer.allocUnsafeSlow(4096);
  // The entry last looked up, or last written with an order not extending it. The batcher looks up
  // a parent, then writes its children's orders (its own plus a segment) one after the other: the
  // parent is then found without parsing its id, and its segments are copied, not parsed again.
  private recentKey = '';
  private recentPosition = -1;
  private recentDotted = '';
  private recentTraceId = '';
  /** Whether the last order encoded took the recent entry's segments. */
  private prefixUsed = false;
  /** The recent entry's position when the last order encoded is it plus one segment, else -1. */
  private parentPosition = -1;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
    options: DottedOrderMemoryOptions = {},
  ) {
    this.minSlots = options.minSlots ?? DEFAULT_MIN_SLOTS;
    this.compactAfterWords = options.compactAfterWords ?? CHUNK_WORDS;
    this.startChunk = options.startChunk ?? 0;
    this.slots = new Uint32Array(this.minSlots);
    this.mask = 0;
    this.clear();
  }

  get size(): number {
    return this.liveEntries;
  }

  /** The order, or undefined when absent or expired. */
  get(runId: string): RememberedOrder | undefined {
    const recent = runId === this.recentKey && this.isLive(this.recentPosition);
    const position = recent ? this.recentPosition : this.find(runId);
    if (position < 0) return undefined;
    if (this.now() - this.writtenAt(position) >= this.ttlMs) {
      this.kill(position);
      return undefined;
    }
    if (recent) return { dotted: this.recentDotted, traceId: this.recentTraceId };
    const order = this.read(position);
    this.remember(runId, position, order);
    return order;
  }

  has(runId: string): boolean {
    return this.get(runId) !== undefined;
  }

  set(runId: string, order: RememberedOrder): void {
    const isUuid = runId.length === UUID_CHARS && parseUuid(runId, 0, keyWords, 0);
    let slot = -1;
    if (isUuid) {
      // The key's live slot, else the first reusable one on its probe path.
      for (let i = hashWords(keyWords, 0) & this.mask; ; i = (i + 1) & this.mask) {
        const position = this.slotPosition(i);
        if (position === STALE_SLOT || position === EMPTY_SLOT) {
          if (slot < 0) slot = i;
          if (position === EMPTY_SLOT) break;
        } else if (this.recordHasKey(position, runId)) {
          this.kill(position);
          slot = i;
          break;
        }
      }
      if (this.slots[slot] === EMPTY) this.usedSlots++;
    } else {
      const old = this.textKeys.get(runId);
      if (old !== undefined) this.kill(old);
    }

    const position = this.append(runId, order, isUuid);
    if (!this.prefixUsed) this.remember(runId, position, order);
    if (isUuid) this.slots[slot] = position >>> 0;
    else this.textKeys.set(runId, position);
    while (this.liveEntries > this.maxEntries || this.tail - this.head > MAX_SPAN_WORDS) this.forgetOldest();

    const deadWords = this.tail - this.head - this.liveWords;
    if (deadWords > this.liveWords && deadWords > this.compactAfterWords) this.rebuild(true);
    else if (this.usedSlots > this.slots.length * MAX_LOAD) this.rebuild(false);
    else if (this.tail - this.tailAtRebuild > MAX_WORDS_BETWEEN_REBUILDS) this.rebuild(false);
  }

  delete(runId: string): void {
    const position = this.find(runId);
    if (position >= 0) this.kill(position);
  }

  /** Drops every expired entry; cheap to call often, since it stops at the first live one. */
  sweep(): void {
    const now = this.now();
    while (this.head < this.tail) {
      const header = this.word(this.head);
      const live = (header & KIND) !== END && (header & DEAD) === 0;
      if (live && now - this.writtenAt(this.head) < this.ttlMs) break;
      this.advanceHead();
    }
    // A table sized for a burst long gone is given back.
    if (this.slots.length > this.minSlots && this.liveEntries * 8 < this.slots.length) this.rebuild(false);
  }

  clear(): void {
    this.chunks = [];
    this.bases = [];
    this.firstChunk = this.startChunk;
    this.head = this.tail = this.tailAtRebuild = this.startChunk * CHUNK_WORDS;
    this.liveEntries = this.liveWords = 0;
    this.texts.clear();
    this.textKeys.clear();
    this.slots = new Uint32Array(this.minSlots).fill(EMPTY);
    this.mask = this.minSlots - 1;
    this.usedSlots = 0;
    this.remember('', -1, { dotted: '', traceId: '' });
  }

  /** Bytes held outside the JS heap (arena and table), for measurements. */
  get externalBytes(): number {
    return this.chunks.length * CHUNK_WORDS * 4 + this.slots.byteLength;
  }

  /**
   * What a byte budget counts: the records from the oldest to the newest (dead ones between them
   * included, until compaction) and the table. Within a chunk of `externalBytes`; text records'
   * strings are not counted.
   */
  get heldBytes(): number {
    return (this.tail - this.head) * 4 + this.slots.byteLength;
  }

  /** Write time of the oldest live entry, expired or not; undefined when there is none. */
  oldestWrittenAt(): number | undefined {
    while (this.head < this.tail) {
      const header = this.word(this.head);
      if ((header & KIND) !== END && (header & DEAD) === 0) return this.writtenAt(this.head);
      this.advanceHead(); // a dead record or a chunk's unused end: nothing to keep
    }
    return undefined;
  }

  /** Forgets the oldest entry: how a byte budget shared with other memories is kept. */
  forgetOldest(): void {
    while (this.head < this.tail) {
      if (this.advanceHead()) return;
    }
  }

  // --- lookup ---

  private remember(runId: string, position: number, order: RememberedOrder): void {
    this.recentKey = runId;
    this.recentPosition = position;
    this.recentDotted = order.dotted;
    this.recentTraceId = order.traceId;
  }

  /** Whether a record is still there and not dead (positions are never reused). */
  private isLive(position: number): boolean {
    return position >= this.head && position < this.tail && (this.word(position) & DEAD) === 0;
  }

  /** Position of the key's live record, or -1. */
  private find(runId: string): number {
    if (runId.length !== UUID_CHARS || !parseUuid(runId, 0, keyWords, 0)) return this.textKeys.get(runId) ?? -1;
    for (let i = hashWords(keyWords, 0) & this.mask; ; i = (i + 1) & this.mask) {
      const position = this.slotPosition(i);
      if (position === EMPTY_SLOT) return -1;
      if (position !== STALE_SLOT && this.recordHasKey(position, runId)) return position;
    }
  }

  /** A slot's record position, EMPTY_SLOT, or STALE_SLOT when behind the head or dead. */
  private slotPosition(slot: number): number {
    const value = this.slots[slot]!;
    if (value === EMPTY) return EMPTY_SLOT;
    // Distance from the head, modulo 2^32 like the slot's value.
    const offset = (value - this.head) >>> 0;
    if (offset >= this.tail - this.head) return STALE_SLOT;
    const position = this.head + offset;
    return (this.word(position) & DEAD) === 0 ? position : STALE_SLOT;
  }

  /** Whether the live record at `position` is the key's (`keyWords` holds the parsed key). */
  private recordHasKey(position: number, runId: string): boolean {
    const header = this.word(position);
    if ((header & KIND) === TEXT) return this.texts.get(position)!.key === runId;
    const chunk = this.chunkAt(position);
    const at = keyOffset(position % CHUNK_WORDS, header);
    return (
      chunk[at] === keyWords[0] &&
      chunk[at + 1] === keyWords[1] &&
      chunk[at + 2] === keyWords[2] &&
      chunk[at + 3] === keyWords[3]
    );
  }

  private read(position: number): RememberedOrder {
    const header = this.word(position);
    if ((header & KIND) === TEXT) return this.texts.get(position)!;
    const count = header >>> COUNT_SHIFT;
    if (gathered.length < count * SEGMENT_WORDS) gathered = new Uint32Array(count * SEGMENT_WORDS);
    gatherSegments(this.chunkAt(position), position % CHUNK_WORDS, gathered);
    const length = count * (SEGMENT_CHARS + 1) - 1;
    if (this.out.length < length) this.out = Buffer.allocUnsafeSlow(length);
    const out = this.out;
    for (let o = 0, w = 0; o < length; o += SEGMENT_CHARS + 1, w += SEGMENT_WORDS) {
      writeSegmentTime(gathered, w, out, o);
      writeUuid(gathered, w + 2, out, o + TIME_CHARS);
      if (o > 0) out[o - 1] = DOT;
    }
    const dotted = out.toString('latin1', 0, length);
    return { dotted, traceId: dotted.slice(TIME_CHARS, SEGMENT_CHARS) };
  }

  // --- arena ---

  private chunkAt(position: number): Uint32Array {
    return this.chunks[Math.floor(position / CHUNK_WORDS) - this.firstChunk]!;
  }

  private word(position: number): number {
    return this.chunkAt(position)[position % CHUNK_WORDS]!;
  }

  private writtenAt(position: number): number {
    const index = Math.floor(position / CHUNK_WORDS) - this.firstChunk;
    return this.bases[index]! + (this.chunks[index]![(position % CHUNK_WORDS) + 1]! | 0);
  }

  /** Writes the entry as the newest record; returns its position. */
  private append(runId: string, order: RememberedOrder, isUuid: boolean): number {
    const { dotted, traceId } = order;
    const time = Math.floor(this.now());
    // Binary when the order is UUID segments, the key the last segment's id and the trace id the
    // first's (always so for the batcher's orders); anything else is kept verbatim.
    const count = isUuid ? this.encode(dotted, traceId, runId) : this.notEncoded();
    const parent = this.parentPosition;
    // A child record refers to its parent's in the same chunk only: the chunk outlives both.
    const asChild =
      parent >= 0 &&
      this.fitsTailChunk(CHILD_WORDS, time) &&
      Math.floor(parent / CHUNK_WORDS) === Math.floor(this.tail / CHUNK_WORDS);
    if (parent >= 0 && !asChild) gatherSegments(this.chunkAt(parent), parent % CHUNK_WORDS, parsed);
    const length = asChild ? CHILD_WORDS : HEADER_WORDS + count * SEGMENT_WORDS;
    const position = this.reserve(length, time);
    const chunk = this.chunkAt(position);
    const at = position % CHUNK_WORDS;
    chunk[at + 1] = time - this.bases[this.bases.length - 1]!;
    if (asChild) {
      chunk[at] = (count << COUNT_SHIFT) | CHILD;
      chunk[at + HEADER_WORDS] = parent % CHUNK_WORDS;
      for (let i = (count - 1) * SEGMENT_WORDS, to = at + HEADER_WORDS + 1; to < at + CHILD_WORDS; i++, to++) {
        chunk[to] = parsed[i]!;
      }
    } else if (count > 0) {
      chunk[at] = (count << COUNT_SHIFT) | BINARY;
      for (let i = 0, to = at + HEADER_WORDS; i < count * SEGMENT_WORDS; i++, to++) chunk[to] = parsed[i]!;
    } else {
      chunk[at] = TEXT;
      this.texts.set(position, { key: runId, dotted, traceId });
    }
    this.tail = position + length;
    this.liveEntries++;
    this.liveWords += length;
    return position;
  }

  /**
   * Parses a dotted order of UUID segments into `parsed`; returns the segment count, or 0 when the
   * order is not of that shape, or its ends are not `traceId` and `runId` (`keyWords` holds it).
   * An order extending the recent entry's takes that record's segments as they are; when it adds
   * one segment, only that one is parsed and `parentPosition` is the recent entry's record.
   */
  private encode(dotted: string, traceId: string, runId: string): number {
    this.prefixUsed = false;
    this.parentPosition = -1;
    const count = (dotted.length + 1) / (SEGMENT_CHARS + 1);
    if (!Number.isInteger(count) || count > MAX_SEGMENTS) return 0;
    if (!dotted.endsWith(runId) || traceId.length !== UUID_CHARS || !dotted.startsWith(traceId, TIME_CHARS)) return 0;
    if (parsed.length < count * SEGMENT_WORDS) parsed = new Uint32Array(count * SEGMENT_WORDS);
    let first = 0;
    const prefix = this.recentDotted;
    // A dead record's words stay until the head passes them.
    if (
      prefix.length < dotted.length &&
      this.recentPosition >= this.head &&
      this.recentPosition < this.tail &&
      (this.word(this.recentPosition) & KIND) !== TEXT &&
      dotted.charCodeAt(prefix.length) === DOT &&
      dotted.startsWith(prefix)
    ) {
      first = (prefix.length + 1) / (SEGMENT_CHARS + 1);
      // One segment more: a child record of the recent one (append gathers the prefix if not).
      if (first === count - 1) this.parentPosition = this.recentPosition;
      else gatherSegments(this.chunkAt(this.recentPosition), this.recentPosition % CHUNK_WORDS, parsed);
      this.prefixUsed = true;
    }
    for (let segment = first; segment < count; segment++) {
      const c = segment * (SEGMENT_CHARS + 1);
      const w = segment * SEGMENT_WORDS;
      if (segment > 0 && dotted.charCodeAt(c - 1) !== DOT) return this.notEncoded();
      if (!parseSegmentTime(dotted, c, parsed, w)) return this.notEncoded();
      // The last id is the key, parsed already.
      if (segment === count - 1) {
        parsed[w + 2] = keyWords[0]!;
        parsed[w + 3] = keyWords[1]!;
        parsed[w + 4] = keyWords[2]!;
        parsed[w + 5] = keyWords[3]!;
      } else if (!parseUuid(dotted, c + TIME_CHARS, parsed, w + 2)) {
        return this.notEncoded();
      }
    }
    return count;
  }

  private notEncoded(): number {
    this.prefixUsed = false;
    this.parentPosition = -1;
    return 0;
  }

  /** Whether a record of `length` words written at `time` fits the chunk the tail is in. */
  private fitsTailChunk(length: number, time: number): boolean {
    const offset = this.tail % CHUNK_WORDS;
    if (offset === 0 || offset + length > CHUNK_WORDS) return false;
    const delta = time - this.bases[this.bases.length - 1]!;
    return delta >= MIN_TIME_OFFSET && delta <= MAX_TIME_OFFSET;
  }

  /**
   * The position for a record of `length` words written at `time` at the tail, starting a new
   * chunk (based at `time`) when it does not fit the tail's.
   */
  private reserve(length: number, time: number): number {
    let offset = this.tail % CHUNK_WORDS;
    if (offset > 0 && !this.fitsTailChunk(length, time)) {
      this.chunkAt(this.tail)[offset] = END;
      this.tail += CHUNK_WORDS - offset;
      offset = 0;
    }
    // A tail at a chunk's start is always past the last chunk allocated.
    if (offset === 0) {
      if (this.chunks.length === 0) this.firstChunk = this.tail / CHUNK_WORDS;
      this.chunks.push(new Uint32Array(CHUNK_WORDS));
      this.bases.push(time);
    }
    return this.tail;
  }

  /** Marks a live record dead: its entry is gone. */
  private kill(position: number): void {
    const chunk = this.chunkAt(position);
    const at = position % CHUNK_WORDS;
    const header = chunk[at]!;
    chunk[at] = header | DEAD;
    this.forget(position, header);
  }

  private forget(position: number, header: number): void {
    this.liveEntries--;
    this.liveWords -= recordLength(header);
    if ((header & KIND) !== TEXT) return;
    const entry = this.texts.get(position)!;
    this.texts.delete(position);
    if (this.textKeys.get(entry.key) === position) this.textKeys.delete(entry.key);
  }

  /** Moves the head past one record (or a chunk's unused end); drops the chunks it leaves. */
  private advanceHead(): boolean {
    const header = this.word(this.head);
    let evicted = false;
    if ((header & KIND) === END) {
      this.head += CHUNK_WORDS - (this.head % CHUNK_WORDS);
    } else {
      if ((header & DEAD) === 0) {
        this.forget(this.head, header);
        evicted = true;
      }
      this.head += recordLength(header);
    }
    while (this.chunks.length > 0 && this.firstChunk < Math.floor(this.head / CHUNK_WORDS)) {
      this.chunks.shift();
      this.bases.shift();
      this.firstChunk++;
    }
    return evicted;
  }

  /**
   * Rebuilds the hash table from the live records, sized for them (stale slots go); when
   * compacting, first copies the live records, in order, to fresh chunks after the current tail.
   */
  private rebuild(compact: boolean): void {
    if (compact) this.compact();
    let size = this.minSlots;
    while (size * REBUILT_LOAD < this.liveEntries) size *= 2;
    this.slots = new Uint32Array(size).fill(EMPTY);
    this.mask = size - 1;
    this.usedSlots = 0;
    this.tailAtRebuild = this.tail;
    for (let position = this.head; position < this.tail;) {
      const header = this.word(position);
      if ((header & KIND) === END) {
        position += CHUNK_WORDS - (position % CHUNK_WORDS);
        continue;
      }
      if ((header & DEAD) === 0) {
        let hashed = false;
        if ((header & KIND) !== TEXT) {
          const chunk = this.chunkAt(position);
          const at = keyOffset(position % CHUNK_WORDS, header);
          keyWords[0] = chunk[at]!;
          keyWords[1] = chunk[at + 1]!;
          keyWords[2] = chunk[at + 2]!;
          keyWords[3] = chunk[at + 3]!;
          hashed = true;
        } else {
          const { key } = this.texts.get(position)!;
          hashed = key.length === UUID_CHARS && parseUuid(key, 0, keyWords, 0);
        }
        if (hashed) {
          let i = hashWords(keyWords, 0) & this.mask;
          while (this.slots[i] !== EMPTY) i = (i + 1) & this.mask;
          this.slots[i] = position >>> 0;
          this.usedSlots++;
        }
      }
      position += recordLength(header);
    }
  }

  private compact(): void {
    const { chunks, bases, firstChunk, head, tail, texts } = this;
    const index = (position: number): number => Math.floor(position / CHUNK_WORDS) - firstChunk;
    // Fresh positions start at the next chunk boundary, so positions still only grow.
    this.chunks = [];
    this.bases = [];
    this.head = this.tail = Math.ceil(tail / CHUNK_WORDS) * CHUNK_WORDS;
    this.firstChunk = this.head / CHUNK_WORDS;
    this.texts = new Map();
    this.liveWords = 0;
    // Old position → new, of the records copied: a child follows its parent when both are copied
    // into one chunk, and is written out whole otherwise.
    // Only a chunk's own records are looked up there, so the map holds one old chunk's at a time.
    const moved = new Map<number, number>();
    for (let position = head; position < tail;) {
      const chunk = chunks[index(position)]!;
      const at = position % CHUNK_WORDS;
      if (at === 0 || position === head) moved.clear();
      const header = chunk[at]!;
      if ((header & KIND) === END) {
        position += CHUNK_WORDS - at;
        continue;
      }
      const length = recordLength(header);
      if ((header & DEAD) === 0) {
        const time = bases[index(position)]! + (chunk[at + 1]! | 0);
        let to: number;
        if ((header & KIND) === CHILD) {
          const parent = moved.get(position - at + chunk[at + HEADER_WORDS]!);
          if (
            parent !== undefined &&
            this.fitsTailChunk(CHILD_WORDS, time) &&
            Math.floor(parent / CHUNK_WORDS) === Math.floor(this.tail / CHUNK_WORDS)
          ) {
            to = this.reserve(CHILD_WORDS, time);
            const into = this.chunkAt(to);
            into.set(chunk.subarray(at, at + CHILD_WORDS), to % CHUNK_WORDS);
            into[(to % CHUNK_WORDS) + HEADER_WORDS] = parent % CHUNK_WORDS;
            this.tail = to + CHILD_WORDS;
          } else {
            const count = header >>> COUNT_SHIFT;
            if (parsed.length < count * SEGMENT_WORDS) parsed = new Uint32Array(count * SEGMENT_WORDS);
            gatherSegments(chunk, at, parsed);
            to = this.reserve(HEADER_WORDS + count * SEGMENT_WORDS, time);
            const into = this.chunkAt(to);
            into[to % CHUNK_WORDS] = (count << COUNT_SHIFT) | BINARY;
            into.set(parsed.subarray(0, count * SEGMENT_WORDS), (to % CHUNK_WORDS) + HEADER_WORDS);
            this.tail = to + HEADER_WORDS + count * SEGMENT_WORDS;
          }
        } else {
          to = this.reserve(length, time);
          this.chunkAt(to).set(chunk.subarray(at, at + length), to % CHUNK_WORDS);
          this.tail = to + length;
          if ((header & KIND) === TEXT) {
            const entry = texts.get(position)!;
            this.texts.set(to, entry);
            if (this.textKeys.get(entry.key) === position) this.textKeys.set(entry.key, to);
          }
        }
        this.chunkAt(to)[(to % CHUNK_WORDS) + 1] = time - this.bases[this.bases.length - 1]!;
        this.liveWords += this.tail - to;
        moved.set(position, to);
      }
      position += length;
    }
  }
}

/** Words of the record with this header. */
function recordLength(header: number): number {
  switch (header & KIND) {
    case BINARY:
      return HEADER_WORDS + (header >>> COUNT_SHIFT) * SEGMENT_WORDS;
    case CHILD:
      return CHILD_WORDS;
    default:
      return HEADER_WORDS;
  }
}

/** Offset of the key (the last segment's UUID) of the binary or child record at `at`. */
function keyOffset(at: number, header: number): number {
  const last =
    (header & KIND) === CHILD
      ? at + HEADER_WORDS + 1
      : at + HEADER_WORDS + ((header >>> COUNT_SHIFT) - 1) * SEGMENT_WORDS;
  return last + 2;
}

/**
 * Copies the segments of the binary or child record at `at` of `chunk` to `out`, root first:
 * a child record's own segment, then its parent's, up its chain to a binary record.
 */
function gatherSegments(chunk: Uint32Array, at: number, out: Uint32Array): void {
  let header = chunk[at]!;
  let w = ((header >>> COUNT_SHIFT) - 1) * SEGMENT_WORDS;
  while ((header & KIND) === CHILD) {
    for (let i = 0, from = at + HEADER_WORDS + 1; i < SEGMENT_WORDS; i++, from++) out[w + i] = chunk[from]!;
    w -= SEGMENT_WORDS;
    at = chunk[at + HEADER_WORDS]!;
    header = chunk[at]!;
  }
  for (let i = 0, from = at + HEADER_WORDS; i < w + SEGMENT_WORDS; i++, from++) out[i] = chunk[from]!;
}

// --- encoding ---

/**
 * Packs a segment's 22-character time at `at` into two words: YYYYMMDD as a number with the hour
 * in the top 5 bits, then minute (6 bits), second (6 bits) and the microseconds (20 bits). Any
 * date digits fit, and hours up to 31, minutes and seconds up to 63; false for anything else.
 */
export function parseSegmentTime(text: string, at: number, out: Uint32Array, w: number): boolean {
  if (text.charCodeAt(at + 8) !== T || text.charCodeAt(at + 21) !== Z) return false;
  const year = digits4(text, at);
  const monthDay = digits4(text, at + 4);
  const hour = digits2(text, at + 9);
  const minute = digits2(text, at + 11);
  const second = digits2(text, at + 13);
  const fractionHigh = digits2(text, at + 15);
  const fractionLow = digits4(text, at + 17);
  if ((year | monthDay | hour | minute | second | fractionHigh | fractionLow) < 0) return false;
  if (hour > 31 || minute > 63 || second > 63) return false;
  const date = year * 10_000 + monthDay;
  const fraction = fractionHigh * 10_000 + fractionLow;
  out[w] = (hour << 27) | date;
  out[w + 1] = (minute << 26) | (second << 20) | fraction;
  return true;
}

/** Writes the 22-character time packed in the two words at `w`. */
export function writeSegmentTime(words: Uint32Array, w: number, out: Uint8Array, o: number): void {
  const first = words[w]!;
  const second = words[w + 1]!;
  const date = first & 0x7ffffff;
  const year = (date / 10_000) | 0;
  writePair(out, o, (year / 100) | 0);
  writePair(out, o + 2, year % 100);
  writePair(out, o + 4, ((date / 100) | 0) % 100);
  writePair(out, o + 6, date % 100);
  out[o + 8] = T;
  writePair(out, o + 9, first >>> 27);
  writePair(out, o + 11, second >>> 26);
  writePair(out, o + 13, (second >>> 20) & 63);
  const fraction = second & 0xfffff;
  writePair(out, o + 15, (fraction / 10_000) | 0);
  writePair(out, o + 17, ((fraction / 100) | 0) % 100);
  writePair(out, o + 19, fraction % 100);
  out[o + 21] = Z;
}

function writePair(out: Uint8Array, o: number, value: number): void {
  out[o] = 48 + ((value / 10) | 0);
  out[o + 1] = 48 + (value % 10);
}

/** The value of two decimal digits at `at`, or a negative number. */
function digits2(text: string, at: number): number {
  const a = DIGIT_VALUE[text.charCodeAt(at) & 0xffff]!;
  const b = DIGIT_VALUE[text.charCodeAt(at + 1) & 0xffff]!;
  return (a | b) < 0 ? -1 : a * 10 + b;
}

/** The value of four decimal digits at `at`, or a negative number. */
function digits4(text: string, at: number): number {
  const high = digits2(text, at);
  const low = digits2(text, at + 2);
  return (high | low) < 0 ? -1 : high * 100 + low;
}
