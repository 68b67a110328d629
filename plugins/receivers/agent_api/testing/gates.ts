// Gates for tests that need a run in flight: the `gate` test graph (graphs/gate.ts) stops in its
// node at the gate its input names until the test opens it, so a test orders events by what it
// does, never by how long a graph sleeps. The graph runs in the test's process (the test server is
// in-process), so the graph and the test share this module's registry.

import { randomUUID } from 'node:crypto';

export class Gate {
  /** Resolves once a run has reached the gate (its node is running, before any wait). */
  readonly reached: Promise<void>;
  private arrive!: () => void;
  private release!: () => void;
  private readonly opened: Promise<void>;
  private isOpen = false;

  constructor(readonly name: string) {
    this.reached = new Promise<void>((resolve) => (this.arrive = resolve));
    this.opened = new Promise<void>((resolve) => (this.release = resolve));
  }

  /** Lets every run waiting at the gate, and every later one, go on. */
  open(): void {
    this.isOpen = true;
    this.release();
  }

  /**
   * For the graph: waits until the gate opens. A run stopped first gets an AbortError, as from a
   * timer of node:timers/promises given the same signal.
   */
  async pass(signal?: AbortSignal): Promise<void> {
    this.arrive();
    if (this.isOpen) return;
    const aborted = () =>
      Object.assign(new Error('The operation was aborted', { cause: signal?.reason }), {
        name: 'AbortError',
        code: 'ABORT_ERR',
      });
    if (signal?.aborted) throw aborted();
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(aborted());
      signal?.addEventListener('abort', onAbort, { once: true });
      void this.opened.then(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }
}

const gates = new Map<string, Gate>();

/** A new closed gate with a unique name; pass `{ gate: gate.name }` as the `gate` graph's input. */
export function newGate(): Gate {
  const gate = new Gate(`gate-${randomUUID()}`);
  gates.set(gate.name, gate);
  return gate;
}

/** The gate named `name` (the graph's side); an unknown name is a test bug, reported at once. */
export function gateNamed(name: string): Gate {
  const gate = gates.get(name);
  if (!gate) throw new Error(`no gate named ${JSON.stringify(name)}: create it with newGate() first`);
  return gate;
}
