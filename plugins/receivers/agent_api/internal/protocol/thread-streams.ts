// The thread protocol over HTTP: commands arrive one request each (`POST /threads/{id}/commands`)
// and events leave through any number of SSE answers (`POST /threads/{id}/stream/events`), each
// with its own filter. What these requests share lives in one `SharedThreadStream` per thread and
// user: the session (the runs its commands started, their numbered events, kept for streams opened
// later) and the assistant its runs use. Keyed by user as well as by thread, so that one user's
// stream never carries the events of another user's runs, even on a thread id both name.

import { matchesSubscription } from '@langchain/langgraph/stream';
import { ThreadStreamSession } from './session.ts';
import type { RunEvents } from './session.ts';
import type { Namespace, ProtocolEvent } from './events.ts';

/** Which events an SSE stream carries: the protocol's subscription filter, with a replay cursor. */
export interface EventFilter {
  readonly channels: string[];
  readonly namespaces?: Namespace[];
  readonly depth?: number;
  /** Only events after this sequence number (those before were seen on an earlier stream). */
  readonly since?: number;
}

type EventSink = (event: ProtocolEvent) => void;

export interface ThreadStreamsOptions {
  /** Events each thread keeps for streams opened later; the oldest go first. */
  readonly maxBufferedEvents: number;
  /** A thread with no open stream and no run in progress is forgotten after this long. */
  readonly idleMs: number;
  readonly now?: () => number;
}

export class SharedThreadStream {
  readonly session: ThreadStreamSession;
  /** The assistant this thread's protocol runs use (`input.respond` resumes with it). */
  assistantId: string | undefined;
  private readonly sinks = new Map<EventSink, EventFilter>();
  private lastUsed: number;

  constructor(
    readonly threadId: string,
    runs: RunEvents,
    private readonly options: ThreadStreamsOptions & { now: () => number },
  ) {
    this.lastUsed = options.now();
    this.session = new ThreadStreamSession(
      (frame) => {
        if (frame.type !== 'event') return;
        for (const [sink, filter] of this.sinks) if (matches(filter, frame)) sink(frame);
      },
      runs,
      { maxBufferedEvents: options.maxBufferedEvents, deliverAll: true },
    );
  }

  /**
   * Hands `sink` the kept events the filter matches, then each new one as it is made, until the
   * returned function is called. Both happen in this call's turn, so nothing falls in between.
   */
  attach(filter: EventFilter, sink: EventSink): () => void {
    for (const event of this.session.buffered()) if (matches(filter, event)) sink(event);
    this.sinks.set(sink, filter);
    return () => {
      this.sinks.delete(sink);
      this.touch();
    };
  }

  touch(): void {
    this.lastUsed = this.options.now();
  }

  /** Nothing reads it and nothing writes to it, and has not for `idleMs`. */
  expired(now: number): boolean {
    return this.sinks.size === 0 && !this.session.busy && now - this.lastUsed >= this.options.idleMs;
  }
}

function matches(filter: EventFilter, event: ProtocolEvent): boolean {
  return matchesSubscription(event, filter as never);
}

export class ThreadStreams {
  private readonly threads = new Map<string, SharedThreadStream>();
  private readonly options: ThreadStreamsOptions & { now: () => number };

  constructor(
    private readonly runs: RunEvents,
    options: ThreadStreamsOptions,
  ) {
    this.options = { ...options, now: options.now ?? Date.now };
  }

  /** The thread's shared stream for this user (`user` empty when the API has no users). */
  get(threadId: string, user: string): SharedThreadStream {
    this.sweep();
    const key = JSON.stringify([threadId, user]);
    let thread = this.threads.get(key);
    if (!thread) {
      thread = new SharedThreadStream(threadId, this.runs, this.options);
      this.threads.set(key, thread);
    }
    thread.touch();
    return thread;
  }

  get size(): number {
    return this.threads.size;
  }

  /** Stops following runs (the server is stopping; the runs themselves go on or are recovered). */
  close(): void {
    for (const thread of this.threads.values()) thread.session.close();
    this.threads.clear();
  }

  private sweep(): void {
    const now = this.options.now();
    for (const [key, thread] of this.threads) {
      if (!thread.expired(now)) continue;
      thread.session.close();
      this.threads.delete(key);
    }
  }
}
