// Static schema extraction, off the event loop: one worker thread reads the TypeScript types of
// the graphs that carry no runtime schema (./extract.ts), within a time limit, and its answers are
// kept for the life of the graphs and on disk (./cache.ts), so that a restart with unchanged
// graphs starts no worker. Requests that need a graph's schemas before its answer came wait
// for it (at most until the time limit); a graph whose types could not be read is answered
// `undefined`, once warned about, and the caller serves what it knows without them.

import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { TypeSchemaCache } from './cache.ts';
import type { ExtractionResult, GraphTypeSchemas, SourceHashes, TypeSchemaTarget } from './extract.ts';
import { isTypeScriptModule } from './source-files.ts';

export type { GraphTypeSchemas, TypeSchemas, TypeSchemaTarget } from './extract.ts';

export interface TypeSchemaOptions {
  /** How long the worker may take for all graphs; graphs not answered by then fall back. */
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** Where the schemas read are kept between starts (./cache.ts); without it, every start reads them. */
  readonly cacheDirectory?: string;
}

export class TypeSchemaExtraction {
  private readonly results = new Map<string, Promise<GraphTypeSchemas | undefined>>();
  private worker?: Worker;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly cache?: TypeSchemaCache;

  private constructor(private readonly options: TypeSchemaOptions) {
    if (options.cacheDirectory !== undefined) this.cache = new TypeSchemaCache(options.cacheDirectory);
  }

  /** Starts extracting the schemas of `targets` in the background (nothing when there are none). */
  static start(targets: readonly TypeSchemaTarget[], options: TypeSchemaOptions): TypeSchemaExtraction {
    const extraction = new TypeSchemaExtraction(options);
    if (targets.length > 0) extraction.run(targets);
    return extraction;
  }

  /** Whether `graphId` was given to `start`. */
  has(graphId: string): boolean {
    return this.results.has(graphId);
  }

  /** The graph's schemas once extracted; `undefined` when its types could not be read in time. */
  get(graphId: string): Promise<GraphTypeSchemas | undefined> {
    return this.results.get(graphId) ?? Promise.resolve(undefined);
  }

  /** Stops the worker; graphs not answered yet fall back (`reason` goes into the warning). */
  async close(reason: string): Promise<void> {
    await this.stop(reason);
  }

  private run(targets: readonly TypeSchemaTarget[]): void {
    const pending = new Map<string, (schemas: GraphTypeSchemas | undefined) => void>();
    const byId = new Map(targets.map((target) => [target.graphId, target]));
    for (const { graphId } of targets) {
      this.results.set(graphId, new Promise((resolve) => pending.set(graphId, resolve)));
    }
    const settle = (result: ExtractionResult | { readonly graphId: string; readonly schemas: GraphTypeSchemas }) => {
      const resolve = pending.get(result.graphId);
      if (!resolve) return;
      pending.delete(result.graphId);
      if ('schemas' in result) {
        resolve(result.schemas);
        if ('files' in result) this.keep(byId.get(result.graphId)!, result.schemas, result.files);
      } else {
        this.options.logger.warn(
          { graph_id: result.graphId, reason: result.error },
          'Could not read the TypeScript types of graph "%s" (%s); its schemas list the state channels without their types.',
          result.graphId,
          result.error,
        );
        resolve(undefined);
      }
      if (pending.size === 0) void this.stop();
    };
    this.failRemaining = (reason: string) => {
      for (const graphId of [...pending.keys()]) settle({ graphId, error: reason });
    };

    const startedAt = process.hrtime.bigint();
    this.timer = setTimeout(() => {
      void this.stop(`the extraction took longer than ${this.options.timeoutMs} ms`);
    }, this.options.timeoutMs);
    this.timer.unref();
    const counts = { cached: 0, extracted: 0 };
    void (async () => {
      // The compiler is started only for the graphs whose types changed since they were last read.
      const toRead: TypeSchemaTarget[] = [];
      for (const target of targets) {
        if (!isTypeScriptModule(target.path)) {
          settle({ graphId: target.graphId, error: 'not a TypeScript module' });
          continue;
        }
        const schemas = await this.cache?.read(target);
        if (schemas) {
          counts.cached++;
          settle({ graphId: target.graphId, schemas });
        } else toRead.push(target);
      }
      if (toRead.length === 0 || this.stopped) return;
      counts.extracted = toRead.length;
      const worker = (this.worker = startWorker(toRead));
      worker.unref();
      worker.on('message', (result: ExtractionResult) => settle(result));
      worker.on('error', (error) => this.failRemaining?.(`the extraction failed: ${error.message}`));
      worker.on('exit', () => this.failRemaining?.('the extraction stopped before reaching it'));
    })();
    void Promise.all(this.results.values()).then(() => {
      const elapsedMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
      this.options.logger.debug(
        { graphs: targets.length, ...counts, elapsed_ms: Math.round(elapsedMs) },
        'Graph type schemas read.',
      );
    });
  }

  /** Writes an extracted graph's schemas to the cache, in the background. */
  private keep(target: TypeSchemaTarget, schemas: GraphTypeSchemas, files: SourceHashes): void {
    this.cache?.write(target, schemas, files).catch((error: unknown) => {
      this.options.logger.warn(
        { graph_id: target.graphId, err: error },
        'Could not keep the schemas read from the types of graph "%s"; the next start reads them again.',
        target.graphId,
      );
    });
  }

  private failRemaining?: (reason: string) => void;

  private async stop(reason?: string): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (reason) this.failRemaining?.(reason);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}

/**
 * The worker runs this module's sibling: compiled JavaScript in dist/, or the TypeScript source
 * when the server runs from source, then loaded through tsx (a worker does not inherit the loader
 * the main thread registered).
 */
function startWorker(targets: readonly TypeSchemaTarget[]): Worker {
  const here = fileURLToPath(import.meta.url);
  const entry = new URL(`./worker${extname(here)}`, import.meta.url);
  if (extname(here) === '.js') return new Worker(entry, { workerData: targets });
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => tsx.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(import.meta.url)}))`;
  return new Worker(bootstrap, { eval: true, workerData: targets });
}
