// The WAL checkpoints on a worker thread: a file's log is copied back into the file by the worker,
// not by the server's connection, and the worker lives exactly as long as a file is attached.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { tempDir } from 'tracepipe/testing';
import { openSqliteFile } from './sqlite-file.ts';
import { BACKSTOP_PAGES, backgroundCheckpoints } from './wal-checkpoints.ts';

const ROWS = 300;
const ROW_BYTES = 8192;

describe('WAL checkpoints on a worker thread', () => {
  const dir = tempDir('agent-api-wal-');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("copies a file's log back into the file while the server's connection leaves it to the worker, and closes before it", async () => {
    const path = join(dir, 'written.sqlite');
    const file = openSqliteFile(path);
    try {
      assert.equal(file.db.pragma('wal_autocheckpoint', { simple: true }), BACKSTOP_PAGES);
      file.db.exec('CREATE TABLE items (body BLOB)');
      const insert = file.db.prepare('INSERT INTO items (body) VALUES (randomblob(?))');
      // One commit each, ~600 pages in all: below the backstop, so only the worker copies them.
      for (let i = 0; i < ROWS; i++) insert.run(ROW_BYTES);
      const written = ROWS * ROW_BYTES;
      while (statSync(path).size < written) await sleep(20);
      assert.equal((file.db.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n, ROWS);
    } finally {
      file.close();
    }
    // The worker's connection closed first, so the server's was the last: as SQLite's last
    // connection does, it copied the log back and removed -wal and -shm (a stopped server's files
    // are settled, not closed later by the worker or at exit as after a crash).
    assert.deepEqual([existsSync(`${path}-wal`), existsSync(`${path}-shm`)], [false, false]);
  });

  it('runs while a file is attached, ends when the last closes, and starts again for the next', async () => {
    const first = openSqliteFile(join(dir, 'first.sqlite'));
    const again = openSqliteFile(join(dir, 'first.sqlite'));
    const second = openSqliteFile(join(dir, 'second.sqlite'));
    const worker = backgroundCheckpoints.current;
    assert.ok(worker, 'a worker runs once a file is open');
    const exited = once(worker, 'exit');
    // Unreferenced, it would not keep this test's process alive until it exits.
    worker.ref();
    first.close();
    second.close();
    assert.equal(backgroundCheckpoints.current, worker, 'one connection to first.sqlite is still open');
    again.close();
    assert.equal(backgroundCheckpoints.current, undefined);
    await exited;

    const memory = openSqliteFile(':memory:');
    assert.equal(backgroundCheckpoints.current, undefined, 'an in-memory database has no log to checkpoint');
    memory.close();

    const later = openSqliteFile(join(dir, 'later.sqlite'));
    try {
      assert.ok(backgroundCheckpoints.current);
      assert.notEqual(backgroundCheckpoints.current, worker);
    } finally {
      later.close();
    }
  });
});
