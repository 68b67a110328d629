// The `debug` exporter: logs what reaches it and, optionally, appends it to a JSON-lines file.
// For trying a pipeline out; not for production volumes.

import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ComponentSettings, Exporter } from '../../../src/pipeline/component.ts';
import type { DataOf, DataType, RequestContext } from '../../../src/pipeline/data.ts';
import { countItems } from '../../../src/pipeline/data.ts';
import { toJsonLine } from '../../../src/model/json.ts';
import type { DebugExporterConfig } from './config.ts';

export class DebugExporter implements Exporter {
  readonly mutatesData = false;
  private file?: WriteStream;
  private stopped = false;

  constructor(
    private readonly settings: ComponentSettings,
    private readonly config: DebugExporterConfig,
  ) {}

  async start(_signal?: AbortSignal): Promise<void> {
    if (!this.config.path) return;
    const path = this.settings.host.resolvePath(this.config.path);
    await mkdir(dirname(path), { recursive: true });
    this.file = createWriteStream(path, { flags: 'a' });
    await new Promise<void>((resolve, reject) => {
      this.file!.once('open', () => resolve());
      this.file!.once('error', reject);
    });
  }

  async consume(data: DataOf[DataType], context: RequestContext): Promise<void> {
    if (this.stopped) throw new Error('debug exporter is shut down');
    const kind = 'runs' in data ? 'runs' : 'spans';
    const { logger } = this.settings;
    logger.info({ kind, items: countItems(data), project: context.project }, 'Received a batch.');
    if (this.config.verbosity === 'detailed') logger.info({ data: JSON.parse(toJsonLine(data)) }, 'Batch contents.');
    if (this.file) {
      const line = toJsonLine({ kind, project: context.project, data }) + '\n';
      if (!this.file.write(line)) await new Promise<void>((resolve) => this.file!.once('drain', resolve));
    }
  }

  async shutdown(_deadline?: number): Promise<void> {
    this.stopped = true;
    const file = this.file;
    this.file = undefined;
    if (file) await new Promise<void>((resolve) => file.end(resolve));
  }
}
