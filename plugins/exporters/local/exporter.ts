// The `local` exporter: keeps runs in a local SQLite store instead of (or besides) uploading them,
// and answers the queries a local trace viewer needs (`listTraces`, `getTrace`) on the instance.
// A batch is acknowledged once its transaction commits.

import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ComponentDescription, ComponentSettings, Exporter } from '../../../src/pipeline/component.ts';
import type { RequestContext } from '../../../src/pipeline/data.ts';
import { PermanentError } from '../../../src/pipeline/errors.ts';
import type { RunBatch } from '../../../src/model/runs.ts';
import type { LocalExporterConfig } from './config.ts';
import type { ListTracesQuery, StoredTrace, TraceSummary } from './store.ts';
import { InvalidTimeError, LocalTraceStore } from './store.ts';

export class LocalExporter implements Exporter<'runs'> {
  readonly mutatesData = false;
  private store?: LocalTraceStore;
  private readonly path: string;
  private stopped = false;

  constructor(
    private readonly settings: ComponentSettings,
    config: LocalExporterConfig,
  ) {
    this.path = config.path === ':memory:' ? config.path : settings.host.resolvePath(config.path);
  }

  async start(_signal?: AbortSignal): Promise<void> {
    if (this.stopped || this.store) return;
    if (this.path !== ':memory:') await mkdir(dirname(this.path), { recursive: true });
    this.store = new LocalTraceStore(this.path);
    this.settings.telemetry.logger.info({ path: this.path }, 'Storing runs locally.');
  }

  describe(): ComponentDescription {
    return { details: { 'trace store': this.path } };
  }

  async consume(batch: RunBatch, context: RequestContext): Promise<void> {
    if (this.stopped || !this.store) throw new Error('the local exporter is not running');
    try {
      this.store.insertRuns(batch.runs, context.project);
    } catch (error) {
      // A run with an unreadable time is bad data; anything else (disk full, locked) may pass.
      if (error instanceof InvalidTimeError) throw new PermanentError(error.message, { cause: error });
      throw error;
    }
  }

  /** The latest traces, newest first; page with `before` = the last one's `startTime`. */
  listTraces(query: ListTracesQuery = {}): TraceSummary[] {
    return this.requireStore().listTraces(query);
  }

  /** A whole trace, or undefined when unknown. */
  getTrace(traceId: string): StoredTrace | undefined {
    return this.requireStore().getTrace(traceId);
  }

  async shutdown(_deadline?: number): Promise<void> {
    this.stopped = true;
    this.store?.close();
    this.store = undefined;
  }

  private requireStore(): LocalTraceStore {
    if (!this.store) throw new Error('the local exporter is not running');
    return this.store;
  }
}
