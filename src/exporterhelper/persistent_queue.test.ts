import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { DirectoryLockedError } from '../journal/directory_lock.ts';
import { CorruptBatchError, PersistentQueue } from './persistent_queue.ts';

interface Header {
  items: number;
  tag: string;
}

describe('PersistentQueue', () => {
  let directory: string;
  beforeEach(async () => {
    directory = join(await mkdtemp(join(tmpdir(), 'tp-pq-')), 'queue');
  });
  afterEach(async () => {
    await rm(join(directory, '..'), { recursive: true, force: true });
  });

  it('stores batches durably and lists them oldest first after a reopen', async () => {
    const queue = new PersistentQueue<Header>(directory, 1 << 20);
    await queue.open();
    for (const tag of ['a', 'b', 'c']) await queue.put({ items: 1, tag }, Buffer.from(`body-${tag}`));
    await queue.close();
    const reopened = new PersistentQueue<Header>(directory, 1 << 20);
    assert.deepEqual(await reopened.open(), []);
    const entries = reopened.list();
    assert.deepEqual(
      entries.map((entry) => entry.header.tag),
      ['a', 'b', 'c'],
    );
    assert.equal((await reopened.read(entries[1]!))!.toString(), 'body-b');
    assert.equal(reopened.bytes, queue.bytes);
    await reopened.remove(entries[0]!);
    await reopened.remove(entries[0]!); // idempotent
    assert.equal(await reopened.read(entries[0]!), undefined);
    assert.equal(reopened.depth, 2);
    assert.equal((await readdir(directory)).filter((name) => name.endsWith('.batch')).length, 2);
  });

  it('refuses to open a directory another queue holds, naming it and the holder, until that one closes', async () => {
    const queue = new PersistentQueue<Header>(directory, 1 << 20);
    await queue.open();
    const second = new PersistentQueue<Header>(directory, 1 << 20);
    await assert.rejects(second.open(), (error: unknown) => {
      assert.ok(error instanceof DirectoryLockedError);
      assert.ok(error.message.includes(`on-disk queue directory ${directory} is in use by process ${process.pid}`));
      return true;
    });
    await queue.close();
    const third = new PersistentQueue<Header>(directory, 1 << 20);
    assert.deepEqual(await third.open(), []);
    await third.close();
  });

  it('removes its directory once empty, lock files and all, but keeps one with a dead-letter file', async () => {
    const queue = new PersistentQueue<Header>(directory, 1 << 20);
    await queue.open();
    const { stored } = await queue.put({ items: 1, tag: 'a' }, Buffer.from('a'));
    assert.equal(await queue.removeIfEmpty(), false); // a batch is still queued
    await queue.remove(stored!);
    assert.equal(await queue.removeIfEmpty(), true);
    await assert.rejects(readdir(directory), /ENOENT/);

    const kept = new PersistentQueue<Header>(directory, 1 << 20);
    await kept.open();
    await kept.deadLetter({ run: 1 });
    assert.equal(await kept.removeIfEmpty(), false);
    assert.deepEqual(await readdir(directory), ['dead-letter.jsonl']);
    const reopened = new PersistentQueue<Header>(directory, 1 << 20); // the lock was given up
    await reopened.open();
    await reopened.close();
  });

  it('evicts the oldest batches to stay under the cap, and returns them', async () => {
    const queue = new PersistentQueue<Header>(directory, 200);
    await queue.open();
    const body = Buffer.alloc(60, 1);
    const evicted: string[] = [];
    for (const tag of ['a', 'b', 'c', 'd']) {
      const result = await queue.put({ items: 2, tag }, body);
      evicted.push(...result.evicted.map((entry) => entry.header.tag));
    }
    assert.ok(queue.bytes <= 200);
    assert.deepEqual(evicted, ['a', 'b']);
    assert.deepEqual(
      queue.list().map((entry) => entry.header.tag),
      ['c', 'd'],
    );
  });

  it('refuses a batch larger than the whole cap and says so', async () => {
    const queue = new PersistentQueue<Header>(directory, 1024);
    await queue.open();
    const result = await queue.put({ items: 5, tag: 'big' }, Buffer.alloc(4096));
    assert.equal(result.stored, undefined);
    assert.deepEqual(
      result.evicted.map((entry) => entry.header.items),
      [5],
    );
    assert.equal(queue.depth, 0);
  });

  it('deletes half-written temporary files and sets unreadable files aside on open', async () => {
    const queue = new PersistentQueue<Header>(directory, 1 << 20);
    await queue.open();
    await queue.put({ items: 1, tag: 'ok' }, Buffer.from('x'));
    await queue.close();
    await writeFile(join(directory, '000000000000001-000000000-aaaaaaaa.batch.tmp'), 'partial');
    await writeFile(join(directory, '000000000000002-000000000-bbbbbbbb.batch'), 'garbage');
    const reopened = new PersistentQueue<Header>(directory, 1 << 20);
    assert.deepEqual(await reopened.open(), ['000000000000002-000000000-bbbbbbbb.batch']);
    assert.deepEqual(
      reopened.list().map((entry) => entry.header.tag),
      ['ok'],
    );
    const names = await readdir(directory);
    assert.ok(names.includes('000000000000002-000000000-bbbbbbbb.batch.corrupt'));
    assert.ok(!names.some((name) => name.endsWith('.tmp')));
  });

  it('reports a file damaged after indexing as CorruptBatchError', async () => {
    const queue = new PersistentQueue<Header>(directory, 1 << 20);
    await queue.open();
    const { stored } = await queue.put({ items: 1, tag: 'x' }, Buffer.from('x'));
    await writeFile(join(directory, stored!.name), 'NOPE');
    await assert.rejects(queue.read(stored!), CorruptBatchError);
    assert.equal(queue.depth, 0);
  });

  it('appends dead letters as JSON lines', async () => {
    const queue = new PersistentQueue<Header>(directory, 1 << 20);
    await queue.open();
    await queue.deadLetter({ run: 1 });
    await queue.deadLetter({ run: 2 });
    const lines = (await readFile(queue.deadLetterPath, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(lines, [{ run: 1 }, { run: 2 }]);
  });
});

describe('PersistentQueue under concurrent writers', () => {
  it('keeps the cap when many batches are stored at once', async () => {
    const directory = join(await mkdtemp(join(tmpdir(), 'tp-pq-')), 'queue');
    try {
      const queue = new PersistentQueue<Header>(directory, 1000);
      await queue.open();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => queue.put({ items: 1, tag: String(i) }, Buffer.alloc(200))),
      );
      const evicted = results.reduce((sum, result) => sum + result.evicted.length, 0);
      assert.ok(queue.bytes <= 1000);
      assert.equal(queue.depth + evicted, 20);
      assert.equal((await readdir(directory)).filter((name) => name.endsWith('.batch')).length, queue.depth);
    } finally {
      await rm(join(directory, '..'), { recursive: true, force: true });
    }
  });
});
