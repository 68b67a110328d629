// The `file` exporter: appends each batch as one JSON line — spans as an OTLP/JSON
// ExportTraceServiceRequest (what the Collector's file exporter writes, readable by OTLP JSON file
// readers), runs as `{"project", "runs"}` — and rotates the file by size. A batch is acknowledged
// once its line is written (and synced, with `fsync`).

import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import type {
  ComponentSettings,
  Exporter,
  DataOf,
  DataType,
  RequestContext,
  RunBatch,
  SpanBatch,
} from 'tracepipe/plugin';
import { PermanentError, errorMessage } from 'tracepipe/plugin';
import { encodeTraceRequestJson } from 'tracepipe/otlp';
import type { FileExporterConfig } from './config.ts';

export class FileExporter implements Exporter {
  readonly mutatesData = false;
  private readonly logger: Logger;
  private readonly path: string;
  private handle?: FileHandle;
  private size = 0;
  /** Writes take turns: lines never interleave and rotation never races a write. */
  private writes: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    settings: ComponentSettings,
    private readonly config: FileExporterConfig,
  ) {
    this.logger = settings.telemetry.logger;
    this.path = settings.host.resolvePath(config.path);
  }

  async start(_signal?: AbortSignal): Promise<void> {
    if (this.stopped || this.handle) return;
    await mkdir(dirname(this.path), { recursive: true });
    await this.openFile();
  }

  consume(data: DataOf[DataType], context: RequestContext): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('the file exporter is shut down'));
    // Serialise before taking a turn: a batch that cannot be encoded fails alone, as bad data.
    let line: Buffer;
    try {
      line = Buffer.from(encodeLine(data, context) + '\n');
    } catch (error) {
      return Promise.reject(
        new PermanentError(`the batch cannot be encoded as JSON: ${errorMessage(error)}`, { cause: error }),
      );
    }
    const turn = this.writes.then(() => this.append(line));
    this.writes = turn.catch(() => undefined);
    return turn;
  }

  async shutdown(_deadline?: number): Promise<void> {
    this.stopped = true;
    await this.writes;
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  private async append(line: Buffer): Promise<void> {
    if (!this.handle) throw new Error('the file exporter is not started');
    if (this.size > 0 && this.size + line.byteLength > this.config.rotation.max_bytes) await this.rotate();
    await this.handle.write(line);
    this.size += line.byteLength;
    if (this.config.fsync) await this.handle.sync();
  }

  private async openFile(): Promise<void> {
    this.handle = await open(this.path, 'a');
    this.size = (await stat(this.path)).size;
  }

  /** `path` → `path.1`, `path.1` → `path.2`, ...; the ones beyond `max_files` are deleted. */
  private async rotate(): Promise<void> {
    await this.handle!.close();
    this.handle = undefined;
    const { max_files: keep } = this.config.rotation;
    const rotated = await this.rotatedIndexes();
    for (const index of rotated.sort((a, b) => b - a)) {
      if (keep > 0 && index >= keep) {
        await rm(`${this.path}.${index}`, { force: true });
        this.logger.info({ file: `${this.path}.${index}`, max_files: keep }, 'Deleted the oldest rotated file.');
      } else {
        await rename(`${this.path}.${index}`, `${this.path}.${index + 1}`);
      }
    }
    await rename(this.path, `${this.path}.1`);
    await this.openFile();
  }

  private async rotatedIndexes(): Promise<number[]> {
    const prefix = `${basename(this.path)}.`;
    const names = await readdir(dirname(this.path));
    return names
      .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
      .map((name) => Number(name.slice(prefix.length)));
  }
}

function encodeLine(data: DataOf[DataType], context: RequestContext): string {
  if ('runs' in data) return JSON.stringify({ project: context.project, runs: (data as RunBatch).runs });
  return JSON.stringify(encodeTraceRequestJson(data as SpanBatch));
}
