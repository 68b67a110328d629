// `tracepipe/receiverhelper`: what a receiver that acknowledges data on the pipeline's behalf is
// built from, as exporters are built from `tracepipe/exporterhelper`. `DurableIntake` is the
// journal intake — a request is admitted against a memory limit by bytes, appended to the journal
// before it is acknowledged, handed to the pipeline with a `Delivery`, settled once every item of
// it has left the process, and replayed after a crash; `readBody` reads a request body under a
// size limit that also bounds its decompression, and `utf8Text` makes it text for JSON.parse
// (faster than `toString` on text that is not all ASCII). The `otlp` receiver (HTTP and gRPC), the
// `langsmith` receiver and the `agent_api` receiver's run tracing are built on it;
// docs/writing-a-plugin.md ("A receiver that journals")
// states the contract a journaled receiver keeps.
//
// Everything exported here is public API under semantic versioning; api/tracepipe.api.md lists
// it, and a test fails when it changes without that file being updated.

export type { DurableIntakeOptions } from './journal/intake.ts';
export { Admission, DurableIntake, IntakeUnavailableError, JournalRecordTooLargeError } from './journal/intake.ts';
export type { JournaledTenant } from './journal/tenant.ts';
export { journaledTenant, replayedContext } from './journal/tenant.ts';
export type { JournalConfig } from './journal/schema.ts';
export {
  DEFAULT_JOURNAL_MAX_BYTES,
  DEFAULT_MEMORY_LIMIT_BYTES,
  journalSchema,
  memoryLimitSchema,
} from './journal/schema.ts';
export type { BodyCoding } from './http/body.ts';
export {
  BodyAbortedError,
  BodyCodingError,
  BodyTooLargeError,
  SUPPORTED_CODINGS,
  codingOf,
  readBody,
} from './http/body.ts';
export { utf8Text } from './http/utf8-text.ts';
