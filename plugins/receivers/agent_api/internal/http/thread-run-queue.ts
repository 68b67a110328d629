// The runs a thread's stream still has to follow, in the order it learns of them: the runs read
// when the client connected, then the ones the broker announces. Each run is followed once.

export class ThreadRunQueue {
  private readonly queued: string[] = [];
  /** Every run queued or skipped so far: never queued again. */
  private readonly seen = new Set<string>();
  private waiter?: () => void;

  /** Queues a run, unless it was queued or skipped before. */
  add(runId: string): void {
    if (this.seen.has(runId)) return;
    this.seen.add(runId);
    this.queued.push(runId);
    this.waiter?.();
  }

  /** Marks a run as one the stream does not follow (the client saw it before reconnecting). */
  skip(runId: string): void {
    this.seen.add(runId);
  }

  /** The next run to follow, or undefined when none is queued. */
  next(): string | undefined {
    return this.queued.shift();
  }

  /**
   * Waits up to `timeoutMs` for a run to be queued; true when one was, false on the timeout or
   * when `signal` aborts.
   */
  announced(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (this.queued.length > 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const done = (queued: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiter = undefined;
        resolve(queued);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiter = () => done(true);
    });
  }
}
