// Re-sends what the on-disk queue holds: on start, every `replay_interval_ms`, and at once when a
// live send succeeds after an outage (the destination is back). One pass at a time, oldest batch
// first; `send` decides per batch whether to go on or to stop the pass (destination still away).
// Shared by every exporter with a persistent queue (queued_exporter.ts).

import type { Logger } from 'pino';
import type { ExporterMetrics } from './metrics.ts';
import type { PersistentQueue, StoredBatch, StoredHeader } from './persistent_queue.ts';
import { CorruptBatchError } from './persistent_queue.ts';

export type ReplayVerdict = 'continue' | 'stop';

export interface ReplayerOptions<H extends StoredHeader> {
  readonly queue: PersistentQueue<H>;
  readonly intervalMs: number;
  readonly logger: Logger;
  readonly metrics: ExporterMetrics;
  /** Sends one stored batch and settles it (removing it from the queue on success). */
  readonly send: (entry: StoredBatch<H>, body: Buffer) => Promise<ReplayVerdict>;
  /** Called after each pass (the outage log waits for the backlog to be replayed). */
  readonly onPassEnd?: () => void;
}

export class Replayer<H extends StoredHeader> {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  /** The last pass stopped early because the destination was away (or no pass ran yet). */
  private interrupted = true;
  /** A batch was stored since the last pass began: it has not been tried from disk yet. */
  private storedSincePass = false;

  constructor(private readonly options: ReplayerOptions<H>) {}

  /** Starts the periodic passes and runs one now. */
  start(): void {
    if (this.stopped || this.timer) return;
    this.timer = setInterval(() => this.trigger(), this.options.intervalMs);
    this.trigger();
  }

  /** Asks for a pass now (or right after the current one). */
  trigger(): void {
    if (this.stopped || this.options.queue.depth === 0) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.trigger();
      }
      this.options.onPassEnd?.();
    });
  }

  /**
   * A live send just succeeded: if the last pass was cut short by an outage, start one now rather
   * than at the next tick. (Batches held for other reasons, such as a refused key, wait for the
   * timer, so that a stream of live successes does not re-send them in a loop.)
   */
  destinationBack(): void {
    if (this.interrupted) this.trigger();
  }

  /**
   * A batch was just stored. One stored because its retries ran out means the destination is away:
   * the next live success starts a pass at once (see `destinationBack`).
   */
  stored(afterFailure: boolean): void {
    this.storedSincePass = true;
    if (afterFailure) this.interrupted = true;
  }

  /** Nothing on disk waits to be tried: empty, or every batch was tried since it was stored. */
  get caughtUp(): boolean {
    return this.options.queue.depth === 0 || (!this.running && !this.interrupted && !this.storedSincePass);
  }

  /** Stops the timer and waits for the current pass (whose sends the exporter aborts). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** Publishes the queue's depth, size and age. */
  updateGauges(): void {
    const { queue } = this.options;
    this.options.metrics.diskDepth(queue.depth, queue.items, queue.bytes, queue.oldestAgeSeconds());
  }

  private async pass(): Promise<void> {
    const { queue } = this.options;
    this.storedSincePass = false;
    try {
      for (const entry of queue.list()) {
        if (this.stopped) return;
        let body: Buffer | undefined;
        try {
          body = await queue.read(entry);
        } catch (error) {
          if (!(error instanceof CorruptBatchError)) throw error;
          this.options.metrics.dropped('corrupt', entry.header.items);
          this.options.logger.error(
            { err: error, batch: entry.name, items: entry.header.items },
            'A queued batch could not be read back; it was set aside as *.corrupt.',
          );
          continue;
        }
        if (!body) continue; // Evicted by the cap since the listing (already counted).
        if ((await this.options.send(entry, body)) === 'stop') {
          this.interrupted = true;
          return;
        }
      }
      this.interrupted = false;
    } catch (error) {
      this.options.logger.error({ err: error }, 'Re-sending queued batches failed; the next pass will try again.');
    } finally {
      this.updateGauges();
    }
  }
}
