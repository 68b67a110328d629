// @ts-check
// The worker thread of `wal-checkpoints.ts`: a connection to each attached SQLite file and a passive
// checkpoint of each on every pass. Passes come every `activeMs` while a log grows and back off to
// `idleMs` when none does, so that an idle server's worker hardly wakes. A passive checkpoint never
// waits for a lock and never blocks the server's readers or writers: it copies what it can.
// Plain JavaScript (copied into dist/ as it is), so that it runs the same from dist/ and from the
// TypeScript sources.

import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { activeMs, idleMs } = /** @type {{activeMs: number, idleMs: number}} */ (workerData);
/** @type {Map<string, {db: import('better-sqlite3').Database, last: string}>} */
const files = new Map();
let delay = activeMs;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;

function pass() {
  timer = undefined;
  let written = false;
  for (const file of files.values()) {
    try {
      const [state] = /** @type {{log: number, checkpointed: number}[]} */ (file.db.pragma('wal_checkpoint(PASSIVE)'));
      // The log's length and how much of it is copied, unchanged since the last pass: nothing was written.
      const seen = `${state?.log}/${state?.checkpointed}`;
      if (seen !== file.last) written = true;
      file.last = seen;
    } catch {
      // Failing this time (the server's own connection reports real errors): the next pass retries.
      written = true;
    }
  }
  delay = written ? activeMs : Math.min(delay * 2, idleMs);
  if (files.size > 0) timer = setTimeout(pass, delay);
}

parentPort?.on('message', (/** @type {{attach: string} | {detach: string, closed: Int32Array}} */ message) => {
  if ('attach' in message) {
    if (!files.has(message.attach)) {
      try {
        files.set(message.attach, { db: new Database(message.attach, { fileMustExist: true }), last: '' });
      } catch {
        return; // gone already; the server's connection checkpoints by itself past its backstop
      }
    }
    delay = activeMs;
    if (timer === undefined) timer = setTimeout(pass, delay);
  } else {
    try {
      files.get(message.detach)?.db.close();
    } finally {
      files.delete(message.detach);
      // The server's connection, waiting for this, closes next.
      Atomics.store(message.closed, 0, 1);
      Atomics.notify(message.closed, 0);
    }
    // The last file gone: nothing keeps the worker's loop alive any more, so the worker ends.
    if (files.size === 0) {
      clearTimeout(timer);
      timer = undefined;
      parentPort?.close();
    }
  }
});
