// A thread's protocol stream as one client sees it: what it subscribed to, the events of the runs
// it started (numbered, kept for subscriptions that come later), and the tree of graphs and
// subgraphs the current run went through. Frames leave through `send`, in the order they are
// made: a subscription's answer always precedes the events it replays. Over a WebSocket a session
// is one connection's, filtered by its subscriptions; over SSE (`deliverAll`) it hands every event
// to the streams that share it, which filter for themselves (thread-streams.ts).

import { isPrefixMatch, isSupportedChannel, matchesSubscription } from '@langchain/langgraph/stream';
import { v7 as uuid7 } from 'uuid';
import { draftsOf, failure, graphNameOf, isRecord, lifecycleOf } from './events.ts';
import type {
  EventDraft,
  LifecycleStatus,
  Namespace,
  ProtocolError,
  ProtocolEvent,
  ProtocolSuccess,
} from './events.ts';

/** What the session reads of a run: its stream events, then its final status. */
export interface RunEvents {
  events(runId: string, signal: AbortSignal): AsyncIterable<{ readonly event: string; readonly data: unknown }>;
  status(runId: string): Promise<string | undefined>;
}

interface Subscription {
  readonly id: string;
  readonly channels: string[];
  readonly namespaces?: Namespace[];
  readonly depth?: number;
}

interface NamespaceInfo {
  readonly namespace: Namespace;
  status: LifecycleStatus;
  readonly graphName: string;
}

export interface SessionOptions {
  /** Events kept for replay to later subscriptions; the oldest go first. */
  readonly maxBufferedEvents: number;
  /** Every event goes to `send`, whatever the subscriptions (the SSE form filters per stream). */
  readonly deliverAll?: boolean;
}

const key = (namespace: Namespace) => namespace.join('\0');

export class ThreadStreamSession {
  private seq = 0;
  private readonly buffer: ProtocolEvent[] = [];
  private readonly subscriptions = new Map<string, Subscription>();
  private namespaces = new Map<string, NamespaceInfo>();
  private rootGraphName = 'root';
  private following: Promise<void> = Promise.resolve();
  private runsFollowed = 0;
  private readonly closed = new AbortController();

  constructor(
    private readonly send: (frame: ProtocolEvent | ProtocolSuccess | ProtocolError) => void,
    private readonly runs: RunEvents,
    private readonly options: SessionOptions,
  ) {}

  /** The sequence number of the last event made (0: none yet). */
  get lastSeq(): number {
    return this.seq;
  }

  /** Whether a run it started has not ended yet (or waits its turn behind another). */
  get busy(): boolean {
    return this.runsFollowed > 0;
  }

  /** The events kept for replay, oldest first. */
  buffered(): readonly ProtocolEvent[] {
    return this.buffer;
  }

  /**
   * `subscription.subscribe`: answers (through `send`) and then replays the buffered events the
   * subscription matches, so a client that subscribes after its run started misses nothing.
   */
  subscribe(id: number, params: Record<string, unknown>): void {
    const channels = params.channels;
    if (!Array.isArray(channels) || channels.length === 0) {
      this.send(failure(id, 'invalid_argument', 'subscription.subscribe requires a non-empty channels array.'));
      return;
    }
    const unknown = channels.filter((channel) => typeof channel !== 'string' || !isSupportedChannel(channel));
    if (unknown.length > 0) {
      this.send(
        failure(
          id,
          'invalid_argument',
          `subscription.subscribe received unsupported channels: ${JSON.stringify(unknown)}`,
        ),
      );
      return;
    }
    const namespaces = params.namespaces;
    if (
      namespaces !== undefined &&
      !(
        Array.isArray(namespaces) &&
        namespaces.every((ns) => Array.isArray(ns) && ns.every((segment) => typeof segment === 'string'))
      )
    ) {
      this.send(failure(id, 'invalid_argument', 'subscription.subscribe namespaces must be arrays of strings.'));
      return;
    }
    const depth = params.depth;
    if (depth !== undefined && !(typeof depth === 'number' && Number.isInteger(depth) && depth >= 0)) {
      this.send(failure(id, 'invalid_argument', 'subscription.subscribe depth must be a non-negative integer.'));
      return;
    }
    const subscription: Subscription = {
      id: uuid7(),
      channels: channels as string[],
      ...(namespaces ? { namespaces: namespaces as Namespace[] } : {}),
      ...(depth !== undefined ? { depth: depth as number } : {}),
    };
    const replay = this.buffer.filter((event) => this.matches(subscription, event));
    this.subscriptions.set(subscription.id, subscription);
    this.send({
      type: 'success',
      id,
      result: { subscription_id: subscription.id, replayed_events: replay.length },
    });
    for (const event of replay) this.send(event);
  }

  /** `subscription.unsubscribe`. */
  unsubscribe(id: number, params: Record<string, unknown>): ProtocolSuccess | ProtocolError {
    const subscriptionId = params.subscription_id;
    if (typeof subscriptionId !== 'string')
      return failure(id, 'invalid_argument', 'subscription.unsubscribe requires a subscription_id.');
    if (!this.subscriptions.delete(subscriptionId))
      return failure(id, 'no_such_subscription', `Subscription ${subscriptionId} not found.`);
    return { type: 'success', id, result: {} };
  }

  /** `agent.getTree`: the current run's graph and the subgraphs it entered, with their status. */
  tree(): Record<string, unknown> {
    return this.treeOf([]);
  }

  /**
   * Follows a run this connection started: its events after those of the runs before it (a run
   * queued behind another starts once that one ends, so the order is the thread's order).
   */
  follow(runId: string, graphName: string): void {
    this.runsFollowed += 1;
    this.following = this.following
      .then(() => this.followRun(runId, graphName))
      .catch(() => undefined)
      .finally(() => (this.runsFollowed -= 1));
  }

  /** Stops following runs (the runs themselves go on). */
  close(): void {
    this.closed.abort();
  }

  private async followRun(runId: string, graphName: string): Promise<void> {
    if (this.closed.signal.aborted) return;
    this.rootGraphName = graphName;
    this.namespaces = new Map();
    this.setStatus([], 'running');
    this.push({ method: 'lifecycle', namespace: [], data: { event: 'running', graph_name: graphName } });
    let interrupted = false;
    let failedWith: string | undefined;
    for await (const event of this.runs.events(runId, this.closed.signal)) {
      if (event.event === 'error') {
        failedWith = isRecord(event.data) ? String(event.data.message ?? event.data.error ?? '') : String(event.data);
        continue;
      }
      for (const draft of draftsOf(event.event, event.data)) {
        if (draft.method === 'input.requested') interrupted = true;
        this.enter(draft.namespace);
        this.push(draft);
      }
    }
    if (this.closed.signal.aborted) return;
    let status = failedWith !== undefined ? 'failed' : lifecycleOf((await this.runs.status(runId)) ?? 'success');
    if (status === 'completed' && interrupted) status = 'interrupted';
    if (status === 'running') return; // the stream ended early (the server is stopping)
    // The subgraphs still open ended with their run.
    for (const info of [...this.namespaces.values()].filter((info) => info.namespace.length > 0)) {
      if (info.status !== 'started' && info.status !== 'running') continue;
      this.setStatus(info.namespace, status);
      this.push({
        method: 'lifecycle',
        namespace: info.namespace,
        data: { event: status, graph_name: info.graphName },
      });
    }
    this.setStatus([], status);
    this.push({
      method: 'lifecycle',
      namespace: [],
      data: { event: status, graph_name: graphName, ...(failedWith !== undefined ? { error: failedWith } : {}) },
    });
  }

  /** A subgraph seen for the first time (and each of its parents) starts: a `started` lifecycle event. */
  private enter(namespace: Namespace): void {
    for (let length = 1; length <= namespace.length; length++) {
      const prefix = namespace.slice(0, length);
      if (this.namespaces.has(key(prefix))) continue;
      this.setStatus(prefix, 'started');
      this.push({
        method: 'lifecycle',
        namespace: prefix,
        data: { event: 'started', graph_name: graphNameOf(prefix) },
      });
    }
  }

  private setStatus(namespace: Namespace, status: LifecycleStatus): void {
    const known = this.namespaces.get(key(namespace));
    if (known) known.status = status;
    else
      this.namespaces.set(key(namespace), {
        namespace,
        status,
        graphName: namespace.length === 0 ? this.rootGraphName : graphNameOf(namespace),
      });
  }

  private push(draft: EventDraft): void {
    this.seq += 1;
    const event: ProtocolEvent = {
      type: 'event',
      event_id: String(this.seq),
      seq: this.seq,
      method: draft.method,
      params: {
        namespace: draft.namespace,
        timestamp: Date.now(),
        ...(draft.node !== undefined ? { node: draft.node } : {}),
        data: draft.data,
      },
    };
    this.buffer.push(event);
    if (this.buffer.length > this.options.maxBufferedEvents) this.buffer.shift();
    if (this.options.deliverAll) {
      this.send(event);
      return;
    }
    // One frame per event, however many subscriptions match it: the client fans out by itself.
    for (const subscription of this.subscriptions.values()) {
      if (this.matches(subscription, event)) {
        this.send(event);
        break;
      }
    }
  }

  private matches(subscription: Subscription, event: ProtocolEvent): boolean {
    return matchesSubscription(event, subscription as never);
  }

  private treeOf(namespace: Namespace): Record<string, unknown> {
    const info = this.namespaces.get(key(namespace)) ?? {
      namespace,
      status: 'started',
      graphName: namespace.length === 0 ? this.rootGraphName : graphNameOf(namespace),
    };
    const children = [...this.namespaces.values()]
      .filter(
        (candidate) =>
          candidate.namespace.length === namespace.length + 1 && isPrefixMatch(candidate.namespace, namespace),
      )
      .sort((a, b) => JSON.stringify(a.namespace).localeCompare(JSON.stringify(b.namespace)))
      .map((child) => this.treeOf(child.namespace));
    return {
      namespace: info.namespace,
      status: info.status,
      graph_name: info.graphName,
      ...(children.length > 0 ? { children } : {}),
    };
  }
}
