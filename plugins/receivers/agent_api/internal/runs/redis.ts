// The Redis connections one server instance shares between its broker and its run signals: one
// for commands, one subscribed to pub/sub channels (a subscribed connection can run nothing else).
// Nothing connects before `connect()` (the server calls it as it starts); from then on both
// reconnect on their own with a capped back-off, and channels are subscribed again after a
// reconnect. Commands sent while the command connection is down wait in ioredis's offline queue;
// callers that must not wait use `whenReady` or `ready`.

import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Delay before reconnect attempt `times` (1, 2, ...): 100 ms doubling, at most 2 s. */
export function reconnectDelay(times: number): number {
  return Math.min(100 * 2 ** Math.min(times - 1, 5), 2000);
}

export interface RedisBusOptions {
  readonly uri: string;
  /** Prefix of every key and channel (several deployments may share one Redis). */
  readonly prefix: string;
  readonly logger: Logger;
}

type Listener = (message: string) => void;

export class RedisBus {
  readonly command: Redis;
  readonly subscriber: Redis;
  readonly prefix: string;
  /** This instance, in messages it sends (so that it can skip its own). */
  readonly instanceId = randomUUID();
  private readonly listeners = new Map<string, Set<Listener>>();
  private closed = false;
  private downSince?: number;
  private lastError?: Error;

  constructor(private readonly options: RedisBusOptions) {
    this.prefix = options.prefix;
    const common = {
      retryStrategy: reconnectDelay,
      // Commands wait for the connection to return; readers bound the wait themselves.
      maxRetriesPerRequest: null,
      // A constructor opens no connection: `connect()` does (a command sent before it connects too).
      lazyConnect: true,
    } as const;
    this.command = new Redis(options.uri, { ...common, connectionName: `tracepipe-agent-api:${this.instanceId}` });
    this.subscriber = new Redis(options.uri, {
      ...common,
      connectionName: `tracepipe-agent-api-sub:${this.instanceId}`,
    });
    for (const [name, connection] of [
      ['command', this.command],
      ['subscriber', this.subscriber],
    ] as const) {
      connection.on('error', (error: Error) => {
        this.lastError = error;
      });
      connection.on('close', () => this.lost(name));
      connection.on('ready', () => this.regained(name));
    }
    this.subscriber.on('message', (channel: string, message: string) => {
      for (const listener of [...(this.listeners.get(channel) ?? [])]) listener(message);
    });
  }

  /**
   * Opens both connections without waiting for them: a server whose Redis is down starts anyway
   * (streams answer 503 until it is back). Failed attempts are retried, as after a lost connection.
   */
  connect(): void {
    if (this.closed) return;
    for (const connection of [this.command, this.subscriber]) {
      // The first failure rejects this promise and is reported by the 'error' handler; retries go on.
      if (connection.status === 'wait') connection.connect().catch(() => undefined);
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Both connections are up. */
  ready(): boolean {
    return this.command.status === 'ready' && this.subscriber.status === 'ready';
  }

  /** Resolves once the command connection is up, or false after `timeoutMs` (or on close). */
  async whenReady(timeoutMs: number): Promise<boolean> {
    if (this.command.status === 'ready') return true;
    if (this.closed) return false;
    return new Promise<boolean>((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.command.off('ready', onReady);
        this.command.off('end', onEnd);
        resolve(value);
      };
      const onReady = () => done(true);
      const onEnd = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.command.on('ready', onReady);
      this.command.on('end', onEnd);
    });
  }

  /** Calls `listener` with each message on `channel` until the returned function is called. */
  async listen(channel: string, listener: Listener): Promise<() => void> {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    set.add(listener);
    if (set.size === 1) {
      // While the connection is down the subscription waits for it (readers poll meanwhile).
      const subscribing = this.subscriber.subscribe(channel).catch((error: unknown) => {
        this.options.logger.debug({ channel, err: error }, 'Could not subscribe to a Redis channel.');
      });
      if (this.subscriber.status === 'ready') await subscribing;
    }
    return () => {
      const current = this.listeners.get(channel);
      if (!current?.delete(listener) || current.size > 0) return;
      this.listeners.delete(channel);
      if (!this.closed) this.subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await Promise.all(
      [this.command, this.subscriber].map((connection) =>
        connection.status === 'ready'
          ? connection.quit().catch(() => connection.disconnect())
          : connection.disconnect(),
      ),
    );
  }

  private lost(name: string): void {
    if (this.closed) return;
    if (this.downSince === undefined) {
      this.downSince = Date.now();
      this.options.logger.warn(
        { connection: name, err: this.lastError },
        'Lost the Redis connection; reconnecting (streams answer 503 meanwhile, runs go on).',
      );
    }
  }

  private regained(name: string): void {
    if (this.downSince === undefined || !this.ready()) return;
    this.options.logger.info(
      { connection: name, down_ms: Date.now() - this.downSince },
      'The Redis connection is back.',
    );
    this.downSince = undefined;
  }
}
