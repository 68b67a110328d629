// Where a receiver hands acknowledged data to its pipeline: the one place that decides whether a
// request may be acknowledged, and keeps the promise once it has been.
//
//   accept(request) ── memory over its limit? ──► ThrottleError (429: the client retries)
//        │ journal append ── full / failing? ──► IntakeUnavailableError (503: the client retries)
//        │ decode ── malformed? ──► the decoder's error (400); the journaled copy is settled
//        ▼
//   next.consume(data, { ...context, delivery })      the receiver answers 2xx when this resolves
//        │
//   delivery settled (every item sent, stored durably, or dropped and counted) ──► journal.settle
//
// On start the journal's unsettled requests are replayed through the same path, in the
// background, at the pace the pipeline takes them. What is held in memory is bounded by bytes,
// counted from before a request's body is read (see `admit`) until its delivery settles.

import { setTimeout as sleep } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import type { ComponentSettings, Consumer } from '../pipeline/component.ts';
import type { DataOf, DataType, RequestContext } from '../pipeline/data.ts';
import { countItems } from '../pipeline/data.ts';
import { Delivery } from '../pipeline/delivery.ts';
import { ThrottleError, errorMessage, isPermanent } from '../pipeline/errors.ts';
import { gauge } from '../telemetry/metrics.ts';
import type { JournalEntry } from './journal.ts';
import { Journal, JournalFullError, JournalRecordTooLargeError, JournalWriteError } from './journal.ts';
import type { JournalConfig } from './schema.ts';

/** Retry-After when the journal cannot be written, in ms: long enough for an operator's disk cleanup to matter. */
const UNAVAILABLE_RETRY_AFTER_MS = 5000;
/** An outage of the journal is over once no request was refused for this long (one WARN, one INFO). */
const OUTAGE_QUIET_MS = 10_000;
/**
 * Memory a request takes, per byte of its decompressed body, from the moment it is admitted until
 * the pipeline has taken it: the body, and the decoded spans (3.9 bytes of heap per protobuf byte
 * on bench/pipeline's GenAI workload). Counting only the body let requests waiting for the CPU
 * hold five times the limit.
 */
const DECODED_EXPANSION = 5;
/** Retry-After when memory is over its limit, in ms. */
const MEMORY_RETRY_AFTER_MS = 1000;
/** Pause before a request given up downstream is offered again: the cause (a full disk) needs time. */
const REDELIVERY_DELAY_MS = 5000;
/** Backoff of replaying a request that the pipeline could not take. */
const REPLAY_BACKOFF_MS = { initial: 100, max: 5000 };

/**
 * The journal cannot take the request (disk full, cap reached, I/O error): answer 503 (gRPC:
 * `RESOURCE_EXHAUSTED` when the journal is at its cap, `UNAVAILABLE` when it cannot be written).
 */
export class IntakeUnavailableError extends Error {
  override readonly name = 'IntakeUnavailableError';
  constructor(
    message: string,
    readonly retryAfterMs: number,
    /** `journal_full`: the journal is at its `max_bytes` cap; `journal_write_failed`: the disk refused a write. */
    readonly reason: 'journal_full' | 'journal_write_failed',
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The request can never be journaled (larger than the journal's cap): answer 413. */
export { JournalRecordTooLargeError };

export interface DurableIntakeOptions<T extends DataType, H> {
  readonly settings: ComponentSettings;
  readonly dataType: T;
  /** The receiver's `journal` block; undefined or disabled: no journal (memory bound only). */
  readonly journal: JournalConfig | undefined;
  readonly memoryLimitBytes: number;
  readonly next: Consumer<T>;
  /** Rebuilds a journaled request for replay; throws when it cannot (counted as corrupt). */
  readonly restore: (header: H, body: Buffer) => { data: DataOf[T]; context: RequestContext };
}

export class DurableIntake<T extends DataType, H> {
  private readonly journal?: Journal<H>;
  private readonly logger;
  private readonly metrics;
  private pendingBytes = 0;
  private readonly stopReplay = new AbortController();
  private replaying?: Promise<void>;
  /** Entries given up downstream, waiting to be delivered again from the journal. */
  private readonly redeliveries: JournalEntry[] = [];
  private redelivering?: Promise<void>;
  /** Set while the journal refuses requests: when it started, and how many were refused. */
  private outage?: { since: number; lastRefusalAt: number; refused: number; reason: string };

  constructor(private readonly options: DurableIntakeOptions<T, H>) {
    const { settings, journal } = options;
    this.logger = settings.telemetry.logger;
    if (journal?.enabled) {
      this.journal = new Journal<H>({
        directory: settings.host.resolvePath(journal.directory),
        maxBytes: journal.max_bytes,
        segmentBytes: journal.segment_bytes,
        fsyncIntervalMs: journal.fsync_interval_ms,
        onBackgroundError: (error, what) =>
          this.logger.warn(
            { err: errorMessage(error) },
            `Journal bookkeeping failed (${what}); some delivered requests may be sent again after a restart.`,
          ),
      });
    }
    this.metrics = intakeMetrics(settings, options.dataType, () => ({
      memoryBytes: this.pendingBytes,
      ...(this.journal ? this.journal.stats() : { bytes: 0, segments: 0, pendingRecords: 0 }),
    }));
  }

  /** Whether acknowledged data is journaled (leaving a delivery unsettled then loses nothing). */
  get durable(): boolean {
    return this.journal !== undefined;
  }

  /** Opens the journal and starts replaying what an earlier run left undelivered. */
  async start(): Promise<void> {
    if (!this.journal) return;
    const found = await this.journal.open();
    if (found.corruptFiles.length > 0) {
      this.logger.error(
        { files: found.corruptFiles, directory: this.journal.directory },
        'Unreadable journal files were set aside as *.corrupt.',
      );
    }
    if (found.records > 0) {
      this.logger.info(
        { requests: found.records, bytes: found.bytes, directory: this.journal.directory },
        'Replaying requests the journal holds from an earlier run.',
      );
      this.replaying = this.replay().catch((error: unknown) => {
        this.logger.error(
          { err: error },
          'Replaying the journal failed; what is left stays in the journal for the next start.',
        );
      });
    }
  }

  /**
   * Takes one request: resolves once it is journaled and the pipeline accepted it — the moment
   * the receiver may acknowledge it. Rejects with ThrottleError (memory limit, or the pipeline's `refusal()`), IntakeUnavailableError
   * (journal), JournalRecordTooLargeError, what `decode` threw, or what the pipeline rejected with.
   *
   * `decode` turns the body into data once the body is journaled, not before: requests wait for
   * the journal while the event loop is busy, and a waiting body is one buffer outside the heap,
   * where its decoded spans would be thousands of objects that live long enough to be promoted to
   * V8's old generation, which then has to grow and be collected (bench/pipeline/README.md,
   * "decoding after the journal"). It returns undefined when there is nothing to deliver (no
   * spans, or every span rejected); that request, like one `decode` throws for, is settled at
   * once and never replayed.
   */
  async accept(
    header: H,
    body: Buffer,
    decode: () => DataOf[T] | undefined,
    context: RequestContext,
    admission: Admission = this.admit(0),
  ): Promise<void> {
    admission.takeOver();
    // A pipeline that refuses whatever comes (its memory limiter) is asked before the request is
    // journaled and decoded, which is most of what a refused request would cost. Not before its
    // body is read (at admission): a client still sending a body that is answered unread sees its
    // connection closed under it (EPIPE) instead of the 429 it would retry on.
    const refusal = this.options.next.refusal?.();
    if (refusal !== undefined) {
      admission.release();
      this.metrics.refused('pipeline_refusing');
      throw refusal;
    }
    let entry: JournalEntry | undefined;
    let data: DataOf[T] | undefined;
    // `append` may have to decode the body already (when the journal cannot take it).
    let decoded: { data: DataOf[T] | undefined } | undefined;
    const decodeOnce = () => (decoded ??= { data: decode() }).data;
    try {
      admission.resize(body.length * DECODED_EXPANSION);
      entry = await this.append(header, body, decodeOnce);
      data = decodeOnce();
    } finally {
      // Refused, malformed, or without spans: nothing to deliver, nothing to keep.
      if (data === undefined) {
        if (entry) this.journal!.settle(entry);
        admission.release();
      }
    }
    if (data === undefined) return;
    try {
      // From here the delivery releases the admission, whatever the pipeline does.
      await this.dispatch(data, context, admission, entry);
      // Taken by the pipeline: the decoded request is garbage now, and what stays until delivery
      // (runs in batches, compressed uploads) is smaller than the request itself.
      admission.resize(body.length);
    } catch (error) {
      // Not acknowledged: the client sends it again, so the journal need not keep this copy.
      if (entry) this.journal!.settle(entry);
      throw error;
    }
  }

  /**
   * Reserves room in the memory bound for a request before it is read: `bytes` is what it declares
   * (its Content-Length; 0 when unknown), corrected by `resize` once its decompressed size is
   * known. Throws ThrottleError (429) when the bound is reached. Checking here, and not once the
   * request is decoded, is what bounds memory under overload: requests that wait for the CPU or
   * the journal are held too, and a request refused before its body is read costs almost nothing.
   * The caller releases the admission if it does not hand it to `accept` (which takes it over).
   */
  admit(bytes: number): Admission {
    this.refuseOverLimit(bytes * DECODED_EXPANSION);
    return new Admission(this.memory, bytes * DECODED_EXPANSION);
  }

  /** What an Admission changes: the bytes held, and the check against the limit. */
  private readonly memory: MemoryAccount = {
    hold: (bytes) => (this.pendingBytes += bytes),
    refuseOverLimit: (bytes) => this.refuseOverLimit(bytes),
  };

  /** Throws ThrottleError when `bytes` more would pass the memory limit. */
  private refuseOverLimit(bytes: number): void {
    if (!this.overMemoryLimit(bytes)) return;
    this.metrics.refused('memory_limit');
    throw new ThrottleError(
      `${this.pendingBytes} bytes of requests are held in memory until delivered (limit ${this.options.memoryLimitBytes})`,
      MEMORY_RETRY_AFTER_MS,
    );
  }

  /** Stops replaying; closes the journal (settling keeps working for what is still delivered). */
  async shutdown(): Promise<void> {
    this.stopReplay.abort();
    await this.replaying;
    await this.redelivering;
    if (!this.journal) return;
    await this.journal.close();
    const left = this.journal.stats().pendingRecords;
    if (left > 0)
      this.logger.info(
        { requests: left },
        'Requests not yet delivered stay in the journal and are replayed at the next start.',
      );
  }

  /**
   * Journals a request (nothing without a journal). When the journal cannot take it, `decode`
   * judges it first: bad input is still answered as bad input (its error is thrown), and a request
   * with nothing to deliver as accepted (undefined is returned): a client must not retry what
   * there is nothing to keep of.
   */
  private async append(
    header: H,
    body: Buffer,
    decode: () => DataOf[T] | undefined,
  ): Promise<JournalEntry | undefined> {
    if (!this.journal) return undefined;
    try {
      const entry = await this.journal.append(header, body);
      // A disk at its limit flaps between room and none: one outage ends after a quiet spell.
      if (this.outage && Date.now() - this.outage.lastRefusalAt >= OUTAGE_QUIET_MS) this.endOutage();
      return entry;
    } catch (error) {
      if (decode() === undefined) return undefined;
      if (error instanceof JournalRecordTooLargeError) throw error;
      if (error instanceof JournalFullError || error instanceof JournalWriteError) {
        this.noteOutage(error);
        throw new IntakeUnavailableError(
          `cannot keep the request: ${error.message}`,
          UNAVAILABLE_RETRY_AFTER_MS,
          error instanceof JournalFullError ? 'journal_full' : 'journal_write_failed',
          { cause: error },
        );
      }
      throw error;
    }
  }

  /**
   * Hands data to the pipeline with a delivery. Once every holder has settled its part, the journal
   * entry is settled; if a holder gave its part up without storing it, the entry is delivered again.
   * Nothing happens to the entry when the pipeline did not accept the data (the caller decides).
   */
  private async dispatch(
    data: DataOf[T],
    context: RequestContext,
    admission: Admission,
    entry: JournalEntry | undefined,
  ): Promise<void> {
    let accepted = false;
    const delivery = new Delivery(this.durable, (outcome) => {
      admission.release();
      if (!accepted || !entry) return;
      if (outcome === 'settled') this.journal!.settle(entry);
      else this.redeliver(entry);
    });
    try {
      await this.options.next.consume(data, { ...context, delivery });
      accepted = true;
    } finally {
      delivery.release();
    }
  }

  /**
   * A request whose data was given up downstream without being stored (the exporter could neither
   * send nor write it to disk): it is read back from the journal and offered again after a pause,
   * so that memory is freed meanwhile and the journal — not a restart — brings it back.
   */
  private redeliver(entry: JournalEntry): void {
    // At shutdown it simply stays in the journal for the next start.
    if (this.stopReplay.signal.aborted) return;
    this.redeliveries.push(entry);
    this.redelivering ??= this.redeliverAll().finally(() => (this.redelivering = undefined));
  }

  private async redeliverAll(): Promise<void> {
    const { signal } = this.stopReplay;
    while (this.redeliveries.length > 0 && !signal.aborted) {
      await sleep(REDELIVERY_DELAY_MS, undefined, { signal }).catch(() => undefined);
      const entries = this.redeliveries.splice(0);
      if (signal.aborted) return;
      this.logger.info(
        { requests: entries.length },
        'Delivering again requests the pipeline gave up; the journal kept them.',
      );
      for (const entry of entries) {
        if (signal.aborted) return;
        let restored: { data: DataOf[T]; context: RequestContext };
        let bytes: number;
        try {
          const record = await this.journal!.read(entry);
          restored = this.options.restore(record.header, record.body);
          bytes = record.body.length;
        } catch (error) {
          this.lostOnReplay(errorMessage(error), 1);
          this.journal!.settle(entry);
          continue;
        }
        await this.replayOne(restored, bytes, entry, signal);
      }
    }
  }

  private async replay(): Promise<void> {
    const { signal } = this.stopReplay;
    let replayed = 0;
    for await (const record of this.journal!.replay()) {
      if (signal.aborted) return;
      if ('corrupt' in record) {
        this.lostOnReplay(record.corrupt, 1);
        this.journal!.settle(record.entry);
        continue;
      }
      let restored: { data: DataOf[T]; context: RequestContext };
      try {
        restored = this.options.restore(record.header, record.body);
      } catch (error) {
        this.lostOnReplay(errorMessage(error), 1);
        this.journal!.settle(record.entry);
        continue;
      }
      await this.replayOne(restored, record.body.length, record.entry, signal);
      replayed++;
    }
    if (!signal.aborted) this.logger.info({ requests: replayed }, 'The journal replay is complete.');
  }

  /** Offers one replayed request until the pipeline takes it (or shutdown): it was acknowledged once. */
  private async replayOne(
    request: { data: DataOf[T]; context: RequestContext },
    bytes: number,
    entry: JournalEntry,
    signal: AbortSignal,
  ) {
    let backoff = REPLAY_BACKOFF_MS.initial;
    // What a live request is admitted at before the pipeline takes it (see admit).
    const admitted = bytes * DECODED_EXPANSION;
    while (!signal.aborted) {
      // Replay shares the memory bound with live traffic.
      if (this.overMemoryLimit(admitted)) {
        await sleep(REPLAY_BACKOFF_MS.initial, undefined, { signal }).catch(() => undefined);
        continue;
      }
      try {
        const admission = new Admission(this.memory, admitted);
        await this.dispatch(request.data, request.context, admission, entry);
        admission.resize(bytes);
        this.metrics.replayed(countItems(request.data));
        return;
      } catch (error) {
        if (isPermanent(error)) {
          this.lostOnReplay(errorMessage(error), countItems(request.data));
          this.journal!.settle(entry);
          return;
        }
        await sleep(backoff, undefined, { signal }).catch(() => undefined);
        backoff = Math.min(backoff * 2, REPLAY_BACKOFF_MS.max);
      }
    }
  }

  /** Whether taking `bytes` more would pass the memory limit (an empty pipeline takes any one request). */
  private overMemoryLimit(bytes: number): boolean {
    return this.pendingBytes > 0 && this.pendingBytes + bytes > this.options.memoryLimitBytes;
  }

  private lostOnReplay(reason: string, items: number): void {
    this.metrics.dropped('corrupt', items);
    this.logger.error({ reason, items }, 'A journaled request could not be replayed; it is lost.');
  }

  private noteOutage(error: Error): void {
    this.metrics.refused(error instanceof JournalFullError ? 'journal_full' : 'journal_write_failed');
    if (this.outage) {
      this.outage.refused++;
      this.outage.lastRefusalAt = Date.now();
      return;
    }
    this.outage = { since: Date.now(), lastRefusalAt: Date.now(), refused: 1, reason: error.message };
    this.logger.warn(
      { reason: error.message, directory: this.journal!.directory },
      'The journal cannot be written; requests get 503 until it can.',
    );
  }

  private endOutage(): void {
    const outage = this.outage!;
    this.outage = undefined;
    this.logger.info(
      { refused_requests: outage.refused, duration_ms: Date.now() - outage.since },
      'The journal is written again; requests are accepted.',
    );
  }
}

interface MemoryAccount {
  hold(bytes: number): void;
  refuseOverLimit(bytes: number): void;
}

/** Room a request holds in its intake's memory bound, from before it is read until it is delivered. */
export class Admission {
  private released = false;
  private taken = false;

  constructor(
    private readonly intake: MemoryAccount,
    private bytes: number,
  ) {
    intake.hold(bytes);
  }

  /** Corrects the reservation to the request's real size; throws ThrottleError if growing passes the limit. */
  resize(bytes: number): void {
    if (this.released || bytes === this.bytes) return;
    if (bytes > this.bytes) {
      // The intake must be judged without this request's own reservation, as admit() judged it.
      this.intake.hold(-this.bytes);
      try {
        this.intake.refuseOverLimit(bytes);
      } finally {
        this.intake.hold(this.bytes);
      }
    }
    this.intake.hold(bytes - this.bytes);
    this.bytes = bytes;
  }

  /**
   * Grows the reservation to what a body of `bodyBytes` (decompressed) holds until it is
   * delivered, as `accept` counts it; never shrinks it. Called as the body is read, so that a body
   * that will not fit is refused (ThrottleError) while it is still being read or inflated.
   */
  reserveForBody(bodyBytes: number): void {
    if (bodyBytes * DECODED_EXPANSION > this.bytes) this.resize(bodyBytes * DECODED_EXPANSION);
  }

  /** The intake owns it from now on: it releases it when the request is delivered or refused. */
  takeOver(): void {
    this.taken = true;
  }

  /** Gives the room back unless the intake has taken it over. */
  abandon(): void {
    if (!this.taken) this.release();
  }

  /** Gives the room back; later calls do nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.intake.hold(-this.bytes);
  }
}

type HeldReader = () => { memoryBytes: number; bytes: number; pendingRecords: number };

/** Every intake's reader, per registry: one gauge callback reports them all. */
const heldReaders = new WeakMap<Registry, Map<string, HeldReader>>();

function intakeMetrics(settings: ComponentSettings, dataType: string, read: HeldReader) {
  const { id } = settings;
  const { meter } = settings.telemetry;
  const registry = meter.registry;
  const refusals = meter.counter({
    name: 'tracepipe_receiver_refused_requests_total',
    help: 'Requests refused before they were acknowledged: memory_limit (429), journal_full or journal_write_failed (503).',
    labelNames: ['reason'],
  });
  const replayed = meter.counter({
    name: 'tracepipe_journal_replayed_items_total',
    help: 'Items replayed from the journal after a restart.',
  });
  let readers = heldReaders.get(registry);
  if (!readers) heldReaders.set(registry, (readers = new Map()));
  readers.set(id, read);
  const all = readers;
  // One callback per gauge reports every intake of the registry, each under its own id.
  gauge<'component_id' | 'where'>(registry, {
    name: 'tracepipe_receiver_held_bytes',
    help: 'Bytes held for requests until they are delivered: in memory, as counted against memory_limit_bytes from before their body is read (`memory`), and in the journal on disk (`journal`).',
    labelNames: ['component_id', 'where'],
    collect() {
      for (const [component_id, reader] of all) {
        const now = reader();
        this.set({ component_id, where: 'memory' }, now.memoryBytes);
        this.set({ component_id, where: 'journal' }, now.bytes);
      }
    },
  });
  gauge<'component_id'>(registry, {
    name: 'tracepipe_journal_pending_requests',
    help: 'Journaled requests not yet delivered.',
    labelNames: ['component_id'],
    collect() {
      for (const [component_id, reader] of all) this.set({ component_id }, reader().pendingRecords);
    },
  });
  return {
    refused(reason: string): void {
      refusals.inc({ reason });
    },
    replayed(items: number): void {
      replayed.inc(items);
    },
    dropped(reason: string, items: number): void {
      meter.dropped(dataType, reason, items);
    },
  };
}
