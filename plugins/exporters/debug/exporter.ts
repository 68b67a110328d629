// The `debug` exporter: logs what reaches it. For trying a pipeline out; not for production
// volumes. Writing batches to a file is the `file` exporter's job.

import type { ComponentSettings, Exporter, DataOf, DataType, RequestContext } from 'tracepipe/plugin';
import { countItems, toJsonLine } from 'tracepipe/plugin';
import type { DebugExporterConfig } from './config.ts';

export class DebugExporter implements Exporter {
  readonly mutatesData = false;
  private stopped = false;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: DebugExporterConfig,
  ) {}

  async start(_signal?: AbortSignal): Promise<void> {}

  async consume(data: DataOf[DataType], context: RequestContext): Promise<void> {
    if (this.stopped) throw new Error('debug exporter is shut down');
    const kind = 'runs' in data ? 'runs' : 'spans';
    const { logger } = this.settings.telemetry;
    logger.info({ kind, items: countItems(data), project: context.project }, 'Received a batch.');
    if (this.config.verbosity === 'detailed') logger.info({ data: JSON.parse(toJsonLine(data)) }, 'Batch contents.');
  }

  async shutdown(_deadline?: number): Promise<void> {
    this.stopped = true;
  }
}
