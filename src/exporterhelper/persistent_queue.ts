// The on-disk queue that holds batches an exporter could not send, so that nothing is lost when
// the destination is down longer than the retries last, at shutdown, or across a crash.
//
// One file per batch: `TPQ1`, a 4-byte header length, a JSON header, then the body as it goes on
// the wire (already compressed). Files are written to a temporary name, fsynced, renamed and the
// directory fsynced, so a `kill -9` leaves either the whole batch or no batch, never half of one.
// Names start with a zero-padded timestamp and sequence number, so a directory listing is the
// oldest-first replay order. A batch leaves the queue only when its owner removes it (after a 2xx),
// or when the size cap forces the oldest out — which the owner is told about, to count and log.
// The directory is locked from `open` to `close` (src/journal/directory_lock.ts): one process at a
// time replays and deletes its files.

import { closeSync, fsyncSync, openSync } from 'node:fs';
import { appendFile, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DirectoryLock } from '../journal/directory_lock.ts';

const MAGIC = Buffer.from('TPQ1');
const SUFFIX = '.batch';
const TEMP_SUFFIX = '.tmp';
const DEAD_LETTER_FILE = 'dead-letter.jsonl';

/** The `persistent_queue` block, as exporters' configs spell it. */
export interface PersistentQueueConfig {
  readonly enabled: boolean;
  /** Directory of the queue files (relative to the config file). */
  readonly directory: string;
  /** Cap on the bytes the queue may hold; the oldest batches go first when it is reached. */
  readonly max_bytes: number;
  /** How often queued batches are retried while the destination is not known to be back. */
  readonly replay_interval_ms: number;
}

/** What every stored batch's header carries; exporters add their own fields. */
export interface StoredHeader {
  /** Items (runs or spans) in the batch: what a drop would lose. */
  readonly items: number;
}

export interface StoredBatch<H extends StoredHeader> {
  /** The file name: unique, and ordered by age. */
  readonly name: string;
  readonly header: H;
  readonly bytes: number;
  /** Epoch ms when the batch was stored. */
  readonly storedAt: number;
}

/** A queue file that cannot be read back; it is set aside as `<name>.corrupt`. */
export class CorruptBatchError extends Error {
  override readonly name = 'CorruptBatchError';
}

export class PersistentQueue<H extends StoredHeader> {
  private readonly entries: StoredBatch<H>[] = [];
  private totalBytes = 0;
  private totalItems = 0;
  private sequence = 0;
  private writes: Promise<void> = Promise.resolve();
  private opened = false;
  private lock?: DirectoryLock;

  constructor(
    readonly directory: string,
    private readonly maxBytes: number,
  ) {}

  /**
   * Creates and locks the directory (DirectoryLockedError when another process holds it) and
   * indexes the batches left by an earlier run; removes temporary files of writes that a crash
   * interrupted (they were never acknowledged as stored). Returns the files that could not be read
   * (already set aside). Idempotent: later calls return [].
   */
  async open(): Promise<string[]> {
    if (this.opened) return [];
    this.opened = true;
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    this.lock = DirectoryLock.acquire(this.directory, 'on-disk queue');
    try {
      return await this.index();
    } catch (error) {
      this.lock.release();
      this.lock = undefined;
      throw error;
    }
  }

  /** Once nothing more is written: waits for writes under way and releases the directory's lock. */
  async close(): Promise<void> {
    await this.writes.catch(() => undefined);
    this.lock?.release();
    this.lock = undefined;
  }

  /**
   * Once the queue holds no batch: closes it and removes its directory, unless something else is
   * left there (a dead-letter file, for the operator). Returns whether the directory went.
   */
  async removeIfEmpty(): Promise<boolean> {
    await this.writes.catch(() => undefined);
    if (this.entries.length > 0 || !this.lock) return false;
    const removed = this.lock.removeDirectory();
    this.lock = undefined;
    return removed;
  }

  private async index(): Promise<string[]> {
    const corrupt: string[] = [];
    const names = (await readdir(this.directory)).sort();
    for (const name of names) {
      const path = join(this.directory, name);
      if (name.endsWith(TEMP_SUFFIX)) {
        await rm(path, { force: true });
        continue;
      }
      if (!name.endsWith(SUFFIX)) continue;
      try {
        const header = await this.readHeader(path);
        const { size } = await stat(path);
        this.entries.push({ name, header, bytes: size, storedAt: storedAtOf(name) });
        this.totalBytes += size;
        this.totalItems += header.items;
      } catch {
        await rename(path, `${path}.corrupt`).catch(() => undefined);
        corrupt.push(name);
      }
    }
    return corrupt;
  }

  get depth(): number {
    return this.entries.length;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** Items (the headers' counts) of every stored batch. */
  get items(): number {
    return this.totalItems;
  }

  /** Seconds since the oldest batch was stored; 0 when empty. */
  oldestAgeSeconds(now = Date.now()): number {
    const oldest = this.entries[0];
    return oldest ? Math.max(0, (now - oldest.storedAt) / 1000) : 0;
  }

  /** The stored batches, oldest first (a snapshot). */
  list(): StoredBatch<H>[] {
    return [...this.entries];
  }

  /**
   * Stores a batch durably. To stay under the cap, the oldest batches are removed first and
   * returned, so the caller can count and log what was lost; a batch larger than the whole cap is
   * not stored and comes back as the only element.
   */
  put(header: H, body: Uint8Array): Promise<{ stored?: StoredBatch<H>; evicted: StoredBatch<H>[] }> {
    // Writers take turns, so that the cap check and the write of one batch are not interleaved
    // with another's (concurrent uploads fail together when the destination goes down).
    const turn = this.writes.then(() => this.putNow(header, body));
    this.writes = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  private async putNow(header: H, body: Uint8Array): Promise<{ stored?: StoredBatch<H>; evicted: StoredBatch<H>[] }> {
    await this.open(); // A batch may have to be kept before the owner started (then shut down).
    const headerBytes = Buffer.from(JSON.stringify(header));
    const prefix = Buffer.alloc(MAGIC.length + 4);
    MAGIC.copy(prefix);
    prefix.writeUInt32BE(headerBytes.length, MAGIC.length);
    const size = prefix.length + headerBytes.length + body.byteLength;
    const now = Date.now();
    const name = `${String(now).padStart(15, '0')}-${String(this.sequence++).padStart(9, '0')}-${randomBytes(4).toString('hex')}${SUFFIX}`;
    if (size > this.maxBytes) return { evicted: [{ name, header, bytes: size, storedAt: now }] };
    const evicted: StoredBatch<H>[] = [];
    while (this.totalBytes + size > this.maxBytes && this.entries.length > 0) {
      const oldest = this.entries[0]!;
      await this.remove(oldest);
      evicted.push(oldest);
    }
    const path = join(this.directory, name);
    const temp = path + TEMP_SUFFIX;
    try {
      const handle = await open(temp, 'w', 0o600);
      try {
        // A disk filling up can write part of the batch without an error: only a complete,
        // synced file may be renamed into the queue (a truncated batch would be "stored" and lost).
        const { bytesWritten } = await handle.writev([
          prefix,
          headerBytes,
          Buffer.from(body.buffer, body.byteOffset, body.byteLength),
        ]);
        if (bytesWritten !== size) throw new Error(`short write: ${bytesWritten} of ${size} bytes (disk full?)`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => undefined);
      throw error;
    }
    syncDirectory(this.directory);
    const stored = { name, header, bytes: size, storedAt: now };
    this.entries.push(stored);
    this.totalBytes += size;
    this.totalItems += header.items;
    return { stored, evicted };
  }

  /**
   * Reads a stored batch's body; undefined when the batch was removed meanwhile (evicted by the
   * cap). Throws CorruptBatchError (after setting the file aside) when it cannot be read.
   */
  async read(entry: StoredBatch<H>): Promise<Buffer | undefined> {
    const path = join(this.directory, entry.name);
    if (!this.entries.some((candidate) => candidate.name === entry.name)) return undefined;
    try {
      const data = await readFile(path);
      const headerLength = checkPrefix(data);
      return data.subarray(MAGIC.length + 4 + headerLength);
    } catch (error) {
      if (!this.entries.some((candidate) => candidate.name === entry.name)) return undefined;
      await rename(path, `${path}.corrupt`).catch(() => undefined);
      this.forget(entry);
      throw new CorruptBatchError(`queued batch ${entry.name} cannot be read`, { cause: error });
    }
  }

  /** Deletes a batch (after its destination accepted it). Idempotent. */
  async remove(entry: StoredBatch<H>): Promise<void> {
    if (!this.forget(entry)) return;
    await rm(join(this.directory, entry.name), { force: true });
  }

  /** Appends one record to the queue directory's dead-letter file (JSON lines), durably. */
  async deadLetter(record: Record<string, unknown>): Promise<void> {
    const path = join(this.directory, DEAD_LETTER_FILE);
    await appendFile(path, JSON.stringify(record) + '\n', { mode: 0o600 });
  }

  get deadLetterPath(): string {
    return join(this.directory, DEAD_LETTER_FILE);
  }

  private forget(entry: StoredBatch<H>): boolean {
    const index = this.entries.findIndex((candidate) => candidate.name === entry.name);
    if (index < 0) return false;
    this.entries.splice(index, 1);
    this.totalBytes -= entry.bytes;
    this.totalItems -= entry.header.items;
    return true;
  }

  private async readHeader(path: string): Promise<H> {
    const handle = await open(path, 'r');
    try {
      const prefix = Buffer.alloc(MAGIC.length + 4);
      await handle.read(prefix, 0, prefix.length, 0);
      const headerLength = checkPrefix(prefix);
      const headerBytes = Buffer.alloc(headerLength);
      const { bytesRead } = await handle.read(headerBytes, 0, headerLength, prefix.length);
      if (bytesRead !== headerLength) throw new CorruptBatchError('truncated header');
      const header = JSON.parse(headerBytes.toString('utf8')) as H;
      if (typeof header?.items !== 'number') throw new CorruptBatchError('header without items');
      return header;
    } finally {
      await handle.close();
    }
  }
}

function checkPrefix(data: Buffer): number {
  if (data.length < MAGIC.length + 4 || !data.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new CorruptBatchError('not a queue file');
  }
  const headerLength = data.readUInt32BE(MAGIC.length);
  if (headerLength > 1 << 20) throw new CorruptBatchError('header too large');
  return headerLength;
}

function storedAtOf(name: string): number {
  const stamp = Number(name.slice(0, name.indexOf('-')));
  return Number.isFinite(stamp) ? stamp : Date.now();
}

// A rename is durable only once the directory entry is on disk too.
function syncDirectory(directory: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(directory, 'r');
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on directories; the file itself is already synced.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

// Exported for tests that simulate a crash in the middle of a write.
export const queueFileSuffixes = { batch: SUFFIX, temp: TEMP_SUFFIX } as const;
