// The log line for batches an exporter gave up without storing while the receiver's journal still
// holds them (src/pipeline/delivery.ts): nothing is lost — the journal replays them at the next
// start — so they are not counted as dropped, but an operator should know. One line at shutdown
// for everything left then; while running, at most one line per `intervalMs` with the count since
// the last one.

import type { Logger } from 'pino';

const INTERVAL_MS = 60_000;

export class JournalNotice {
  private batches = 0;
  private items = 0;
  private lastAt = -Infinity;

  constructor(
    private readonly logger: Logger,
    private readonly dataType: string,
    private readonly intervalMs = INTERVAL_MS,
  ) {}

  /** A batch was left to the journal; `quiet` (at shutdown) defers the line to `flush()`. */
  add(items: number, quiet: boolean): void {
    this.batches++;
    this.items += items;
    if (quiet || Date.now() - this.lastAt < this.intervalMs) return;
    this.lastAt = Date.now();
    this.write(
      'warn',
      'Batches could not be sent or stored on disk; the receiver journal keeps them and replays them at the next start.',
    );
  }

  /** Writes what is not logged yet (at the end of shutdown). */
  flush(): void {
    this.write(
      'info',
      'Batches not sent before shutdown are left to the receiver journal, which replays them at the next start.',
    );
  }

  private write(level: 'warn' | 'info', message: string): void {
    if (this.batches === 0) return;
    this.logger[level]({ batches: this.batches, [this.dataType]: this.items }, message);
    this.batches = 0;
    this.items = 0;
  }
}
