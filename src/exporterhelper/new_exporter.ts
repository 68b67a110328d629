// `newExporter`: a whole exporter from a push function and a codec, as the OpenTelemetry Collector's
// `exporterhelper.NewTraces(set, cfg, push, opts…)`. The exporter writes what is its own — how a
// batch becomes a request (`encode`), one attempt to send it (`push`), how it is stored (`codec`) —
// and gets the component around it: the sending queue and its senders, retries, the on-disk queue,
// dead letters, delivery holds, start, refusing batches once stopping, and the shutdown sequence.

import type { ComponentSettings, Exporter } from '../pipeline/component.ts';
import type { DataOf, DataType, RequestContext } from '../pipeline/data.ts';
import { errorMessage } from '../pipeline/errors.ts';
import type { DropReason } from './metrics.ts';
import { QueuedExporter } from './queued_exporter.ts';
import type { ExportRequest, PushContext, RequestCodec } from './queued_exporter.ts';
import type { QueuedExporterBlocksConfig } from './schema.ts';
import type { Verdict } from './verdict.ts';

/** The config keys `newExporter` reads: the three standard blocks and the number of senders. */
export interface ExporterConfig extends QueuedExporterBlocksConfig {
  /** Requests in flight at once. */
  readonly max_concurrent_uploads: number;
}

/** An item that cannot be encoded: it is dead-lettered with `record` and counted as `unencodable`. */
export interface Unencodable {
  readonly error: unknown;
  /** What the dead-letter file keeps of it (an id, say); `reason` and `error` are added. */
  readonly record: Record<string, unknown>;
}

/** A batch as `encode` turned it into a request. */
export interface Encoded<R> {
  /** The request to queue; absent when nothing of the batch is to be sent. */
  readonly request?: R;
  /** Items left out: dead-lettered once the request is queued (not before, so a refused batch is retried whole). */
  readonly unencodable?: readonly Unencodable[];
}

/** What `encode` and `push` may do besides returning: the losses that are theirs to report. */
export interface ExporterControls {
  /** Dead-letters and counts items that cannot be encoded. */
  refuse(unencodable: readonly Unencodable[]): Promise<void>;
  /** Appends a record to the dead-letter file (nothing without an on-disk queue). */
  deadLetter(record: Record<string, unknown>): Promise<void>;
  /** Counts (by reason) and logs lost items. */
  drop(reason: DropReason, items: number, message: string, error?: unknown): void;
}

export interface ExporterSpec<D extends DataType, R extends ExportRequest, H extends object> {
  readonly dataType: D;
  /** Where requests go, for logs only (credentials and query strings are left out). */
  readonly endpoint: string;
  /**
   * A batch as one request, encoded once the sending queue has room for it, so that the queue
   * holds compact bodies of known size and a refused batch costs no encoding.
   * Throw `PermanentError` when the batch can never be encoded.
   */
  encode(batch: DataOf[D], context: RequestContext, controls: ExporterControls): Encoded<R> | Promise<Encoded<R>>;
  /** One attempt to send one request, answered with a verdict. Throwing is a bug (`internal_error`). */
  push(request: R, context: PushContext, controls: ExporterControls): Promise<Verdict<R>>;
  readonly codec: RequestCodec<R, H>;
  /** After the queue has shut down: close what `push` used (an `HttpSender`'s sockets). */
  close?(): void;
}

/** The exporter `spec` describes, configured by the standard blocks of `config`. */
export function newExporter<D extends DataType, R extends ExportRequest, H extends object>(
  settings: ComponentSettings,
  config: ExporterConfig,
  spec: ExporterSpec<D, R, H>,
): Exporter<D> {
  return new HelperExporter(settings, config, spec);
}

class HelperExporter<D extends DataType, R extends ExportRequest, H extends object>
  implements Exporter<D>, ExporterControls
{
  readonly mutatesData = false;
  private readonly queue: QueuedExporter<R, H>;

  constructor(
    private readonly settings: ComponentSettings,
    config: ExporterConfig,
    private readonly spec: ExporterSpec<D, R, H>,
  ) {
    this.queue = new QueuedExporter<R, H>({
      settings,
      dataType: spec.dataType,
      endpoint: spec.endpoint,
      consumers: config.max_concurrent_uploads,
      sendingQueue: config.sending_queue,
      persistentQueue: config.persistent_queue,
      retry: config.retry_on_failure,
      push: (request, context) => spec.push(request, context, this),
      codec: spec.codec,
    });
  }

  start(_signal?: AbortSignal): Promise<void> {
    return this.queue.start();
  }

  async consume(batch: DataOf[D], context: RequestContext): Promise<void> {
    if (this.queue.stopping) throw new Error(`the exporter ${this.settings.id} is shutting down`);
    // Room first, then the encoding: a batch the full queue refuses costs no body compressed and
    // thrown away, and one that waits for room holds no body outside the queue's bounds.
    const slot = await this.queue.reserve();
    let encoded: Encoded<R>;
    try {
      encoded = await this.spec.encode(batch, context, this);
    } catch (error) {
      slot.release();
      throw error;
    }
    const { request, unencodable = [] } = encoded;
    if (request) await slot.offer(request, context);
    else slot.release();
    await this.refuse(unencodable);
  }

  async shutdown(deadline: number): Promise<void> {
    await this.queue.shutdown(deadline);
    this.spec.close?.();
  }

  async refuse(unencodable: readonly Unencodable[]): Promise<void> {
    if (unencodable.length === 0) return;
    for (const { error, record } of unencodable) {
      await this.queue.deadLetter({ reason: 'unencodable', error: errorMessage(error), ...record });
    }
    const message = `${capitalized(this.spec.dataType)} that cannot be encoded were dead-lettered.`;
    this.queue.drop('unencodable', unencodable.length, message, unencodable[0]!.error);
  }

  deadLetter(record: Record<string, unknown>): Promise<void> {
    return this.queue.deadLetter(record);
  }

  drop(reason: DropReason, items: number, message: string, error?: unknown): void {
    this.queue.drop(reason, items, message, error);
  }
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
