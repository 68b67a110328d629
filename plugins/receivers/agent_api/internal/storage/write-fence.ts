// Rollback's guard against checkpoint writes that land after it. A run is stopped through its
// abort signal, and LangGraph lets the stream's consumer go on at once while the graph's loop
// finishes in the background: a checkpoint or pending write scheduled before the abort can still
// reach the saver after the rollback has deleted the run's checkpoints, leaving the run's input on
// the thread it was meant to leave untouched. The savers send each write of a run through
// `guard`; `close` turns the run's later writes away and waits for the ones already under way, so
// that what the rollback deletes afterwards is everything the run will ever have written.

import type { RunnableConfig } from '@langchain/core/runnables';
import { TtlMap } from 'tracepipe/collections';

/**
 * How long, and for how many runs, a closed run's writes are still turned away. Its loop stops
 * within a step of the abort; minutes cover a step that ignores the signal for a while.
 */
const CLOSED_TTL_MS = 10 * 60_000;
const MAX_CLOSED = 10_000;

/** The run a checkpoint write belongs to: the `run_id` the graph runner puts in the run's metadata. */
export function runOfWrite(config: RunnableConfig): string | undefined {
  const runId = config.metadata?.run_id;
  return typeof runId === 'string' ? runId : undefined;
}

export class RunWriteFence {
  private readonly inflight = new Map<string, Set<Promise<unknown>>>();
  private readonly closed = new TtlMap<string, true>(CLOSED_TTL_MS, MAX_CLOSED);

  /**
   * Performs `write` for the run of `config` unless that run is closed (then answers `skipped`
   * without writing), and remembers it while it is under way.
   */
  async guard<T>(config: RunnableConfig, write: () => Promise<T>, skipped: T): Promise<T> {
    const runId = runOfWrite(config);
    if (runId === undefined) return write();
    if (this.closed.get(runId)) return skipped;
    let writes = this.inflight.get(runId);
    if (!writes) this.inflight.set(runId, (writes = new Set()));
    const pending = write();
    writes.add(pending);
    try {
      return await pending;
    } finally {
      writes.delete(pending);
      if (writes.size === 0 && this.inflight.get(runId) === writes) this.inflight.delete(runId);
    }
  }

  /** Turns away the run's further writes and resolves once those already under way have ended. */
  async close(runId: string): Promise<void> {
    this.closed.sweep();
    this.closed.set(runId, true);
    const writes = this.inflight.get(runId);
    if (writes) await Promise.allSettled([...writes]);
  }
}
