import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SendingQueue } from './sending_queue.ts';
import { drainForShutdown } from './shutdown.ts';

describe('drainForShutdown', () => {
  it('lets the senders finish when they can, then aborts', async () => {
    const handled: number[] = [];
    const queue = new SendingQueue<number>({
      queue_size: 10,
      max_bytes: 1 << 20,
      block_on_overflow: false,
      consumers: 1,
      handle: async (n) => void handled.push(n),
      onHandlerError: () => assert.fail('unexpected'),
    });
    for (const n of [1, 2, 3]) await queue.offer(n);
    const stop = new AbortController();
    const kept: number[] = [];
    await drainForShutdown(queue, Date.now() + 2000, stop, async (n) => void kept.push(n));
    assert.deepEqual(handled, [1, 2, 3]);
    assert.deepEqual(kept, []);
    assert.equal(stop.signal.aborted, true);
  });

  it('at the deadline, aborts in-flight work and hands waiting batches over to be kept', async () => {
    const stop = new AbortController();
    const aborted: number[] = [];
    const queue = new SendingQueue<number>({
      queue_size: 10,
      max_bytes: 1 << 20,
      block_on_overflow: false,
      consumers: 1,
      // A sender that only ends when told to stop, as an attempt with a long backoff does.
      handle: (n) =>
        new Promise<void>((resolve) =>
          stop.signal.addEventListener('abort', () => {
            aborted.push(n);
            resolve();
          }),
        ),
      onHandlerError: () => assert.fail('unexpected'),
    });
    for (const n of [1, 2, 3]) await queue.offer(n);
    const kept: number[] = [];
    await drainForShutdown(queue, Date.now() + 100, stop, async (n) => void kept.push(n));
    assert.deepEqual(aborted, [1]);
    assert.deepEqual(kept, [2, 3]);
    assert.equal(queue.inFlight + queue.depth, 0);
  });

  it('starts no attempt that could not finish before the abort: the one in flight completes, the rest is kept', async () => {
    const stop = new AbortController();
    const completed: number[] = [];
    const queue = new SendingQueue<number>({
      queue_size: 10,
      max_bytes: 1 << 20,
      block_on_overflow: false,
      consumers: 1,
      // Each attempt takes 150 ms, unless aborted.
      handle: (n) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => (completed.push(n), resolve()), 150);
          stop.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()));
        }),
      onHandlerError: () => assert.fail('unexpected'),
    });
    for (const n of [1, 2, 3]) await queue.offer(n);
    const kept: number[] = [];
    // 1 s of budget: attempt 1 is in flight; with attempts known to take about a second, 2 and 3 are not started.
    await drainForShutdown(queue, Date.now() + 1000, stop, async (n) => void kept.push(n), 1000);
    assert.deepEqual(completed, [1]);
    assert.deepEqual(kept, [2, 3]);
  });
});
