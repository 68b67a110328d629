// How a server instance's runs reach their readers and the other instances: in this process only
// (one instance, the default), or through Redis (`broker.redis_uri`: several instances on one
// database), where stream events, cancels and wake-ups reach every instance.

import type { Logger } from 'pino';
import { StreamBroker } from './broker.ts';
import type { EventBroker } from './broker.ts';
import { RedisBus } from './redis.ts';
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
  readonly logger: Logger;
}

export class RunMessaging {
  readonly broker: EventBroker;
  private readonly bus?: RedisBus;
  private runSignals?: RedisRunSignals;

  constructor(private readonly options: RunMessagingOptions) {
    const { redisUri, maxEvents, onDrop, logger } = options;
    if (redisUri) {
      this.bus = new RedisBus({ uri: redisUri, prefix: options.keyPrefix, logger });
      this.broker = new RedisStreamBroker(this.bus, { maxEvents, onDrop, logger });
    } else {
      this.broker = new StreamBroker({ maxEvents, maxFinishedRuns: 1000, onDrop });
    }
  }

  /** Where the broker lives, for logs: `in-process` or `redis`. */
  get kind(): 'in-process' | 'redis' {
    return this.bus ? 'redis' : 'in-process';
  }

  /** The signals to the other instances (none in-process); create once the runner exists. */
  signals(runner: RedisRunSignalsOptions['runner'], wakeWorkers: () => void): RunSignals | undefined {
    if (!this.bus) return undefined;
    this.runSignals ??= new RedisRunSignals(this.bus, { runner, wakeWorkers, logger: this.options.logger });
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
