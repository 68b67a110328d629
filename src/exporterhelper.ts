// `tracepipe/exporterhelper`: what an exporter that sends over the network is built from. You write
// `push(request, {signal, attempt})` — one attempt, answered with a verdict — and a codec; the
// `QueuedExporter` does the sending queue, retries with backoff, `Retry-After`, the on-disk queue,
// dead letters, delivery holds, loss counting, outage logs and shutdown. See
// src/exporterhelper/README.md for the whole story and `plugins/exporters/otlp/` for an example.
//
// Everything exported here is public API under semantic versioning; api/tracepipe.api.md lists
// it, and a test fails when it changes without that file being updated.

export type {
  ExportRequest,
  PushContext,
  QueuedExporterOptions,
  RequestCodec,
  RequestSlot,
  TenantHeader,
} from './exporterhelper/queued_exporter.ts';
export { QueuedExporter, tenantHeader } from './exporterhelper/queued_exporter.ts';
export type { Failure, Verdict } from './exporterhelper/verdict.ts';
export { failureLabel, httpVerdict, park, reject, retry, sent, split } from './exporterhelper/verdict.ts';
export type { HttpExportResult } from './exporterhelper/http_sender.ts';
export { HttpSender } from './exporterhelper/http_sender.ts';
export type { ExportResult, ExportStatus, RetryConfig } from './exporterhelper/retry.ts';
export { backoffDelay, classifyHttpStatus, parseRetryAfter } from './exporterhelper/retry.ts';
export { TimeoutError, withTimeout } from './exporterhelper/timeout.ts';
export type { DropReason } from './exporterhelper/metrics.ts';
export type { PersistentQueueConfig, StoredBatch, StoredHeader } from './exporterhelper/persistent_queue.ts';
export { CorruptBatchError, PersistentQueue } from './exporterhelper/persistent_queue.ts';
export type { SendingQueueConfig } from './exporterhelper/sending_queue.ts';
export type { QueuedExporterBlocksConfig, RetryDefaults } from './exporterhelper/schema.ts';
export {
  filePathSchema,
  httpEndpointSchema,
  persistentQueueSchema,
  queuedExporterBlocks,
  retryOnFailureSchema,
  sendingQueueSchema,
  validateRetry,
} from './exporterhelper/schema.ts';
export { logEndpoint } from './exporterhelper/outage_log.ts';
export type {
  Encoded,
  ExporterConfig,
  ExporterControls,
  ExporterSpec,
  Unencodable,
} from './exporterhelper/new_exporter.ts';
export { newExporter } from './exporterhelper/new_exporter.ts';
