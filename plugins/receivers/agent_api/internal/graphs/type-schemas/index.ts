// Static schema extraction, off the event loop: one worker thread reads the TypeScript types of
// the graphs that carry no runtime schema (./extract.ts), within a time limit, and its answers are
// kept for the life of the graphs. Requests that need a graph's schemas before its answer came wait
// for it (at most until the time limit); a graph whose types could not be read is answered
// `undefined`, once warned about, and the caller serves what it knows without them.

import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { ExtractionResult, GraphTypeSchemas, TypeSchemaTarget } from './extract.ts';

export type { GraphTypeSchemas, TypeSchemas, TypeSchemaTarget } from './extract.ts';

export interface TypeSchemaOptions {
  /** How long the worker may take for all graphs; graphs not answered by then fall back. */
  readonly timeoutMs: number;
  readonly logger: Logger;
}

export class TypeSchemaExtraction {
  private readonly results = new Map<string, Promise<GraphTypeSchemas | undefined>>();
  private worker?: Worker;
  private timer?: NodeJS.Timeout;

  private constructor(private readonly options: TypeSchemaOptions) {}

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
    for (const { graphId } of targets) {
      this.results.set(graphId, new Promise((resolve) => pending.set(graphId, resolve)));
    }
    const settle = (result: ExtractionResult) => {
      const resolve = pending.get(result.graphId);
      if (!resolve) return;
      pending.delete(result.graphId);
      if ('schemas' in result) {
        resolve(result.schemas);
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
    const worker = (this.worker = startWorker(targets));
    worker.unref();
    worker.on('message', (result: ExtractionResult) => settle(result));
    worker.on('error', (error) => this.failRemaining?.(`the extraction failed: ${error.message}`));
    worker.on('exit', () => this.failRemaining?.('the extraction stopped before reaching it'));
    this.timer = setTimeout(() => {
      void this.stop(`the extraction took longer than ${this.options.timeoutMs} ms`);
    }, this.options.timeoutMs);
    this.timer.unref();
    void Promise.all(this.results.values()).then(() => {
      const elapsedMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
      this.options.logger.debug(
        { graphs: targets.length, elapsed_ms: Math.round(elapsedMs) },
        'Graph type schemas read.',
      );
    });
  }

  private failRemaining?: (reason: string) => void;

  private async stop(reason?: string): Promise<void> {
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
