import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ThrottleError } from '../pipeline/errors.ts';
import { QueueClosedError, SendingQueue } from './sending_queue.ts';
import type { SendingQueueOptions } from './sending_queue.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** A queue with one consumer that holds every item until `open()`, recording the items it handled. */
function heldQueue(options: Partial<SendingQueueOptions<number>>) {
  const g = gate();
  const handled: number[] = [];
  const queue = new SendingQueue<number>({
    queue_size: 10,
    max_bytes: 1 << 20,
    block_on_overflow: false,
    consumers: 1,
    handle: async (n) => {
      await g.opened;
      handled.push(n);
    },
    onHandlerError: () => undefined,
    ...options,
  });
  return { queue, handled, open: g.open };
}

describe('SendingQueue', () => {
  it('runs at most `consumers` items at once and handles every item', async () => {
    const g = gate();
    let active = 0;
    let peak = 0;
    const done: number[] = [];
    const queue = new SendingQueue<number>({
      queue_size: 10,
      max_bytes: 1 << 20,
      block_on_overflow: false,
      consumers: 2,
      handle: async (n) => {
        active++;
        peak = Math.max(peak, active);
        await g.opened;
        active--;
        done.push(n);
      },
      onHandlerError: () => assert.fail('unexpected'),
    });
    for (let i = 0; i < 6; i++) await queue.offer(i);
    assert.equal(queue.inFlight, 2);
    assert.equal(queue.depth, 4);
    g.open();
    assert.equal(await queue.drain(Date.now() + 5000), true);
    assert.equal(peak, 2);
    assert.deepEqual(done.sort(), [0, 1, 2, 3, 4, 5]);
  });

  it('refuses with ThrottleError when full, and reports the refusal to the caller', async () => {
    const { queue, open } = heldQueue({ queue_size: 1, retryAfterMs: 250 });
    await queue.offer(1); // taken by the consumer
    await queue.offer(2); // waits in the queue
    await assert.rejects(
      queue.offer(3),
      (error: unknown) => error instanceof ThrottleError && error.retryAfterMs === 250,
    );
    open();
    await queue.drain(Date.now() + 5000);
  });

  it('with block_on_overflow, waits for room instead', async () => {
    const { queue, handled, open } = heldQueue({ queue_size: 1, block_on_overflow: true });
    await queue.offer(1);
    await queue.offer(2);
    let third = false;
    const pending = queue.offer(3).then(() => (third = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(third, false);
    open();
    await pending;
    await queue.drain(Date.now() + 5000);
    assert.deepEqual(handled, [1, 2, 3]);
  });

  it('after close, refuses new items and releases blocked callers', async () => {
    const { queue, open } = heldQueue({ queue_size: 1, block_on_overflow: true });
    await queue.offer(1);
    await queue.offer(2);
    const blocked = queue.offer(3);
    queue.close();
    await assert.rejects(blocked, QueueClosedError);
    await assert.rejects(queue.offer(4), QueueClosedError);
    assert.deepEqual(queue.takeWaiting(), [2]);
    assert.equal(await queue.drain(Date.now() + 20), false); // 1 is still in flight
    open();
    assert.equal(await queue.drain(Date.now() + 5000), true);
  });

  it('reports a handler that throws instead of losing the item silently', async () => {
    const failed: number[] = [];
    const queue = new SendingQueue<number>({
      queue_size: 2,
      max_bytes: 1 << 20,
      block_on_overflow: false,
      consumers: 1,
      handle: async () => {
        throw new Error('boom');
      },
      onHandlerError: (_error, n) => failed.push(n),
    });
    await queue.offer(7);
    await queue.drain(Date.now() + 5000);
    assert.deepEqual(failed, [7]);
  });

  it('is bounded by bytes too, but takes one batch larger than the bound into an empty queue', async () => {
    const { queue, open } = heldQueue({ queue_size: 10, max_bytes: 100, block_on_overflow: false, sizeOf: (n) => n });
    await queue.offer(1); // taken by the consumer: no longer waiting
    await queue.offer(250); // larger than the bound, into an empty queue
    await assert.rejects(queue.offer(1), ThrottleError);
    assert.deepEqual(queue.takeWaiting(), [250]);
    await queue.offer(60);
    await queue.offer(40);
    assert.equal(queue.bytes, 100);
    await assert.rejects(queue.offer(1), ThrottleError);
    open();
    await queue.drain(Date.now() + 5000);
    assert.equal(queue.bytes, 0);
  });

  it('counts reserved room as taken until it is filled or released', async () => {
    const { queue, open } = heldQueue({ queue_size: 2, block_on_overflow: false });
    await queue.offer(1); // taken by the consumer
    const first = await queue.reserve();
    const second = await queue.reserve();
    await assert.rejects(queue.reserve(), ThrottleError);
    await assert.rejects(queue.offer(9), ThrottleError);
    second.release();
    second.release(); // a second release gives nothing back twice
    const third = await queue.reserve();
    await assert.rejects(queue.reserve(), ThrottleError);
    await first.fill(2);
    await third.fill(3);
    assert.equal(queue.depth, 2);
    await assert.rejects(queue.reserve(), ThrottleError);
    open();
    assert.equal(await queue.drain(Date.now() + 5000), true);
  });

  it('reserves the size of the largest recent batch, and re-checks a batch larger than that', async () => {
    const { queue, open } = heldQueue({ queue_size: 10, max_bytes: 100, block_on_overflow: false, sizeOf: (n) => n });
    await queue.offer(5); // taken by the consumer
    await queue.offer(40); // waiting: 40 bytes
    const slot = await queue.reserve(); // sets 40 bytes aside: 80 of 100
    await assert.rejects(queue.reserve(), ThrottleError); // 40 more do not fit
    await assert.rejects(slot.fill(70), ThrottleError); // larger than reserved, and 110 > 100
    const again = await queue.reserve(); // the refused fill gave its room back
    await again.fill(30);
    assert.equal(queue.bytes, 70);
    open();
    assert.equal(await queue.drain(Date.now() + 5000), true);
  });

  it('with block_on_overflow, a reservation waits for room; after close() it and any fill are refused', async () => {
    const { queue, handled, open } = heldQueue({ queue_size: 1, block_on_overflow: true });
    await queue.offer(1); // taken by the consumer
    const slot = await queue.reserve();
    let reserved = false;
    const waiting = queue.reserve().then((next) => {
      reserved = true;
      return next;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(reserved, false);
    await slot.fill(2);
    open();
    const next = await waiting; // 2 left the queue for the consumer
    await next.fill(3);
    assert.equal(await queue.drain(Date.now() + 5000), true);
    assert.deepEqual(handled, [1, 2, 3]);

    const late = await queue.reserve();
    queue.close();
    await assert.rejects(late.fill(4), QueueClosedError);
    await assert.rejects(queue.reserve(), QueueClosedError);
  });
});
