import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, readlink, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { DirectoryLock } from './directory_lock.ts';
import { DirectoryLockedError } from './directory_lock.ts';
import type { JournalEntry, JournalOptions, ReplayedRecord } from './journal.ts';
import { Journal, JournalClosedError, JournalFullError, JournalRecordTooLargeError } from './journal.ts';

const directories: string[] = [];
after(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

async function freshDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'tp-journal-'));
  directories.push(directory);
  return directory;
}

function options(directory: string, overrides: Partial<JournalOptions> = {}): JournalOptions {
  return { directory, maxBytes: 1 << 30, segmentBytes: 1 << 20, fsyncIntervalMs: 0, ...overrides };
}

async function opened(directory: string, overrides: Partial<JournalOptions> = {}): Promise<Journal<{ n: number }>> {
  const journal = new Journal<{ n: number }>(options(directory, overrides));
  await journal.open();
  return journal;
}

async function replayAll(journal: Journal<{ n: number }>): Promise<ReplayedRecord<{ n: number }>[]> {
  const records: ReplayedRecord<{ n: number }>[] = [];
  for await (const record of journal.replay()) records.push(record);
  return records;
}

/** Files of `directory` that this process holds open (Linux: /proc/self/fd). */
async function openFilesIn(directory: string): Promise<string[]> {
  const targets = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  return targets.filter((target) => target.startsWith(`${directory}/`)).sort();
}

/**
 * What `kill -9` does to a journal in this process: the kernel drops its directory lock, its files
 * stay as they are (no close), and a restart may open the directory.
 */
function crash(journal: Journal<{ n: number }>): void {
  (journal as unknown as { lock?: DirectoryLock }).lock?.release();
}

/** A directory's files, without the lock's own (directory_lock.ts). */
async function journalFiles(directory: string): Promise<string[]> {
  return (await readdir(directory)).filter((name) => !name.startsWith('.tracepipe-lock')).sort();
}

function numbers(records: ReplayedRecord<{ n: number }>[]): number[] {
  return records.map((record) => ('header' in record ? record.header.n : -1));
}

describe('journal', () => {
  it('refuses a second journal on its directory, naming the directory and the holder, until it closes', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory);
    await assert.rejects(opened(directory), (error: unknown) => {
      assert.ok(error instanceof DirectoryLockedError);
      assert.equal(error.directory, directory);
      assert.equal(error.holder?.pid, process.pid);
      assert.match(error.message, new RegExp(`journal directory ${directory} is in use by process ${process.pid} on `));
      return true;
    });
    await journal.close();
    const next = await opened(directory);
    await next.close();
  });

  it('replays, after a restart, exactly the records that were not settled, in order, with their bodies', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory);
    const entries: JournalEntry[] = [];
    for (let n = 0; n < 10; n++) entries.push(await journal.append({ n }, Buffer.from(`body ${n}`)));
    for (const n of [0, 2, 3, 9]) journal.settle(entries[n]!);
    // No close: a crash leaves the files as they are.
    await new Promise((resolve) => setImmediate(resolve));
    crash(journal);

    const restarted = await opened(directory);
    const records = await replayAll(restarted);
    assert.deepEqual(numbers(records), [1, 4, 5, 6, 7, 8]);
    const first = records[0]!;
    assert.ok('body' in first);
    assert.equal(first.body.toString(), 'body 1');
    assert.equal(restarted.stats().pendingRecords, 6);
  });

  it('deletes a segment once it is full and all its records are settled', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory, { segmentBytes: 4096 });
    const body = Buffer.alloc(1500, 7);
    const entries: JournalEntry[] = [];
    for (let n = 0; n < 9; n++) entries.push(await journal.append({ n }, body));
    const segmentsBefore = (await readdir(directory)).filter((name) => name.endsWith('.journal'));
    assert.ok(segmentsBefore.length >= 3, `expected several segments, got ${segmentsBefore.join(', ')}`);
    for (const entry of entries.slice(0, 6)) journal.settle(entry);
    const segmentsAfter = (await readdir(directory)).filter((name) => name.endsWith('.journal'));
    assert.ok(segmentsAfter.length < segmentsBefore.length);
    assert.ok(!segmentsAfter.includes(segmentsBefore[0]!), 'the first, fully settled segment is gone');
    const bytesBefore = journal.stats().bytes;
    for (const entry of entries.slice(6)) journal.settle(entry);
    await journal.close();
    assert.deepEqual(
      (await readdir(directory)).filter((name) => name.endsWith('.journal')),
      [],
    );
    assert.ok(journal.stats().bytes < bytesBefore);
  });

  it('ignores a record torn by a crash in mid-write and replays the whole ones before it', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory);
    for (let n = 0; n < 3; n++) await journal.append({ n }, Buffer.alloc(100, n));
    const [segment] = (await readdir(directory)).filter((name) => name.endsWith('.journal'));
    const path = join(directory, segment!);
    const size = (await readFile(path)).length;
    await truncate(path, size - 30);
    crash(journal);
    const restarted = await opened(directory);
    assert.deepEqual(numbers(await replayAll(restarted)), [0, 1]);
  });

  it('reports a damaged record as corrupt and still replays the records after it', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory);
    for (let n = 0; n < 3; n++) await journal.append({ n }, Buffer.alloc(100, n));
    const [segment] = (await readdir(directory)).filter((name) => name.endsWith('.journal'));
    const path = join(directory, segment!);
    const bytes = await readFile(path);
    // The second record's body: magic (4) + first record (8 + 4 + 7 + 100) + its prefix and header.
    bytes[4 + 119 + 8 + 4 + 7 + 50]! ^= 0xff;
    await writeFile(path, bytes);
    crash(journal);
    const records = await replayAll(await opened(directory));
    assert.deepEqual(numbers(records), [0, -1, 2]);
    assert.ok('corrupt' in records[1]! && /checksum/.test(records[1].corrupt));
  });

  it('sets aside a file that is not a journal segment instead of failing to start', async () => {
    const directory = await freshDirectory();
    await writeFile(join(directory, '000000000001.journal'), 'not a journal at all');
    const journal = new Journal(options(directory));
    const found = await journal.open();
    assert.deepEqual(found.corruptFiles, ['000000000001.journal']);
    assert.ok((await readdir(directory)).includes('000000000001.journal.corrupt'));
    await journal.append({ n: 1 }, Buffer.from('x'));
  });

  it('refuses an append past its cap, and a record that could never fit, without writing anything', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory, { maxBytes: 70_000 });
    const body = Buffer.alloc(20_000);
    const first = await journal.append({ n: 0 }, body);
    await journal.append({ n: 1 }, body);
    await journal.append({ n: 2 }, body);
    await assert.rejects(journal.append({ n: 3 }, body), JournalFullError);
    await assert.rejects(journal.append({ n: 4 }, Buffer.alloc(80_000)), JournalRecordTooLargeError);
    // Room again once something settles and its segment goes (one record per segment here).
    const small = await opened(await freshDirectory(), { maxBytes: 70_000, segmentBytes: 4096 });
    const entries = [
      await small.append({ n: 0 }, body),
      await small.append({ n: 1 }, body),
      await small.append({ n: 2 }, body),
    ];
    await assert.rejects(small.append({ n: 3 }, body), JournalFullError);
    small.settle(entries[0]!);
    await small.append({ n: 3 }, body);
    assert.ok(first);
  });

  it('frees the room of settled requests even when the active segment never fills (a cap below segment_bytes)', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory, { maxBytes: 400_000, segmentBytes: 16 << 20 });
    const body = Buffer.alloc(90_000);
    for (let round = 0; round < 10; round++) {
      // Four requests fill the cap; once delivered, their room must come back.
      const entries = [];
      for (let n = 0; n < 4; n++) entries.push(await journal.append({ n }, body));
      for (const entry of entries) journal.settle(entry);
    }
    assert.ok(journal.stats().bytes < 400_000);
    await journal.close();
  });

  it('keeps appending to a settled active segment while room is plenty, and retires it once quiet', async () => {
    const directory = await freshDirectory();
    // Requests settled one by one before the next arrives, as a proxy that keeps up settles them.
    const journal = await opened(directory, { retireQuietMs: 60_000 });
    const body = Buffer.alloc(100_000);
    for (let n = 0; n < 5; n++) journal.settle(await journal.append({ n }, body));
    await new Promise((resolve) => setImmediate(resolve));
    // One segment for all of them, rather than a file made and deleted per request.
    assert.deepEqual(await journalFiles(directory), ['000000000001.acks', '000000000001.journal']);
    assert.equal(journal.stats().pendingRecords, 0);
    // Settled is settled, although the segment is still there: a restart replays none of them.
    crash(journal);
    const restarted = await opened(directory);
    assert.deepEqual(await replayAll(restarted), []);
    await restarted.close();

    const quiet = await opened(await freshDirectory(), { retireQuietMs: 20 });
    for (let n = 0; n < 3; n++) quiet.settle(await quiet.append({ n }, body));
    for (let i = 0; i < 200 && quiet.stats().bytes > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(quiet.stats(), { bytes: 0, segments: 0, pendingRecords: 0 });
    assert.deepEqual(await journalFiles(quiet.directory), []);
    await quiet.close();
    await journal.close();
  });

  it('retires a settled active segment at once when an append was refused for want of room', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory, { maxBytes: 1 << 20, segmentBytes: 1 << 20, retireQuietMs: 60_000 });
    const body = Buffer.alloc(100_000);
    const entries: JournalEntry[] = [];
    for (;;) {
      try {
        entries.push(await journal.append({ n: entries.length }, body));
      } catch (error) {
        assert.ok(error instanceof JournalFullError);
        break;
      }
    }
    for (const entry of entries) journal.settle(entry);
    // Closing the retired segment takes a turn of the thread pool; the quiet delay is a minute.
    for (let i = 0; i < 200 && journal.stats().bytes > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(journal.stats().bytes, 0);
    await journal.append({ n: 0 }, body);
    await journal.close();
  });

  it('with an fsync interval, acknowledges appends once a sync covered them (group commit)', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory, { fsyncIntervalMs: 5 });
    const entries = await Promise.all(
      Array.from({ length: 20 }, (_, n) => journal.append({ n }, Buffer.from(String(n)))),
    );
    assert.equal(entries.length, 20);
    await journal.close();
    assert.deepEqual(
      numbers(await replayAll(await opened(directory))),
      Array.from({ length: 20 }, (_, n) => n),
    );
  });

  it('keeps settling after close (delivery finishes after receivers stop), and refuses appends', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory);
    const a = await journal.append({ n: 0 }, Buffer.from('a'));
    const b = await journal.append({ n: 1 }, Buffer.from('b'));
    await journal.close();
    await assert.rejects(journal.append({ n: 2 }, Buffer.from('c')), JournalClosedError);
    journal.settle(a);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(numbers(await replayAll(await opened(directory))), [1]);
    journal.settle(b);
    assert.deepEqual(
      (await readdir(directory)).filter((name) => name.endsWith('.journal')),
      [],
    );
  });

  it('records settlements of many turns through one open .acks file, and closes it with the journal', async () => {
    const directory = await freshDirectory();
    const journal = await opened(directory);
    const entries: JournalEntry[] = [];
    for (let n = 0; n < 6; n++) entries.push(await journal.append({ n }, Buffer.from(`body ${n}`)));
    for (const n of [0, 2, 4]) {
      journal.settle(entries[n]!);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const acks = (await openFilesIn(directory)).filter((path) => path.endsWith('.acks'));
    assert.equal(acks.length, 1, 'one descriptor for the .acks file, kept between writes');
    await journal.close();
    assert.deepEqual(await openFilesIn(directory), []);
    journal.settle(entries[5]!);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(await openFilesIn(directory), [], 'a settlement after close opens and closes the file');
    assert.deepEqual(numbers(await replayAll(await opened(directory))), [1, 3]);
  });
});
