// The `batch` processor: gives every run its `dotted_order` (holding children until their parent's
// order is known, see internal/tree.ts) and groups released runs into upload batches per API key
// (internal/outbox.ts), flushed by size, bytes and interval. Memory is bounded: past
// `max_held_runs` / `max_held_bytes`, or `max_backlog_runs` released runs that a downstream which is
// behind has not taken, consume() refuses with a ThrottleError instead of growing.

import { setTimeout as sleep } from 'node:timers/promises';
import type { ComponentSettings, Consumer, Processor, RequestContext, Run, RunBatch, RunJson } from 'tracepipe/plugin';
import { ThrottleError, attachRunJson, errorMessage, estimateJsonBytes, runBodyJson, runJson } from 'tracepipe/plugin';
import type { BatchProcessorConfig } from './config.ts';
import type { FlushTrigger, SealedBatch } from './internal/outbox.ts';
import { Outbox } from './internal/outbox.ts';
import type { HeldRun } from './internal/tree.ts';
import { RunTree } from './internal/tree.ts';

// JSON added to a run by its dotted order: `,"dotted_order":""` plus the order itself.
const DOTTED_ORDER_OVERHEAD = 18;
// Pause between delivery attempts while shutting down.
const SHUTDOWN_RETRY_MS = 50;
// At most one log line per this interval about failed deliveries; retries are not news per batch.
const FAILURE_LOG_INTERVAL_MS = 10_000;

export class BatchProcessor implements Processor<'runs'> {
  readonly mutatesData = true;
  private readonly tree: RunTree;
  private readonly outbox: Outbox;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private shutdownDone?: Promise<void>;
  /** Ids of runs larger than a batch, sent alone since the last log line about them. */
  private oversized: string[] = [];
  /** Orphans placed since the last log line about them. */
  private orphansSinceLog = 0;
  /** Failed deliveries since the last log line about them. */
  private failureLog = { at: 0, attempts: 0 };
  private readonly metrics;
  /**
   * Whether released runs carry their JSON text on for the exporter (src/model/run-json.ts): only
   * when nothing downstream writes to them, or the text could differ from the run.
   */
  private readonly attachText: boolean;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: BatchProcessorConfig,
    next: Consumer<'runs'>,
  ) {
    const { meter } = settings.telemetry;
    this.attachText = !next.mutatesData;
    this.metrics = {
      held: meter.gauge({
        name: 'tracepipe_batch_runs_held',
        help: 'Runs the batch processor holds: waiting for their parent, or buffered and awaiting delivery.',
        labelNames: ['state'],
      }),
      backlog: meter.gauge({
        name: 'tracepipe_batch_backlog_runs',
        help: 'Released runs held for a downstream that is behind (bounded by max_backlog_runs).',
      }),
      remembered: meter.gauge({
        name: 'tracepipe_batch_remembered_bytes',
        help: 'Memory of the dotted orders and root aliases remembered for late children (bounded by max_remembered_bytes).',
      }),
      orphans: meter.counter({
        name: 'tracepipe_batch_orphans_total',
        help: 'Runs whose parent did not arrive within orphan_timeout_ms (or before shutdown), placed by the orphan policy.',
        labelNames: ['policy'],
      }),
      flushes: meter.counter({
        name: 'tracepipe_batch_flushes_total',
        help: 'Upload batches sealed, by what triggered them (size, bytes, interval, shutdown).',
        labelNames: ['trigger'],
      }),
      throttled: meter.counter({
        name: 'tracepipe_batch_throttled_runs_total',
        help: 'Runs refused with a throttle error because the held-runs or held-bytes limit was reached.',
      }),
      dropped: (reason: string, runs = 1) => meter.dropped('runs', reason, runs),
    };

    this.tree = new RunTree(
      {
        orphanTimeoutMs: config.orphan_timeout_ms,
        orphanPolicy: config.orphan_policy,
        rememberMs: config.dotted_order_ttl_ms,
        rememberMax: config.max_remembered_runs,
        rememberBytes: config.max_remembered_bytes,
      },
      (held) => this.released(held),
      () => {
        this.metrics.orphans.inc({ policy: config.orphan_policy });
        this.orphansSinceLog++;
      },
    );
    this.outbox = new Outbox(
      { batchSize: config.batch_size, maxBatchBytes: config.max_buffer_bytes, retryDelayMs: config.flush_interval_ms },
      next,
      {
        flushed: (trigger: FlushTrigger) => this.metrics.flushes.inc({ trigger }),
        // (`items_sent_total` is counted by the framework on this processor's output.)
        delivered: () => {},
        rejected: (batch, error) => {
          this.metrics.dropped('rejected_downstream', batch.runs.length);
          settings.telemetry.logger.error(
            { runs: batch.runs.length, err: errorMessage(error) },
            'Downstream rejected a batch as invalid; it was dropped.',
          );
        },
        failed: (batch, error) => this.noteFailedDelivery(batch.runs.length, error),
      },
    );
  }

  async start(_signal: AbortSignal): Promise<void> {
    if (this.stopped || this.timer) return;
    this.timer = setInterval(() => this.tick('interval'), this.config.flush_interval_ms);
  }

  async consume(batch: RunBatch, context: RequestContext): Promise<void> {
    if (this.stopped) throw new Error('batch processor is shut down');
    const incoming: HeldRun[] = batch.runs.map((run) => heldRun(run, context));
    this.admit(incoming, batch);
    // Each run holds its request's delivery until the batch carrying it is delivered downstream.
    if (context.delivery) for (let i = 0; i < incoming.length; i++) context.delivery.retain();

    this.tree.applyHints(batch.hints);
    for (const held of incoming) this.tree.add(held);
    this.afterChanges();
  }

  /** Refuses the whole batch (nothing is taken) when holding it would pass a memory limit. */
  private admit(incoming: readonly HeldRun[], batch: RunBatch): void {
    const heldRuns = this.tree.waitingRuns + this.outbox.runs;
    const heldBytes = this.tree.waitingBytes + this.outbox.bytes;
    // An empty processor takes any one batch, so that a batch larger than a limit is not refused
    // forever; and a batch bringing a parent that held runs wait for is taken too, since it frees
    // them (otherwise children filling the limit would lock their own parents out).
    if (heldRuns === 0) return;
    if (
      this.tree.unblocks(
        incoming.map((held) => held.run.id),
        batch.hints,
      )
    )
      return;
    const bytes = incoming.reduce((sum, held) => sum + held.bytes, 0);
    if (heldRuns + incoming.length > this.config.max_held_runs || heldBytes + bytes > this.config.max_held_bytes) {
      this.throttle(`batch processor holds ${heldRuns} runs (${heldBytes} bytes); retry later`, incoming.length);
    }
    // Runs that downstream has stopped taking only wait for it: beyond the bound, the clients wait
    // instead (bench/pipeline/README.md: 14,000-26,000 of them, ~2.7 KB each, under overload).
    const backlog = this.outbox.backlogRuns;
    if (backlog > 0 && backlog + incoming.length > this.config.max_backlog_runs) {
      this.throttle(`downstream is behind by ${backlog} runs; retry later`, incoming.length);
    }
  }

  private throttle(message: string, runs: number): never {
    this.metrics.throttled.inc(runs);
    throw new ThrottleError(message, this.config.flush_interval_ms);
  }

  /** Downstream refused a batch for now (full, or failing): it is retried; say so at most every 10 s. */
  private noteFailedDelivery(runs: number, error: unknown): void {
    const log = this.failureLog;
    log.attempts++;
    const now = Date.now();
    if (now - log.at < FAILURE_LOG_INTERVAL_MS) return;
    this.settings.telemetry.logger.warn(
      { runs, failed_attempts: log.attempts, err: errorMessage(error) },
      'Delivering batches downstream failed; they are held and retried.',
    );
    this.failureLog = { at: now, attempts: 0 };
  }

  /** A run whose dotted order is set goes into its tenant's batch. */
  private released(held: HeldRun): void {
    const { run } = held;
    let json: RunJson | undefined;
    if (held.body) {
      try {
        json = runJson(run, held.body);
      } catch {
        // Left to the exporter, which refuses the run whole (multipart_writer's UnencodableRunError).
      }
    }
    let bytes = json ? json.length : held.bytes + DOTTED_ORDER_OVERHEAD + run.dotted_order!.length;
    // The length of the text (or the estimate) can be short of the UTF-8 size: near the limit, measure.
    if (bytes > this.config.max_buffer_bytes / 2)
      bytes = json ? utf8Bytes(json) : Buffer.byteLength(JSON.stringify(run));
    // A run larger than a batch may be goes out in a batch of its own (the outbox seals around it),
    // as the reference proxy sends it: whether the destination takes it is the exporter's to say
    // (the backend's ingest takes bodies above this limit; the local store has none).
    if (bytes > this.config.max_buffer_bytes) this.oversized.push(run.id);
    if (json && this.attachText) attachRunJson(run, json);
    this.outbox.add(run, bytes, held.context);
  }

  private tick(trigger: 'interval'): void {
    this.outbox.tick();
    this.tree.expire();
    this.outbox.sealAll(trigger);
    this.afterChanges();
  }

  private afterChanges(): void {
    // One log line per call however many runs were larger than a batch: a burst is not log lines.
    if (this.oversized.length > 0) {
      this.settings.telemetry.logger.info(
        { runs: this.oversized.length, first_run_id: this.oversized[0], limit: this.config.max_buffer_bytes },
        'Runs larger than max_buffer_bytes were sent in batches of their own.',
      );
      this.oversized = [];
    }
    if (this.orphansSinceLog > 0) {
      this.settings.telemetry.logger.info(
        { runs: this.orphansSinceLog, policy: this.config.orphan_policy },
        'Runs whose parent never arrived were placed by the orphan policy.',
      );
      this.orphansSinceLog = 0;
    }
    this.updateGauges();
    this.pump();
  }

  private pump(): void {
    // Deliveries report their own failures through the outbox events and never reject.
    void this.outbox.deliver().then(() => this.updateGauges());
  }

  private updateGauges(): void {
    this.metrics.held.set({ state: 'waiting' }, this.tree.waitingRuns);
    this.metrics.held.set({ state: 'buffered' }, this.outbox.runs);
    this.metrics.backlog.set(this.outbox.backlogRuns);
    this.metrics.remembered.set(this.tree.rememberedBytes);
  }

  shutdown(deadline: number): Promise<void> {
    this.shutdownDone ??= this.drain(deadline);
    return this.shutdownDone;
  }

  /** Releases everything held (orphans fall back at once) and delivers it until the deadline. */
  private async drain(deadline: number): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.tree.expireAll();
    this.outbox.sealAll('shutdown');
    this.afterChanges();
    while (!this.outbox.empty && Date.now() < deadline) {
      // A downstream that never answers must not hold shutdown past its deadline.
      await waitAtMost(this.outbox.deliver({ ignoreBackoff: true }), deadline - Date.now());
      if (this.outbox.empty) break;
      const pause = Math.min(SHUTDOWN_RETRY_MS, deadline - Date.now());
      if (pause > 0) await sleep(pause);
    }
    this.giveUp(this.outbox.abandon());
    this.updateGauges();
  }

  /**
   * Runs still held at the deadline: those a journal keeps are left to it (their deliveries stay
   * unsettled, so they are replayed at the next start); the others are lost, counted and logged.
   */
  private giveUp(abandoned: readonly SealedBatch[]): void {
    let kept = 0;
    let lost = 0;
    for (const batch of abandoned) {
      const durable = batch.deliveries.filter((delivery) => delivery.durable).length;
      kept += durable;
      lost += batch.runs.length - durable;
    }
    if (kept > 0) {
      this.settings.telemetry.logger.info(
        { runs: kept },
        'Shutdown deadline passed before these runs could be delivered; the journal keeps them for the next start.',
      );
    }
    if (lost > 0) {
      this.metrics.dropped('shutdown_deadline', lost);
      this.settings.telemetry.logger.error(
        { runs: lost },
        'Shutdown deadline passed before these runs could be delivered; they were dropped.',
      );
    }
  }
}

/**
 * A run taken in: its inputs, outputs and `extra` serialised now (the tree never changes them; the
 * rest is serialised once its dotted order is set), its size from those texts and an estimate of
 * the few other members. A run that cannot be serialised is sized by the estimate alone.
 */
function heldRun(run: Run, context: RequestContext): HeldRun {
  let body;
  try {
    body = runBodyJson(run);
  } catch {
    return { run, context, bytes: estimateJsonBytes(run) };
  }
  let bytes = 2 + (body.inputs?.length ?? 0) + (body.outputs?.length ?? 0) + (body.extra?.length ?? 0);
  for (const key in run) {
    if (key === 'inputs' || key === 'outputs' || key === 'extra' || !Object.hasOwn(run, key)) continue;
    const member = estimateJsonBytes(run[key as keyof Run]);
    if (member > 0) bytes += key.length + 4 + member; // "key": and a comma
  }
  return { run, context, bytes, body };
}

/** The UTF-8 size of a run's text: its length and the extra bytes of characters beyond ASCII. */
function utf8Bytes(json: RunJson): number {
  let bytes = json.length;
  for (const piece of json.main) bytes += Buffer.byteLength(piece) - piece.length;
  if (json.inputs !== undefined) bytes += Buffer.byteLength(json.inputs) - json.inputs.length;
  if (json.outputs !== undefined) bytes += Buffer.byteLength(json.outputs) - json.outputs.length;
  return bytes;
}

/** Resolves when `promise` settles or after `ms`, whichever comes first, leaving no timer behind. */
async function waitAtMost(promise: Promise<void>, ms: number): Promise<void> {
  if (ms <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
