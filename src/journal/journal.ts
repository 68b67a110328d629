// A write-ahead journal of accepted requests: what makes "acknowledged" mean "kept".
//
// A receiver appends each request to the journal *before* it answers 2xx, and settles the entry
// once every item of the request has left the process for good (see src/pipeline/delivery.ts). On
// start, every entry that was never settled is replayed. The batcher's buffer, the sending queue
// and retries in flight therefore never hold the only copy of acknowledged data: a `kill -9` loses
// nothing that was acknowledged, since a write that reached the page cache survives the process.
// (Power loss is another matter: `fsyncIntervalMs` makes appends wait for a periodic fdatasync.)
//
// The layout is that of a log-structured store: the journal is a directory of numbered segment
// files, appended to one at a time and never rewritten. Settlement is recorded beside each segment
// in a small `.acks` file (the indices of settled records); a segment is deleted once it is full
// and all its records are settled. Settling is cheap, so the journal's cost on the hot path is one
// gathered write per request.

import { appendFileSync, closeSync, openSync, readFileSync, rmSync, writeSync, writevSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DirectoryLock } from './directory_lock.ts';
import {
  SEGMENT_MAGIC,
  RECORD_PREFIX_BYTES,
  CorruptRecordError,
  decodePayload,
  encodeRecord,
  readPrefix,
} from './record.ts';

const SEGMENT_SUFFIX = '.journal';
/** A settled active segment at least this large is retired rather than grown further (see retireActiveIfSettled). */
const RETIRE_SETTLED_BYTES = 65_536;
/** How long a settled active segment waits for the next append before it is retired, unless room is short. */
const RETIRE_QUIET_MS = 1000;
/** At most this share of the cap in one segment, so that settled segments free room. */
const SEGMENTS_PER_CAP = 8;
const ACKS_SUFFIX = '.acks';
const ID_DIGITS = 12;

export interface JournalOptions {
  readonly directory: string;
  /** Cap on the bytes of all segments; an append that would pass it fails with JournalFullError. */
  readonly maxBytes: number;
  /** A segment is closed and a new one started once it reaches this size. */
  readonly segmentBytes: number;
  /** 0: appends resolve once written (page cache). > 0: once a periodic fdatasync covered them. */
  readonly fsyncIntervalMs: number;
  /** Told of failures that cost nothing acknowledged (an `.acks` write: replay then duplicates). */
  readonly onBackgroundError?: (error: unknown, what: string) => void;
  /** How long a settled active segment is kept for further appends while room is not short (default 1000 ms). */
  readonly retireQuietMs?: number;
}

/** The journal cannot take the record now (disk cap reached); the client should retry later. */
export class JournalFullError extends Error {
  override readonly name = 'JournalFullError';
}

/** Writing the journal failed (disk full, I/O error); nothing of the record was kept. */
export class JournalWriteError extends Error {
  override readonly name = 'JournalWriteError';
}

/** A record that can never fit under the journal's cap. */
export class JournalRecordTooLargeError extends Error {
  override readonly name = 'JournalRecordTooLargeError';
}

export class JournalClosedError extends Error {
  override readonly name = 'JournalClosedError';
}

interface Segment {
  readonly id: number;
  readonly path: string;
  readonly acksPath: string;
  /** Bytes of the file that hold whole records (and the magic). */
  size: number;
  records: number;
  /** Records not yet settled. */
  pending: number;
  /** No more records will be appended. */
  sealed: boolean;
  deleted: boolean;
  /** The open file, while this is the segment appended to. */
  file?: FileHandle;
  /** Settled indices found on disk at open (segments of an earlier run only). */
  readonly acked: ReadonlySet<number>;
  /** Indices settled since the last write of the `.acks` file. */
  unwrittenAcks: number[];
  /** The `.acks` file, open for appending from its first write until the segment is removed. */
  acksFd?: number;
}

/** One record, as returned by `append` or yielded by `replay`; pass it to `settle`. */
export interface JournalEntry {
  readonly segment: Segment;
  readonly index: number;
  /** Where the record starts in its segment file. */
  readonly offset: number;
  readonly bytes: number;
}

export type ReplayedRecord<H> =
  | { readonly entry: JournalEntry; readonly header: H; readonly body: Buffer }
  | { readonly entry: JournalEntry; readonly corrupt: string };

export interface JournalStats {
  readonly bytes: number;
  readonly segments: number;
  readonly pendingRecords: number;
}

export class Journal<H = unknown> {
  private readonly segments = new Map<number, Segment>();
  /** Segments found at open, whose unsettled records `replay` yields. */
  private recovered: Segment[] = [];
  private active?: Segment;
  private nextId = 1;
  private totalBytes = 0;
  private reservedBytes = 0;
  private pendingRecords = 0;
  /** Appends run one after another: each writes at the end of the active segment. */
  private tail: Promise<unknown> = Promise.resolve();
  private ackFlushScheduled = false;
  /** Appends between their start and the end of their write. */
  private writing = 0;
  private syncWaiters: (() => void)[] = [];
  private syncTimer?: NodeJS.Timeout;
  private retireTimer?: NodeJS.Timeout;
  /** An append was refused for want of room since the last successful write. */
  private starved = false;
  private opened = false;
  private closed = false;
  /** Held from `open` to `close`: no other journal replays or deletes this directory's files. */
  private lock?: DirectoryLock;

  /** The segment size in force: `segmentBytes`, but never more than a fraction of the cap. */
  private readonly segmentBytes: number;

  constructor(private readonly options: JournalOptions) {
    this.segmentBytes = Math.max(4096, Math.min(options.segmentBytes, Math.floor(options.maxBytes / SEGMENTS_PER_CAP)));
  }

  get directory(): string {
    return this.options.directory;
  }

  stats(): JournalStats {
    return { bytes: this.totalBytes, segments: this.segments.size, pendingRecords: this.pendingRecords };
  }

  /**
   * Creates the directory and indexes the segments an earlier run left: records are counted (a torn
   * record at a segment's end, from a crash in mid-write, is ignored: it was never acknowledged),
   * settled ones noted, and fully settled segments deleted. Returns what is left to replay.
   */
  async open(): Promise<{ records: number; bytes: number; corruptFiles: string[] }> {
    if (this.opened) throw new Error('journal already opened');
    this.opened = true;
    const { directory } = this.options;
    await mkdir(directory, { recursive: true, mode: 0o700 });
    this.lock = DirectoryLock.acquire(directory, 'journal'); // DirectoryLockedError: held by another
    try {
      return await this.openLocked(directory);
    } catch (error) {
      this.releaseLock();
      throw error;
    }
  }

  private async openLocked(directory: string): Promise<{ records: number; bytes: number; corruptFiles: string[] }> {
    const names = (await readdir(directory)).sort();
    const corruptFiles: string[] = [];
    for (const name of names) {
      const path = join(directory, name);
      if (name.endsWith(ACKS_SUFFIX)) {
        if (!names.includes(name.slice(0, -ACKS_SUFFIX.length) + SEGMENT_SUFFIX)) await rm(path, { force: true });
        continue;
      }
      if (!name.endsWith(SEGMENT_SUFFIX)) continue;
      const id = Number(name.slice(0, -SEGMENT_SUFFIX.length));
      if (!Number.isSafeInteger(id) || id <= 0) continue;
      this.nextId = Math.max(this.nextId, id + 1);
      const scanned = await scanSegment(path);
      if (scanned === undefined) {
        await rename(path, `${path}.corrupt`);
        corruptFiles.push(name);
        continue;
      }
      const acksPath = join(directory, `${name.slice(0, -SEGMENT_SUFFIX.length)}${ACKS_SUFFIX}`);
      const acked = readAcks(acksPath, scanned.records);
      const segment: Segment = {
        id,
        path,
        acksPath,
        size: scanned.size,
        records: scanned.records,
        pending: scanned.records - acked.size,
        sealed: true,
        deleted: false,
        acked,
        unwrittenAcks: [],
      };
      if (segment.pending === 0) {
        deleteFiles(segment);
        continue;
      }
      this.segments.set(id, segment);
      this.recovered.push(segment);
      this.totalBytes += segment.size;
      this.pendingRecords += segment.pending;
    }
    return { records: this.pendingRecords, bytes: this.totalBytes, corruptFiles };
  }

  /**
   * Yields the unsettled records of the segments found at open, oldest first, reading one record
   * at a time. A record that fails its checksum is yielded as `corrupt` (settle it once counted).
   */
  async *replay(): AsyncGenerator<ReplayedRecord<H>> {
    const segments = this.recovered;
    this.recovered = [];
    for (const segment of segments) {
      if (segment.deleted) continue;
      const file = await open(segment.path, 'r');
      try {
        let offset = SEGMENT_MAGIC.length;
        for (let index = 0; index < segment.records; index++) {
          const prefix = Buffer.alloc(RECORD_PREFIX_BYTES);
          await readExactly(file, prefix, offset);
          const { payloadLength, checksum } = readPrefix(prefix);
          const recordOffset = offset;
          const entry: JournalEntry = {
            segment,
            index,
            offset: recordOffset,
            bytes: RECORD_PREFIX_BYTES + payloadLength,
          };
          offset += RECORD_PREFIX_BYTES + payloadLength;
          if (segment.acked.has(index)) continue;
          const payload = Buffer.allocUnsafe(payloadLength);
          await readExactly(file, payload, recordOffset + RECORD_PREFIX_BYTES);
          try {
            const { header, body } = decodePayload<H>(payload, checksum);
            yield { entry, header, body };
          } catch (error) {
            if (!(error instanceof CorruptRecordError)) throw error;
            yield { entry, corrupt: error.message };
          }
        }
      } finally {
        await file.close();
      }
    }
  }

  /**
   * Appends one record; resolves once it is written (and, with an fsync interval, synced).
   * Rejects with JournalFullError (cap reached), JournalRecordTooLargeError, JournalWriteError
   * (nothing of the record is kept) or JournalClosedError.
   */
  append(header: H, body: Buffer): Promise<JournalEntry> {
    if (this.closed || !this.opened) return Promise.reject(new JournalClosedError('the journal is closed'));
    const record = encodeRecord(header, body);
    const { maxBytes } = this.options;
    if (record.bytes + SEGMENT_MAGIC.length > maxBytes) {
      return Promise.reject(
        new JournalRecordTooLargeError(
          `a record of ${record.bytes} bytes can never fit under the journal's ${maxBytes}-byte cap`,
        ),
      );
    }
    if (this.totalBytes + this.reservedBytes + record.bytes + SEGMENT_MAGIC.length > maxBytes) {
      this.starved = true;
      return Promise.reject(
        new JournalFullError(`the journal holds ${this.totalBytes} bytes of its ${maxBytes}-byte cap`),
      );
    }
    this.reservedBytes += record.bytes;
    this.writing++;
    const written = this.tail
      .then(() => this.write(record.buffers, record.bytes))
      .finally(() => {
        this.writing--;
        if (!this.closed) this.retireActiveIfSettled();
      });
    this.tail = written.catch(() => undefined);
    const released = written.finally(() => (this.reservedBytes -= record.bytes));
    if (this.options.fsyncIntervalMs === 0) return released;
    // Group commit: later appends go on while this one waits for the next periodic sync.
    return released.then((entry) => new Promise<JournalEntry>((resolve) => this.awaitSync(() => resolve(entry))));
  }

  /**
   * Reads an unsettled record back (its data was given up downstream and is delivered again).
   * Rejects with CorruptRecordError when it does not match its checksum.
   */
  async read(entry: JournalEntry): Promise<{ header: H; body: Buffer }> {
    if (entry.segment.deleted) throw new Error('the record was settled and its segment deleted');
    const file = await open(entry.segment.path, 'r');
    try {
      const record = Buffer.allocUnsafe(entry.bytes);
      await readExactly(file, record, entry.offset);
      return decodePayload<H>(record.subarray(RECORD_PREFIX_BYTES), readPrefix(record).checksum);
    } finally {
      await file.close();
    }
  }

  /** Marks a record settled: it will not be replayed. Synchronous; safe after `close()`. */
  settle(entry: JournalEntry): void {
    const { segment } = entry;
    if (segment.deleted) return;
    segment.pending--;
    this.pendingRecords--;
    if (segment.sealed && segment.pending === 0) {
      this.remove(segment);
      return;
    }
    if (segment === this.active && this.retireActiveIfSettled()) return;
    segment.unwrittenAcks.push(entry.index);
    if (!this.ackFlushScheduled) {
      this.ackFlushScheduled = true;
      // One write per segment for all records settled in the same turn (a whole upload's worth).
      queueMicrotask(() => this.flushAcks());
    }
  }

  /**
   * Retires the active segment when everything in it is delivered and nothing is being written:
   * a fresh segment starts rather than its bytes staying counted against the cap (and held on
   * disk) until it fills up, which a quiet proxy, or a full disk refusing every write, might never
   * do. Called when a record is settled and when a write ends, since a settle that arrives while
   * a write is going on cannot retire the segment itself.
   *
   * At once only when room is short (an append was refused for it, or less than a segment is
   * left under the cap); otherwise once the segment has stayed settled for `retireQuietMs`. A
   * proxy that is not saturated settles each request before the next arrives, and retiring at once
   * made every request of 64 KiB or more pay for a new file, its header, a close and an unlink:
   * 3x the CPU of the append itself (src/journal/README.md, "Cost of an append"). Returns whether
   * the segment was retired (its records need no `.acks` entry then).
   */
  private retireActiveIfSettled(): boolean {
    const segment = this.active;
    if (!segment || segment.pending !== 0 || segment.size < RETIRE_SETTLED_BYTES || this.writing !== 0) return false;
    if (this.starved || this.options.maxBytes - this.totalBytes - this.reservedBytes < this.segmentBytes) {
      void this.seal(segment);
      return true;
    }
    this.retireTimer ??= setTimeout(() => {
      this.retireTimer = undefined;
      // Appends since then that are still pending keep it; the next settle looks again.
      if (!this.closed && this.active === segment && segment.pending === 0 && this.writing === 0)
        void this.seal(segment);
    }, this.options.retireQuietMs ?? RETIRE_QUIET_MS).unref();
    return false;
  }

  /** Stops appends, closes the active segment (deleted if fully settled). Settling still works. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail;
    if (this.syncTimer) clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
    if (this.retireTimer) clearTimeout(this.retireTimer);
    this.retireTimer = undefined;
    await this.syncNow();
    if (this.active) await this.seal(this.active);
    this.active = undefined;
    this.flushAcks();
    for (const segment of this.segments.values()) closeAcks(segment);
    this.releaseLock();
  }

  private releaseLock(): void {
    this.lock?.release();
    this.lock = undefined;
  }

  private async write(buffers: Buffer[], bytes: number): Promise<JournalEntry> {
    if (this.active && this.active.size >= this.segmentBytes) await this.seal(this.active);
    const segment = this.active ?? (await this.createSegment());
    const file = segment.file!;
    let written = 0;
    try {
      // Written synchronously: a record goes to the page cache in one system call on this thread,
      // where handing it to the thread pool (FileHandle.writev) cost about twice the CPU of the copy
      // itself in promises, wake-ups and context switches (bench/pipeline/README.md). Appends still
      // run one after another behind `tail`, and a slow disk is only met by the periodic fdatasync.
      // A short write (a disk filling up) is not an error to the system call: check the count.
      written = writevSync(file.fd, buffers, segment.size);
      if (written !== bytes) throw new Error(`short write: ${written} of ${bytes} bytes (disk full?)`);
    } catch (error) {
      await this.discardTail(segment);
      throw new JournalWriteError(`writing the journal failed: ${(error as Error).message}`, { cause: error });
    }
    this.starved = false;
    const entry: JournalEntry = { segment, index: segment.records, offset: segment.size, bytes };
    segment.size += bytes;
    segment.records++;
    segment.pending++;
    this.totalBytes += bytes;
    this.pendingRecords++;
    return entry;
  }

  /** After a failed write, cuts the segment back to its last whole record, or gives up on it. */
  private async discardTail(segment: Segment): Promise<void> {
    try {
      await segment.file!.truncate(segment.size);
    } catch {
      // The torn tail stays; replay stops before it. Nothing more may be appended after it.
      await this.seal(segment);
    }
  }

  private async createSegment(): Promise<Segment> {
    const id = this.nextId++;
    const stem = String(id).padStart(ID_DIGITS, '0');
    const path = join(this.options.directory, `${stem}${SEGMENT_SUFFIX}`);
    const file = await open(path, 'wx', 0o600);
    try {
      const { bytesWritten } = await file.write(SEGMENT_MAGIC, 0, SEGMENT_MAGIC.length, 0);
      if (bytesWritten !== SEGMENT_MAGIC.length) throw new Error('short write of the segment header (disk full?)');
      if (this.options.fsyncIntervalMs > 0) await syncDirectory(this.options.directory);
    } catch (error) {
      await file.close().catch(() => undefined);
      await rm(path, { force: true });
      throw new JournalWriteError(`creating a journal segment failed: ${(error as Error).message}`, { cause: error });
    }
    const segment: Segment = {
      id,
      path,
      acksPath: join(this.options.directory, `${stem}${ACKS_SUFFIX}`),
      size: SEGMENT_MAGIC.length,
      records: 0,
      pending: 0,
      sealed: false,
      deleted: false,
      file,
      acked: new Set(),
      unwrittenAcks: [],
    };
    this.segments.set(id, segment);
    this.totalBytes += segment.size;
    this.active = segment;
    return segment;
  }

  private async seal(segment: Segment): Promise<void> {
    if (segment.sealed) return;
    segment.sealed = true;
    if (this.active === segment) this.active = undefined;
    const file = segment.file;
    segment.file = undefined;
    if (file) {
      // Appends waiting for a sync of this file are served before it closes.
      if (this.options.fsyncIntervalMs > 0) await this.syncNow(file);
      await file.close().catch(() => undefined);
    }
    if (segment.pending === 0) this.remove(segment);
  }

  private remove(segment: Segment): void {
    segment.deleted = true;
    segment.unwrittenAcks = [];
    closeAcks(segment);
    this.segments.delete(segment.id);
    this.totalBytes -= segment.size;
    deleteFiles(segment);
  }

  private flushAcks(): void {
    this.ackFlushScheduled = false;
    for (const segment of this.segments.values()) {
      if (segment.unwrittenAcks.length === 0) continue;
      const indices = segment.unwrittenAcks;
      segment.unwrittenAcks = [];
      const buffer = Buffer.allocUnsafe(indices.length * 4);
      for (let i = 0; i < indices.length; i++) buffer.writeUInt32LE(indices[i]!, i * 4);
      try {
        this.writeAcks(segment, buffer);
      } catch (error) {
        // Only costs duplicates: these records would be replayed after a restart.
        this.options.onBackgroundError?.(error, `writing ${segment.acksPath}`);
      }
    }
  }

  /**
   * Appends settled indices to the segment's `.acks` file. Synchronous and small: settling must work
   * during and after shutdown, in any order. The file stays open while the journal is: opening and
   * closing it for every write (`appendFileSync`) was 1.4 % of the proxy's CPU profile
   * (bench/pipeline/README.md). After `close()` each write opens and closes it, so that a closed
   * journal holds no descriptors.
   */
  private writeAcks(segment: Segment, buffer: Buffer): void {
    if (this.closed) {
      closeAcks(segment);
      appendFileSync(segment.acksPath, buffer, { mode: 0o600 });
      return;
    }
    segment.acksFd ??= openSync(segment.acksPath, 'a', 0o600);
    let written = 0;
    // A regular file takes the whole buffer unless the disk fills; then writeSync throws.
    while (written < buffer.length) written += writeSync(segment.acksFd, buffer, written);
  }

  /** Queues an acknowledgement behind the next sync, which runs at most `fsyncIntervalMs` from now. */
  private awaitSync(acknowledge: () => void): void {
    this.syncWaiters.push(acknowledge);
    this.syncTimer ??= setTimeout(() => {
      this.syncTimer = undefined;
      void this.syncNow();
    }, this.options.fsyncIntervalMs);
  }

  private async syncNow(file: FileHandle | undefined = this.active?.file): Promise<void> {
    const waiters = this.syncWaiters;
    if (waiters.length === 0) return;
    this.syncWaiters = [];
    try {
      await file?.datasync();
    } catch (error) {
      this.options.onBackgroundError?.(error, 'syncing the journal');
    }
    for (const resolve of waiters) resolve();
  }
}

/** Counts the whole records of a segment file; undefined when it is not a segment at all. */
async function scanSegment(path: string): Promise<{ size: number; records: number } | undefined> {
  const file = await open(path, 'r');
  try {
    const { size: fileSize } = await file.stat();
    const magic = Buffer.alloc(SEGMENT_MAGIC.length);
    const { bytesRead } = await file.read(magic, 0, magic.length, 0);
    if (bytesRead < magic.length) return fileSize === 0 ? { size: 0, records: 0 } : undefined;
    if (!magic.equals(SEGMENT_MAGIC)) return undefined;
    let offset = SEGMENT_MAGIC.length;
    let records = 0;
    const prefix = Buffer.alloc(RECORD_PREFIX_BYTES);
    while (offset + RECORD_PREFIX_BYTES <= fileSize) {
      await readExactly(file, prefix, offset);
      const end = offset + RECORD_PREFIX_BYTES + readPrefix(prefix).payloadLength;
      if (end > fileSize) break; // torn by a crash in mid-write
      records++;
      offset = end;
    }
    return { size: offset, records };
  } finally {
    await file.close();
  }
}

function readAcks(path: string, records: number): Set<number> {
  let buffer: Buffer;
  try {
    buffer = readFileSync(path);
  } catch {
    return new Set();
  }
  const acked = new Set<number>();
  // A torn last index (crash in mid-write) is ignored: that record is replayed once more.
  for (let offset = 0; offset + 4 <= buffer.length; offset += 4) {
    const index = buffer.readUInt32LE(offset);
    if (index < records) acked.add(index);
  }
  return acked;
}

async function readExactly(file: FileHandle, buffer: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buffer.length) {
    const { bytesRead } = await file.read(buffer, done, buffer.length - done, position + done);
    if (bytesRead === 0) throw new Error(`unexpected end of journal file at ${position + done}`);
    done += bytesRead;
  }
}

function closeAcks(segment: Segment): void {
  if (segment.acksFd === undefined) return;
  const fd = segment.acksFd;
  segment.acksFd = undefined;
  try {
    closeSync(fd);
  } catch {
    // Nothing is lost: every index was written before.
  }
}

function deleteFiles(segment: { path: string; acksPath: string }): void {
  rmSync(segment.path, { force: true });
  rmSync(segment.acksPath, { force: true });
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
