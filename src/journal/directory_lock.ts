// An exclusive lock on a data directory (a receiver's journal, an exporter's on-disk queue), held
// by the one process that replays and deletes its files: two proxies, or a proxy and a sidecar,
// pointed at the same directory would otherwise replay each other's records and delete each
// other's files.
//
// Node has no flock(2); the lock is SQLite's (better-sqlite3, already a dependency): an exclusive
// transaction on a small database in the directory, in EXCLUSIVE locking mode, which holds a POSIX
// record lock on that file for as long as the connection is open. The kernel drops such a lock
// when its process ends however it ends, `kill -9` included, so there is no stale lock to judge:
// no pid that another PID namespace (a container) could not see or that was reused, no heartbeat
// to miss. It holds across processes of one kernel sharing the directory (a volume shared with a
// sidecar), and is refused within one process too. Network file systems honour it only as far as
// their lock service does.
//
// Beside it, a small JSON file names the holder (pid, host, since) for the error a second process
// gets. The lock file itself is never deleted: a process that opened it just before the deletion
// would lock a file that no longer has a name, while a third locked the new one.

import { hostname } from 'node:os';
import { chmodSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Database as SqliteDatabase } from 'better-sqlite3';

/** The lock's file in the directory (a SQLite database that holds nothing). */
export const LOCK_FILE = '.tracepipe-lock';
/** Who holds the lock, for the error of a process refused it. */
export const LOCK_OWNER_FILE = '.tracepipe-lock-owner';

/** What the owner file says. */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** ISO time the lock was taken. */
  readonly since: string;
}

/** Another process (or another component of this one) holds the directory. */
export class DirectoryLockedError extends Error {
  override readonly name = 'DirectoryLockedError';
  constructor(
    readonly directory: string,
    readonly holder: LockHolder | undefined,
    what: string,
  ) {
    const by = holder ? `process ${holder.pid} on ${holder.host} (since ${holder.since})` : 'another process';
    super(
      `The ${what} directory ${directory} is in use by ${by}: one process at a time may use it. ` +
        'Point this one at a directory of its own, or stop the other first.',
    );
  }
}

export class DirectoryLock {
  private constructor(
    readonly directory: string,
    private database: SqliteDatabase | undefined,
  ) {}

  /**
   * Takes the lock on `directory` (which must exist), or throws DirectoryLockedError at once.
   * `what` names the directory's use in that error ("journal", "on-disk queue").
   */
  static acquire(directory: string, what: string): DirectoryLock {
    const path = join(directory, LOCK_FILE);
    // `timeout: 0`: refused at once rather than after SQLite's busy wait.
    const database = new Database(path, { timeout: 0 });
    try {
      // Nothing is written: no rollback journal file beside it (OFF is not taken by an empty database).
      database.pragma('journal_mode = MEMORY');
      database.pragma('locking_mode = EXCLUSIVE');
      database.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      database.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') {
        throw new DirectoryLockedError(directory, readHolder(directory), what);
      }
      throw error;
    }
    chmodSync(path, 0o600);
    const holder: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
    writeFileSync(join(directory, LOCK_OWNER_FILE), `${JSON.stringify(holder)}\n`, { mode: 0o600 });
    return new DirectoryLock(directory, database);
  }

  /**
   * Removes the directory, which must hold nothing but the lock's files; false when something else
   * is left there. The lock is given up either way; its file goes while it is still held, so no
   * other process can have locked it.
   */
  removeDirectory(): boolean {
    if (!this.database) return false;
    try {
      rmSync(join(this.directory, LOCK_OWNER_FILE), { force: true });
      rmSync(join(this.directory, LOCK_FILE), { force: true });
      rmdirSync(this.directory);
    } catch {
      return false; // Not empty (a dead-letter file, say): the next open makes a new lock file.
    } finally {
      this.release();
    }
    return true;
  }

  /** Gives the directory up (the owner file goes; the lock file stays, see above). Idempotent. */
  release(): void {
    if (!this.database) return;
    rmSync(join(this.directory, LOCK_OWNER_FILE), { force: true });
    this.database.close(); // Ends the transaction: the lock is released with the connection.
    this.database = undefined;
  }
}

/** The holder the owner file names, if it can be read (it may be missing or half-written). */
function readHolder(directory: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(join(directory, LOCK_OWNER_FILE), 'utf8')) as Partial<LockHolder>;
    if (typeof holder.pid !== 'number' || typeof holder.host !== 'string') return undefined;
    return { pid: holder.pid, host: holder.host, since: String(holder.since) };
  } catch {
    return undefined;
  }
}
