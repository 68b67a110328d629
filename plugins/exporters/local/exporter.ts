// The `local` exporter: keeps runs in a local SQLite store instead of (or besides) uploading them,
// enforces the store's retention limits (on a timer and after writes), and answers the queries a
// local trace viewer needs (`listTraces`, `getTrace`) on the instance. A batch is acknowledged once
// its transaction commits. The `trace_explorer` extension serves the same store over HTTP.

import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type {
  ComponentDescription,
  ComponentSettings,
  Exporter,
  RequestContext,
  RunBatch,
  ComponentCounter,
  ComponentGauge,
} from 'tracepipe/plugin';
import { PermanentError } from 'tracepipe/plugin';
import type { LocalExporterConfig } from './config.ts';
import type { ListTracesQuery, RetentionLimits, StoredTrace, TraceSummary } from 'tracepipe/tracestore';
import { InvalidTimeError, LocalTraceStore } from 'tracepipe/tracestore';

export interface LocalExporterOptions {
  /** The clock retention reads (epoch ms); for tests. */
  readonly now?: () => number;
}

export class LocalExporter implements Exporter<'runs'> {
  readonly mutatesData = false;
  private store?: LocalTraceStore;
  private readonly path: string;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  private readonly limits: RetentionLimits;
  private readonly deletedTraces: ComponentCounter<'reason'>;
  private readonly deletedRuns: ComponentCounter<'reason'>;
  private readonly storeBytes: ComponentGauge;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: LocalExporterConfig,
    private readonly options: LocalExporterOptions = {},
  ) {
    this.path = config.path === ':memory:' ? config.path : settings.host.resolvePath(config.path);
    const { retention } = config;
    this.limits = {
      ...(retention.max_age_ms !== undefined ? { maxAgeMs: retention.max_age_ms } : {}),
      ...(retention.max_bytes !== undefined ? { maxBytes: retention.max_bytes } : {}),
    };
    const { meter } = settings.telemetry;
    this.deletedTraces = meter.counter({
      name: 'tracepipe_local_store_deleted_traces_total',
      help: 'Traces the local store deleted under its retention limits, by reason (max_age, max_bytes).',
      labelNames: ['reason'],
    });
    this.deletedRuns = meter.counter({
      name: 'tracepipe_local_store_deleted_runs_total',
      help: 'Runs the local store deleted with their traces under its retention limits, by reason (max_age, max_bytes).',
      labelNames: ['reason'],
    });
    this.storeBytes = meter.gauge({
      name: 'tracepipe_local_store_bytes',
      help: 'Bytes of used pages in the local trace store.',
    });
  }

  async start(_signal?: AbortSignal): Promise<void> {
    if (this.stopped || this.store) return;
    if (this.path !== ':memory:') await mkdir(dirname(this.path), { recursive: true });
    this.store = new LocalTraceStore(this.path, this.options.now ? { now: this.options.now } : {});
    this.settings.telemetry.logger.info({ path: this.path, retention: this.limits }, 'Storing runs locally.');
    this.enforceRetention();
    if (this.hasLimits()) {
      this.timer = setInterval(() => this.enforceRetention(), this.config.retention.check_interval_ms);
      this.timer.unref();
    }
  }

  describe(): ComponentDescription {
    return { details: { 'trace store': this.path } };
  }

  async consume(batch: RunBatch, context: RequestContext): Promise<void> {
    if (this.stopped || !this.store) throw new Error('the local exporter is not running');
    let late: number;
    try {
      late = this.store.insertRuns(batch.runs, context.project);
    } catch (error) {
      // A run with an unreadable time is bad data; anything else (disk full, locked) may pass.
      if (error instanceof InvalidTimeError) throw new PermanentError(error.message, { cause: error });
      throw error;
    }
    // Runs of a trace retention has deleted: storing them would bring back part of that trace.
    if (late > 0) this.settings.telemetry.meter.dropped('runs', 'retention', late);
    this.enforceRetention();
  }

  /**
   * Applies the retention limits now; what was deleted is counted in the metrics. Called on a
   * timer and after each write; a failure is logged, never thrown (the write itself succeeded).
   */
  enforceRetention(): void {
    if (!this.store) return;
    try {
      if (this.hasLimits()) {
        const result = this.store.enforceRetention(this.limits);
        for (const [reason, counts] of [
          ['max_age', result.maxAge],
          ['max_bytes', result.maxBytes],
        ] as const) {
          if (counts.traces > 0) this.deletedTraces.inc({ reason }, counts.traces);
          if (counts.runs > 0) this.deletedRuns.inc({ reason }, counts.runs);
        }
      }
      this.storeBytes.set(this.store.usedBytes());
    } catch (error) {
      this.settings.telemetry.logger.warn({ err: error }, 'Could not apply the trace store retention.');
    }
  }

  /** The latest traces, newest first (see `ListTracesQuery` for filters, sorting and paging). */
  listTraces(query: ListTracesQuery = {}): TraceSummary[] {
    return this.requireStore().listTraces(query);
  }

  /** A whole trace, or undefined when unknown. */
  getTrace(traceId: string): StoredTrace | undefined {
    return this.requireStore().getTrace(traceId);
  }

  async shutdown(_deadline?: number): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    this.store?.close();
    this.store = undefined;
  }

  private hasLimits(): boolean {
    return this.limits.maxAgeMs !== undefined || this.limits.maxBytes !== undefined;
  }

  private requireStore(): LocalTraceStore {
    if (!this.store) throw new Error('the local exporter is not running');
    return this.store;
  }
}
