// The shutdown sequence of a queued exporter, written once: stop accepting, let the senders work
// until shortly before the deadline, then abort what is in flight and hand everything unsent over
// to be kept on disk, left to the receiver journal, or counted as lost (queued_exporter.ts).

import type { SendingQueue } from './sending_queue.ts';

/** Share of the remaining budget (at most MAX_PERSIST_MS) kept for writing unsent batches. */
const PERSIST_SHARE = 5;
const MAX_PERSIST_MS = 1000;
/** Aborted attempts settle at once; this only bounds a stuck disk write. */
const SETTLE_GRACE_MS = 5000;

export async function drainForShutdown<T>(
  queue: SendingQueue<T>,
  deadline: number,
  /** Aborting it ends in-flight attempts (and their backoffs) at once. */
  stopSending: AbortController,
  /** Keeps a batch no sender started (persist it, leave it to the journal, or count it as dropped). */
  keepUnsent: (item: T) => Promise<void>,
  /** How long an attempt usually takes (recent ones); 0 when unknown. */
  attemptMs = 0,
): Promise<void> {
  queue.close();
  const now = Date.now();
  const remaining = Math.max(0, deadline - now);
  const abortAt = deadline - Math.min(MAX_PERSIST_MS, Math.floor(remaining / PERSIST_SHARE));
  // An attempt started too late to finish before `abortAt` would be aborted after the destination
  // may already have taken it, and then sent again from disk: a duplicate. Stop starting them.
  const stopStartingAt = Math.max(now, abortAt - attemptMs);
  if (await queue.drain(stopStartingAt)) {
    stopSending.abort();
    return;
  }
  const waiting = queue.takeWaiting();
  const keeping = (async () => {
    for (const item of waiting) await keepUnsent(item);
  })();
  await queue.drain(abortAt);
  stopSending.abort();
  await keeping;
  await queue.drain(deadline + SETTLE_GRACE_MS);
}
