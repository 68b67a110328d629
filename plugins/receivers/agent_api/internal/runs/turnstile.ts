// Lets the event loop read new requests while runs execute. A run in this process is one long
// chain of promise jobs: LangGraph hands chunk after chunk to the stream, and the SQLite driver is
// synchronous, so its storage calls never leave the chain either. Node reads sockets only in the
// event loop's poll phase, which comes once the promise jobs have run out — with 16 runs in flight,
// a new request (and the `metadata` event its stream is waiting for) waited ~100–150 ms for every
// run to end. A run passes the turnstile at its natural breaks (before its graph starts, between
// stream chunks, before it records its end): each pass waits for a `setImmediate`, which comes after
// the poll phase, and one waiting run goes through per turn of the event loop, so requests that
// arrived meanwhile are read between any two steps of any two runs. A pass costs a few µs when the
// loop has nothing else to do.

export class Turnstile {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  /** Resolves on a later turn of the event loop, after the runs that were already waiting. */
  pass(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.release);
      }
    });
  }

  private readonly release = (): void => {
    this.waiting.shift()?.();
    if (this.waiting.length > 0) setImmediate(this.release);
    else this.scheduled = false;
  };
}
