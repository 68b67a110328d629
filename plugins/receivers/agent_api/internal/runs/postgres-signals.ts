// Run signals between server instances that share a PostgreSQL database and no Redis, through
// PostgreSQL's LISTEN/NOTIFY on one channel. Each instance keeps one connection of its own (not
// the pool's) that listens and also sends:
//
//   {"from": <instance>, "wake": true}       a run may be claimed: one idle worker elsewhere looks
//   {"from": <instance>, "ended": <run id>}  the run's record reached its final state (it ended, or
//                                            a cancel settled it): waits for it end, and the
//                                            instance executing it checks whether to stop it
//
// A notification is sent after the record it speaks of was committed, so its receivers read the
// new record. Nothing a notification carries is kept: while this instance's connection is down it
// neither hears nor sends, so the coordinator watches the records it cares about (`live()` says
// when), and every reconnection is followed by one look at all of them (`onResync`), for what was
// missed meanwhile.

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { CancelAction, RunSignals } from './redis-signals.ts';

/** The channel every instance on one database listens on. */
export const RUNS_CHANNEL = 'tracepipe_agent_runs';

/** The listening connection's `application_name`, as `pg_stat_activity` shows it. */
export const LISTENER_NAME = 'tracepipe agent runs listener';

/** How long to wait before connecting again after the listening connection was lost. */
const RECONNECT_MS = 1000;

export interface PostgresRunSignalsOptions {
  readonly databaseUri: string;
  readonly connectTimeoutMs: number;
  /** Wakes one idle worker of this instance. */
  readonly wakeWorkers: () => void;
  /** This instance or (`elsewhere`) another one recorded that `runId` reached its final state. */
  readonly onEnded: (runId: string, elsewhere: boolean) => void;
  /** The connection is (back) up: look at everything a lost notification may have concerned. */
  readonly onResync: () => void;
  readonly logger: Logger;
}

interface Message {
  readonly from?: unknown;
  readonly wake?: unknown;
  readonly ended?: unknown;
}

export class PostgresRunSignals implements RunSignals {
  private readonly instanceId = randomUUID();
  private client?: pg.Client;
  private listening = false;
  private stopped = false;
  /** The notifications sent so far, one after another (see send). */
  private sending: Promise<void> = Promise.resolve();
  private reconnect?: NodeJS.Timeout;

  constructor(private readonly options: PostgresRunSignalsOptions) {}

  /** Whether notifications reach this instance now (else the coordinator watches records). */
  live(): boolean {
    return this.listening;
  }

  /** Connects and listens; a failure is logged and retried, never thrown (the records are watched meanwhile). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnect);
    this.listening = false;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  wake(): void {
    this.send({ from: this.instanceId, wake: true });
  }

  /**
   * Never reaches the executing instance by itself: the caller settles the run's record, then ends
   * its log (`ended`), which tells that instance to stop it.
   */
  async cancel(_runId: string, _action: CancelAction): Promise<boolean> {
    return false;
  }

  started(_runId: string): void {
    // Nothing to announce: the run's lease names the instance executing it.
  }

  /** The run's record reached its final state here: waits here and elsewhere, and executions elsewhere, learn it. */
  ended(runId: string): void {
    this.send({ from: this.instanceId, ended: runId });
    this.options.onEnded(runId, false);
  }

  private send(message: Message): void {
    // Lost while disconnected: the receivers resync when they reconnect, and watch records meanwhile.
    if (!this.listening || !this.client) return;
    const client = this.client;
    const payload = JSON.stringify(message);
    // One statement at a time on the listening connection: pg queues overlapping queries on one
    // client only with a deprecation warning (an error from pg 9 on). Each notification keeps a
    // statement, and so a transaction, of its own: PostgreSQL delivers identical payloads sent in
    // one transaction once, and two wake-ups must stay two.
    this.sending = this.sending
      .then(() => client.query('SELECT pg_notify($1, $2)', [RUNS_CHANNEL, payload]))
      .then(
        () => undefined,
        () => undefined,
      );
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.options.databaseUri,
      connectionTimeoutMillis: this.options.connectTimeoutMs || undefined,
      application_name: LISTENER_NAME,
    });
    client.on('notification', (notification) => this.receive(notification.payload));
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${RUNS_CHANNEL}`);
    } catch (error) {
      this.options.logger.warn(
        { err: error },
        'Cannot listen for run notifications on PostgreSQL; watching run records until it can.',
      );
      this.lost(client);
      return;
    }
    if (this.client !== client) return;
    this.listening = true;
    this.options.onResync();
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.reconnect = setTimeout(() => void this.connect(), RECONNECT_MS);
    this.reconnect.unref();
  }

  private receive(payload: string | undefined): void {
    let message: Message;
    try {
      message = JSON.parse(payload ?? '') as Message;
    } catch {
      return;
    }
    if (message.from === this.instanceId) return;
    if (message.wake === true) this.options.wakeWorkers();
    if (typeof message.ended === 'string') this.options.onEnded(message.ended, true);
  }
}
