// Checkpoints of the SQLite files' write-ahead logs, run on a worker thread of their own
// (`wal-checkpoint-worker.mjs`).
//
// In WAL mode a commit appends the pages it changed to the log, and by default the connection
// whose commit takes the log past 1,000 pages then copies the log back into the database file and
// syncs both (an automatic checkpoint). A run writes ~75 pages to `agent.sqlite` and about as many
// to `checkpoints.sqlite` (its rows and every index entry they touch), so about one commit in 13
// paid for a checkpoint on the event loop: 1.6 ms of CPU and several more of waiting for the disk
// (bench/agent/README.md). Here a worker thread holds a second connection to each file and runs
// passive checkpoints on it, which never block the server's readers or writers; the server's own
// connections checkpoint only if the worker falls far behind (`BACKSTOP_PAGES`).

import { Worker } from 'node:worker_threads';
import type { Database as SqliteDatabase } from 'better-sqlite3';

/**
 * The log size (pages) at which a server connection checkpoints by itself, as SQLite does by
 * default at 1,000: reached only when the worker cannot keep up or has failed, so that the log
 * stays bounded whatever happens to it (40 MB of 4-KB pages).
 */
export const BACKSTOP_PAGES = 10_000;

/** How often the worker checkpoints while the files are written to, and at most when they are not. */
const ACTIVE_INTERVAL_MS = 100;
const IDLE_INTERVAL_MS = 1600;

/**
 * How long closing a file waits for the worker to close its connection first: a pass in progress
 * (a passive checkpoint) or a worker still starting. Past it the file closes anyway, as before.
 */
const DETACH_WAIT_MS = 2000;

/** The process's checkpoint worker and the files attached to it, each with its number of connections. */
class BackgroundCheckpoints {
  private worker: Worker | undefined;
  private readonly attached = new Map<string, number>();

  /**
   * Has the worker checkpoint the WAL file at `path`, which `db` (a server connection to it) then
   * checkpoints only past `BACKSTOP_PAGES`. Returns the detach, to call before `db` closes.
   */
  attach(db: SqliteDatabase, path: string): () => void {
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    const count = this.attached.get(path) ?? 0;
    this.attached.set(path, count + 1);
    if (count === 0) this.start().postMessage({ attach: path });
    let detached = false;
    return () => {
      if (detached) return;
      detached = true;
      const left = this.attached.get(path)! - 1;
      if (left > 0) {
        this.attached.set(path, left);
        return;
      }
      this.attached.delete(path);
      const worker = this.worker;
      // It closes its connection to that file, and when it was the last it ends by itself; a later
      // attach starts another.
      if (this.attached.size === 0) this.worker = undefined;
      if (!worker) return;
      // Waited for, so that the server's connection, closed next, is the file's last: SQLite then
      // checkpoints the log and removes the -wal and -shm files, and a stopped server leaves its
      // files settled rather than closed later by the worker, or at exit as after a crash.
      const closed = new Int32Array(new SharedArrayBuffer(4));
      worker.postMessage({ detach: path, closed });
      Atomics.wait(closed, 0, 0, DETACH_WAIT_MS);
    };
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./wal-checkpoint-worker.mjs', import.meta.url), {
      workerData: { activeMs: ACTIVE_INTERVAL_MS, idleMs: IDLE_INTERVAL_MS },
    });
    // It never keeps the process alive: at exit its connections go as a crash's would, which WAL
    // files survive.
    worker.unref();
    worker.on('error', () => {
      // Its files are then checkpointed by the server's connections past the backstop.
      if (this.worker === worker) this.worker = undefined;
    });
    this.worker = worker;
    return worker;
  }

  /** The running worker, if any (for tests). */
  get current(): Worker | undefined {
    return this.worker;
  }
}

export const backgroundCheckpoints = new BackgroundCheckpoints();
