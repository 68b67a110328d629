// How a server instance's runs reach their readers and the other instances: in this process only
// (one instance on SQLite, the default), or through Redis (`broker.redis_uri`: several instances
// on one database), where stream events, cancels and wake-ups reach every instance. On PostgreSQL
// without Redis, stream events stay in the process executing the run, and wake-ups and the ends
// of runs reach the other instances through PostgreSQL notifications (`postgres-signals.ts`).

import type { Logger } from 'pino';
import { StreamBroker } from './broker.ts';
import type { EventBroker } from './broker.ts';
import type { PostgresRunSignals } from './postgres-signals.ts';
import type { RedisBus } from './redis.ts';
import { RedisStreamBroker } from './redis-broker.ts';
import { RedisRunSignals } from './redis-signals.ts';
import type { RedisRunSignalsOptions, RunSignals } from './redis-signals.ts';

export interface RunMessagingOptions {
  /** Empty: in this process only. */
  readonly redisUri: string;
  readonly keyPrefix: string;
  /** Events kept per run. */
  readonly maxEvents: number;
  readonly onDrop?: (runId: string, count: number) => void;
  /** The PostgreSQL database other instances may share (none on SQLite); its notifications are used without Redis. */
  readonly database?: { readonly uri: string; readonly connectTimeoutMs: number };
  readonly logger: Logger;
}

/** What the other instances' signals tell this one, besides waking its workers. */
export interface SignalHandlers {
  /** This instance or (`elsewhere`) another one recorded that the run reached its final state. */
  readonly onEnded: (runId: string, elsewhere: boolean) => void;
  /** Signals could not be heard until now: look at everything they may have concerned. */
  readonly onResync: () => void;
}

/** The client classes of what the options configure: Redis's, or PostgreSQL's notifications. */
interface MessagingClients {
  readonly RedisBus?: typeof RedisBus;
  readonly PostgresRunSignals?: typeof PostgresRunSignals;
}

export class RunMessaging {
  readonly broker: EventBroker;
  private readonly bus?: RedisBus;
  private runSignals?: RedisRunSignals | PostgresRunSignals;

  /**
   * The messaging `options` configure. Redis's client (ioredis) and PostgreSQL's (pg) are large
   * modules: each is imported here only when configured, so that a server on SQLite without Redis
   * (the default) never loads them.
   */
  static async open(options: RunMessagingOptions): Promise<RunMessaging> {
    const [redis, postgres] = await Promise.all([
      options.redisUri ? import('./redis.ts') : undefined,
      !options.redisUri && options.database ? import('./postgres-signals.ts') : undefined,
    ]);
    return new RunMessaging(options, {
      RedisBus: redis?.RedisBus,
      PostgresRunSignals: postgres?.PostgresRunSignals,
    });
  }

  private constructor(
    private readonly options: RunMessagingOptions,
    private readonly clients: MessagingClients,
  ) {
    const { redisUri, maxEvents, onDrop, logger } = options;
    if (redisUri && clients.RedisBus) {
      this.bus = new clients.RedisBus({ uri: redisUri, prefix: options.keyPrefix, logger });
      this.broker = new RedisStreamBroker(this.bus, { maxEvents, onDrop, logger });
    } else {
      this.broker = new StreamBroker({
        maxEvents,
        maxFinishedRuns: 1000,
        onDrop,
        onEnd: (runId) => (this.runSignals as PostgresRunSignals | undefined)?.ended(runId),
      });
    }
  }

  /** Opens the connections to Redis, if any (see `RedisBus.connect`); the backend does as it opens. */
  connect(): void {
    this.bus?.connect();
  }

  /** Where the broker lives, for logs: `in-process` or `redis`. */
  get kind(): 'in-process' | 'redis' {
    return this.bus ? 'redis' : 'in-process';
  }

  /**
   * The signals to the other instances (none on SQLite without Redis); create once the runner
   * exists. `handlers` are called only from `start()` on.
   */
  signals(
    runner: RedisRunSignalsOptions['runner'],
    wakeWorkers: () => void,
    handlers: SignalHandlers,
  ): RunSignals | undefined {
    const { logger, database } = this.options;
    if (this.bus) this.runSignals ??= new RedisRunSignals(this.bus, { runner, wakeWorkers, logger });
    else if (database && this.clients.PostgresRunSignals) {
      this.runSignals ??= new this.clients.PostgresRunSignals({
        databaseUri: database.uri,
        connectTimeoutMs: database.connectTimeoutMs,
        wakeWorkers,
        ...handlers,
        logger,
      });
    }
    return this.runSignals;
  }

  /** A run started executing in this process. */
  started(runId: string): void {
    this.runSignals?.started(runId);
  }

  /** Starts listening to the other instances. */
  async start(): Promise<void> {
    await this.runSignals?.start();
  }

  /** Writes what is still buffered (until `deadline`, epoch ms) and closes the connections. */
  async close(deadline: number): Promise<void> {
    await this.runSignals?.stop();
    await this.broker.close(deadline);
    await this.bus?.close();
  }
}
