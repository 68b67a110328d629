// An async mutex: callers run one at a time, in arrival order. It gives the synchronous SQLite
// driver transactions that may await between statements without interleaving other callers.

export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    // The chain must survive a failed holder; the failure still reaches that holder's caller.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
