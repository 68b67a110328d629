import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { getHeapSpaceStatistics } from 'node:v8';
import { eventually } from '../testkit/eventually.ts';
import { IdleCollectionPolicy, QUIET_MS, fullCollection } from './idle-collection.ts';

describe('idle collection', () => {
  it('collects once the loop has been busy and then quiet for the quiet period, once per quiet period', () => {
    const policy = new IdleCollectionPolicy(10_000);
    const decisions = [0.5, 0.6, 0.01, 0.0, 0.0, 0.0, 0.0].map((utilization) => policy.observe(utilization, 5000));
    // Busy, busy, then quiet: due after 10 s of quiet, not again while it stays quiet.
    assert.deepEqual(decisions, [false, false, false, true, false, false, false]);
    // A new burst, then quiet again: due once more.
    assert.deepEqual(
      [0.3, 0.0, 0.0].map((utilization) => policy.observe(utilization, 5000)),
      [false, false, true],
    );
  });

  it('by default collects a couple of seconds after a load, before a look a few seconds later', () => {
    const policy = new IdleCollectionPolicy();
    assert.ok(QUIET_MS <= 2000);
    const decisions = [0.5, 0.0, 0.0, 0.0].map((utilization) => policy.observe(utilization, 1000));
    assert.deepEqual(decisions, [false, false, true, false]);
  });

  it("does not take a collection's aftermath for a new burst: one collection per load, not one every few seconds", () => {
    const policy = new IdleCollectionPolicy();
    // Busy, quiet for 2 s: collected; then the collection's sweeping keeps the loop busy for a while.
    const decisions = [0.5, 0.0, 0.0, 0.2, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0].map((utilization) =>
      policy.observe(utilization, 1000),
    );
    assert.deepEqual(
      decisions.map((due, index) => (due ? index : -1)).filter((index) => index >= 0),
      [2],
    );
    // A load after the aftermath is a burst again.
    assert.deepEqual(
      [0.5, 0.0, 0.0].map((utilization) => policy.observe(utilization, 1000)),
      [false, false, true],
    );
  });

  it('never collects a process that was never busy, nor during a load', () => {
    const quiet = new IdleCollectionPolicy(10_000);
    assert.ok([0, 0.01, 0, 0, 0].every((utilization) => !quiet.observe(utilization, 5000)));
    const loaded = new IdleCollectionPolicy(10_000);
    assert.ok([0.9, 0.2, 0.06, 0.5, 0.05].every((utilization) => !loaded.observe(utilization, 5000)));
  });

  it('a quiet spell shorter than the quiet period does not count; the next load starts over', () => {
    const policy = new IdleCollectionPolicy(10_000);
    assert.ok([0.5, 0.0, 0.5, 0.0].every((utilization) => !policy.observe(utilization, 5000)));
    assert.equal(policy.observe(0.0, 5000), true);
  });

  it('gets a real full collection that frees unreachable memory', async () => {
    const collect = fullCollection();
    assert.equal(typeof collect, 'function');
    // The main context's globals are left as they were.
    assert.equal((globalThis as { gc?: unknown }).gc, undefined);
    let freed = false;
    const registry = new FinalizationRegistry(() => (freed = true));
    (() => registry.register({ payload: new Array(1000).fill(0) }, 'garbage'))();
    collect!();
    // The registry's callback runs in a later task.
    await eventually(() => freed, { message: 'the garbage to be collected' });
  });

  it('gives back the pages of a fragmented old space without a second copy of what lives there', () => {
    const collect = fullCollection()!;
    // 200,000 arrays of ~1 KB promoted to the old space (they survive two full collections), then
    // four in five dropped: ~200 MB of pages holding ~40 MB of live objects, spread over all of them.
    let survivors = Array.from({ length: 200_000 }, (_, index) => new Array<number>(120).fill(index));
    collect();
    collect();
    survivors = survivors.filter((_, index) => index % 5 === 0);
    const pagesBefore = oldSpaceBytes();
    writeFileSync('/proc/self/clear_refs', '5'); // resets the RSS high-water mark (VmHWM) to the RSS
    const rssBefore = statusBytes('VmRSS');
    collect();
    const transient = statusBytes('VmHWM') - rssBefore;
    const pagesAfter = oldSpaceBytes();
    assert.equal(survivors.length, 40_000);
    // A plain full collection frees the objects but keeps every page that still holds one.
    assert.ok(pagesAfter < pagesBefore / 3, `old space ${pagesBefore >> 20} MB -> ${pagesAfter >> 20} MB`);
    // Compacting every page at once copied all ~40 MB first (+43 MB of RSS measured); a few MB here.
    assert.ok(transient < pagesAfter / 4, `RSS +${transient >> 20} MB during the collection`);
  });
});

function oldSpaceBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_size;
}

/** A `/proc/self/status` field given in kB, in bytes. */
function statusBytes(field: 'VmRSS' | 'VmHWM'): number {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
}
