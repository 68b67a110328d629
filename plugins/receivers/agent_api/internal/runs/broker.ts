// The stream broker: every event a run produces, numbered from 0, kept in a bounded per-run log
// that any number of readers follow. Readers never take events away from each other, so a client
// that joins late, or reconnects with `Last-Event-ID: n`, gets the events after `n` and then the
// live ones. A finished run's log is kept for a while for late joiners, then released.
//
// `EventBroker` is what the run machinery and the routes use; `StreamBroker` keeps the logs in this
// process (one instance), `RedisStreamBroker` (redis-broker.ts) in Redis, for several instances.

export interface StreamEvent {
  /** Position in the run's stream, from 0 (`metadata`). */
  readonly id: number;
  readonly event: string;
  readonly data: unknown;
}

/** An event to put at the head of a run's log (`EventBroker.open`). */
export interface FirstEvent {
  readonly event: string;
  readonly data: unknown;
}

export interface OpenOptions {
  /**
   * Whether an ended log starts a new attempt (its readers wait again). Only the executor of a run
   * opens with it: the creator's open may reach a shared broker after another instance has already
   * executed and ended the run, and must not make that ended log look live again.
   */
  readonly reopen?: boolean;
}

/**
 * The `metadata` event that starts every run's stream, once: appended when the run is created,
 * so that a streaming client learns the run's id as soon as the run exists, not when a worker
 * takes it. `attempt` is 1: a run is executed at most once (a run whose lease lapsed is settled as
 * an error, never retried, see recovery.ts), and a later execution of the same run (its log
 * reopened) continues the stream without a second `metadata`.
 */
export function metadataEvent(runId: string): FirstEvent {
  return { event: 'metadata', data: { run_id: runId, attempt: 1 } };
}

/** The stream broker as the runner, the coordinator and the routes use it. */
export interface EventBroker {
  /**
   * Opens a run's log (idempotent); a reader may then wait on it before the first event. With
   * `first`, a log that has no event yet gets `first` as its event 0 (in the same step, so that
   * of several openers exactly one appends it); a log that has events keeps them as they are. An
   * ended log stays ended unless `options.reopen`.
   */
  open(runId: string, first?: FirstEvent, options?: OpenOptions): void;
  /** Appends an event; its id is the next position in the run's stream. */
  publish(runId: string, event: string, data: unknown): void;
  /** Marks the run's stream complete: readers drain what is left and end. */
  finish(runId: string): void;
  /** Ends every reader in this process (the server is stopping). */
  finishAll(): void;
  /** Forgets a run's log (the run was deleted); its readers end. */
  discard(runId: string): void;
  /** Whether the run's log was discarded because the run was deleted (rolled back or deleted). */
  wasDiscarded(runId: string): boolean | Promise<boolean>;
  /** The last event named `event` in the run's retained log. */
  last(runId: string, event: string): StreamEvent | undefined | Promise<StreamEvent | undefined>;
  /**
   * Yields the run's events with ids greater than `afterId` (-1: from the start), live ones as they
   * come, and returns when the run's stream is complete or `signal` aborts. A run with no log
   * returns at once. Throws `BrokerUnavailableError` when the logs cannot be read.
   */
  subscribe(runId: string, afterId: number, signal?: AbortSignal): AsyncGenerator<StreamEvent>;
  /**
   * Resolves once the run's stream is complete (it ended or was discarded, or has no log) or
   * `signal` aborts, reading none of its events: what a wait needs. Throws
   * `BrokerUnavailableError` when the logs cannot be read.
   */
  untilEnded(runId: string, signal?: AbortSignal): Promise<void>;
  /**
   * Tells the thread's watchers (`watchThread`, on every instance) that a run was created on it.
   * Nothing is kept: a watcher hears only what is announced while it listens.
   */
  announce(threadId: string, runId: string): void;
  /**
   * Calls `listener` with the id of each run announced on the thread from now on, until the
   * returned function is called. Resolves once listening. Announcements may be lost (a shared
   * broker's connection drops), so a watcher also looks at the thread's runs now and then.
   */
  watchThread(threadId: string, listener: (runId: string) => void): Promise<() => void>;
  /** Whether streams can be served now (false while a shared broker is unreachable). */
  available(): boolean;
  /** Writes what is still buffered (within `deadline`, epoch ms) and releases connections. */
  close(deadline?: number): Promise<void>;
}

/** The shared broker cannot be reached: the request may be retried (503 with `Retry-After`). */
export class BrokerUnavailableError extends Error {
  override readonly name = 'BrokerUnavailableError';
  constructor(
    message: string,
    /** Seconds after which a retry is worth it. */
    readonly retryAfterSeconds = 5,
  ) {
    super(message);
  }
}

interface Channel {
  events: StreamEvent[];
  /** Id the next event will get. */
  nextId: number;
  done: boolean;
  wakers: Set<() => void>;
  finishedAt?: number;
}

export interface BrokerOptions {
  /** Events kept per run; older ones are dropped and counted. */
  readonly maxEvents: number;
  /** Finished runs whose logs are kept; the oldest go first. */
  readonly maxFinishedRuns: number;
  /**
   * How long a finished run's log is kept for late joiners and reconnects (default 5 minutes), so
   * that an idle server releases them all, not only the ones beyond `maxFinishedRuns`.
   */
  readonly finishedTtlMs?: number;
  /** The time, epoch ms (tests move it); default `Date.now`. */
  readonly now?: () => number;
  /** Called with the number of events dropped from a run's log. */
  readonly onDrop?: (runId: string, count: number) => void;
  /**
   * Called once a run's log ends (`finish`) or is discarded, which happens after its record reached
   * its final state: other instances on the same database are told (`postgres-signals.ts`).
   */
  readonly onEnd?: (runId: string) => void;
}

export class StreamBroker implements EventBroker {
  private readonly channels = new Map<string, Channel>();
  private readonly finished: string[] = [];
  /** Runs deleted while someone could still be waiting on them (bounded like the finished logs). */
  private readonly discarded = new Set<string>();
  /** The thread watchers, by thread id. */
  private readonly threadWatchers = new Map<string, Set<(runId: string) => void>>();

  private readonly finishedTtlMs: number;
  private readonly now: () => number;

  constructor(private readonly options: BrokerOptions) {
    this.finishedTtlMs = options.finishedTtlMs ?? 300_000;
    this.now = options.now ?? Date.now;
  }

  /** Runs whose logs are held (in flight, or finished within the bounds). */
  get size(): number {
    return this.channels.size;
  }

  private channel(runId: string): Channel {
    let channel = this.channels.get(runId);
    if (!channel) {
      channel = { events: [], nextId: 0, done: false, wakers: new Set() };
      this.channels.set(runId, channel);
    }
    return channel;
  }

  /** Opens a run's log (idempotent); with `first`, a log with no event yet starts with it. */
  open(runId: string, first?: FirstEvent, options?: OpenOptions): void {
    this.release();
    const channel = this.channel(runId);
    if (first && channel.nextId === 0) this.publish(runId, first.event, first.data);
    if (channel.done && options?.reopen) {
      // A retried run starts a new attempt: its stream continues after what was already sent.
      channel.done = false;
      const index = this.finished.indexOf(runId);
      if (index >= 0) this.finished.splice(index, 1);
    }
  }

  has(runId: string): boolean {
    return this.channels.has(runId);
  }

  publish(runId: string, event: string, data: unknown): StreamEvent {
    const channel = this.channel(runId);
    const item: StreamEvent = { id: channel.nextId++, event, data };
    channel.events.push(item);
    if (channel.events.length > this.options.maxEvents) {
      const excess = channel.events.length - this.options.maxEvents;
      channel.events.splice(0, excess);
      this.options.onDrop?.(runId, excess);
    }
    this.wake(channel);
    return item;
  }

  /** Marks the run's stream complete: readers drain what is left and end. */
  finish(runId: string): void {
    const channel = this.channel(runId);
    if (channel.done) return;
    channel.done = true;
    channel.finishedAt = this.now();
    this.finished.push(runId);
    this.release();
    this.wake(channel);
    this.options.onEnd?.(runId);
  }

  /** Drops the logs of finished runs past the count bound or their grace period, oldest first. */
  private release(): void {
    const expired = this.now() - this.finishedTtlMs;
    for (;;) {
      const oldest = this.finished[0];
      if (oldest === undefined) return;
      const channel = this.channels.get(oldest);
      const over = this.finished.length > this.options.maxFinishedRuns;
      if (!over && channel?.done && (channel.finishedAt ?? 0) > expired) return;
      this.finished.shift();
      // A log reopened since (a later execution) is live again: it stays.
      if (channel?.done) this.channels.delete(oldest);
    }
  }

  /** Ends every reader (the server is stopping); logs are kept, so nothing is replayed twice. */
  finishAll(): void {
    for (const channel of this.channels.values()) {
      channel.done = true;
      this.wake(channel);
    }
  }

  /** Forgets a run's log (the run was deleted); its readers end. */
  discard(runId: string): void {
    this.discarded.add(runId);
    if (this.discarded.size > this.options.maxFinishedRuns)
      this.discarded.delete(this.discarded.values().next().value!);
    this.options.onEnd?.(runId);
    const channel = this.channels.get(runId);
    if (!channel) return;
    channel.done = true;
    this.wake(channel);
    this.channels.delete(runId);
  }

  /** Whether the run's log was discarded because the run was deleted (rolled back or deleted). */
  wasDiscarded(runId: string): boolean {
    return this.discarded.has(runId);
  }

  async untilEnded(runId: string, signal?: AbortSignal): Promise<void> {
    // Following the log from past its end yields nothing and returns when the run's stream ends.
    for await (const _ of this.subscribe(runId, Number.MAX_SAFE_INTEGER, signal)) {
      // Nothing to do per event.
    }
  }

  /** The last event named `event` in the run's retained log. */
  last(runId: string, event: string): StreamEvent | undefined {
    const events = this.channels.get(runId)?.events ?? [];
    for (let index = events.length - 1; index >= 0; index--) if (events[index].event === event) return events[index];
    return undefined;
  }

  /**
   * Yields the run's events with ids greater than `afterId` (-1: from the start), live ones as they
   * come, and returns when the run's stream is complete or `signal` aborts. A run with no log
   * returns at once.
   */
  async *subscribe(runId: string, afterId: number, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
    let cursor = afterId;
    for (;;) {
      const channel = this.channels.get(runId);
      if (!channel || signal?.aborted) return;
      const pending = channel.events.filter((event) => event.id > cursor);
      for (const event of pending) {
        cursor = event.id;
        yield event;
        if (signal?.aborted) return;
      }
      if (pending.length > 0) continue;
      if (channel.done) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          channel.wakers.delete(wake);
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        channel.wakers.add(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  announce(threadId: string, runId: string): void {
    for (const listener of [...(this.threadWatchers.get(threadId) ?? [])]) listener(runId);
  }

  async watchThread(threadId: string, listener: (runId: string) => void): Promise<() => void> {
    let listeners = this.threadWatchers.get(threadId);
    if (!listeners) this.threadWatchers.set(threadId, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      const current = this.threadWatchers.get(threadId);
      if (current?.delete(listener) && current.size === 0) this.threadWatchers.delete(threadId);
    };
  }

  available(): boolean {
    return true;
  }

  async close(): Promise<void> {
    // Nothing is held outside this process.
  }

  private wake(channel: Channel): void {
    for (const wake of [...channel.wakers]) wake();
  }
}
