// A thread's status after one of its runs ended or was cancelled. Both the domain (cancelling a
// pending run) and the run machinery (a run ending, a lease expiring) settle threads, inside the
// transaction that ends the run, so the rule lives beside the storage they share.

import { isoNow } from '../api/clock.ts';
import type { JsonObject, StorageOps, Thread } from './storage.ts';

/**
 * Sets a thread's status after one of its runs ended or was cancelled: `error` when that run
 * failed, `interrupted` when the graph paused with nodes still to run, `busy` while other runs
 * wait, `idle` otherwise. `read`: the thread as this transaction already read it (null: it is
 * gone), so that it is not read twice.
 */
export async function settleThread(
  tx: StorageOps,
  threadId: string,
  outcome: { error?: boolean; interrupted?: boolean; values?: JsonObject | null; interrupts?: JsonObject | null },
  read?: Thread | null,
): Promise<Thread | undefined> {
  const thread = read === undefined ? await tx.threads.get(threadId) : (read ?? undefined);
  if (!thread) return undefined;
  const waiting = (await tx.runs.inflight(threadId)).length > 0;
  const status = outcome.error ? 'error' : outcome.interrupted ? 'interrupted' : waiting ? 'busy' : 'idle';
  const next: Thread = {
    ...thread,
    status: waiting && status !== 'busy' ? 'busy' : status,
    updated_at: isoNow(),
    ...(outcome.values !== undefined ? { values: outcome.values } : {}),
    ...(outcome.interrupts !== undefined ? { interrupts: outcome.interrupts } : {}),
  };
  await tx.threads.update(next);
  return next;
}
