// Where a run's spans enter the pipeline: through the journal intake of `tracepipe/receiverhelper`,
// as requests to the `otlp` receiver do. Each batch a run tracer sends is written to the journal
// (OTLP/protobuf, with its tenant) before the pipeline takes it, and settled once every span of it
// has left the process; what is still held downstream at a crash or a shutdown deadline is
// replayed at the next start instead of being lost. Without a journal (`tracing.journal.enabled:
// false`) the batches go through the same intake, bounded by memory only, as before.

import type { ComponentSettings, Consumer, RequestContext, SpanBatch } from 'tracepipe/plugin';
import { decodeTraceRequestProtobuf, encodeTraceRequestProtobuf } from 'tracepipe/otlp';
import { DurableIntake, journaledTenant, replayedContext } from 'tracepipe/receiverhelper';
import type { JournalConfig, JournaledTenant } from 'tracepipe/receiverhelper';

export interface SpanIntakeOptions {
  readonly settings: ComponentSettings;
  /** The `tracing.journal` block, its directory already resolved (absolute). */
  readonly journal: JournalConfig;
  readonly memoryLimitBytes: number;
  readonly next: Consumer<'spans'>;
}

export class SpanIntake {
  private readonly intake: DurableIntake<'spans', JournaledTenant>;

  constructor(options: SpanIntakeOptions) {
    const { settings } = options;
    this.intake = new DurableIntake({
      settings,
      dataType: 'spans',
      journal: options.journal,
      memoryLimitBytes: options.memoryLimitBytes,
      next: options.next,
      restore: (tenant, body) => ({
        data: decodeTraceRequestProtobuf(body).batch,
        context: replayedContext(tenant, settings.id),
      }),
    });
  }

  /** Opens the journal and replays, in the background, what an earlier process left undelivered. */
  start(): Promise<void> {
    return this.intake.start();
  }

  /** What run tracers send to: resolves once the batch is journaled and the pipeline took it. */
  readonly consumer: Consumer<'spans'> = {
    mutatesData: false,
    consume: (batch: SpanBatch, context: RequestContext) => {
      // A view of the encoder's output, not a copy: `finish()` hands out a buffer of its own.
      const encoded = encodeTraceRequestProtobuf(batch);
      const body = Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
      // The spans are already in memory: the journaled body is for a replay, not to be decoded now.
      return this.intake.accept(journaledTenant(context), body, () => batch, context, this.intake.admit(body.length));
    },
  };

  /** Closes the journal once no tracer sends any more; what is undelivered stays for the next start. */
  shutdown(): Promise<void> {
    return this.intake.shutdown();
  }
}
