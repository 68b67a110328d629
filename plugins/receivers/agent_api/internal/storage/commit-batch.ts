// Writes to one SQLite connection gathered into one transaction per turn of the event loop.
//
// In WAL mode each commit appends every page it changed to the log, one system call per page
// header and page, and a run's checkpointer makes five or six of them (three checkpoints, two or
// three tasks' writes), each touching the same table and index pages again. Queued here, the
// writes of every run under way at that moment share one commit. A caller's promise settles once
// its write is committed, as when it wrote alone; if the shared transaction fails, each write is
// retried alone, so that only the failing one's caller sees the error.

import type { Database as SqliteDatabase } from 'better-sqlite3';

interface Queued {
  readonly write: () => void;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class CommitBatch {
  private queued: Queued[] = [];
  private scheduled = false;

  constructor(private readonly db: SqliteDatabase) {}

  /** Runs `write` (synchronous statements) in the next shared transaction; resolves once it is committed. */
  commit(write: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ write, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      // After the I/O callbacks and promise jobs of this turn: the other runs' writes join.
      setImmediate(() => this.flush());
    });
  }

  /** Commits what is queued now (also before the connection closes). */
  flush(): void {
    this.scheduled = false;
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    try {
      this.db.transaction(() => {
        for (const item of batch) item.write();
      })();
    } catch {
      for (const item of batch) {
        try {
          this.db.transaction(item.write)();
          item.resolve();
        } catch (error) {
          item.reject(error);
        }
      }
      return;
    }
    for (const item of batch) item.resolve();
  }
}
