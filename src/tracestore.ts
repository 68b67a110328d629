// `tracepipe/tracestore`: the local trace store — runs kept in one SQLite file, indexed for what a
// trace viewer asks (trace lists filtered and sorted, every run of a trace, conversations, full-text
// search, usage statistics), with retention by age and size. It is shared storage rather than one
// plugin's internals: the `local` exporter writes a store, and the `trace_explorer` extension opens
// the same file (written by this process or another) to answer its API.
//
// Everything exported here is public API under semantic versioning; api/tracepipe.api.md lists
// it, and a test fails when it changes without that file being updated.

export type {
  ListTracesQuery,
  ModelUsage,
  RetentionLimits,
  RetentionResult,
  RunUsage,
  StatsGroup,
  StatsQuery,
  StoreOptions,
  StoredTrace,
  ThreadPage,
  ThreadSummary,
  TracePage,
  TraceSortField,
  TraceStatsRow,
  TraceSummary,
  UsageStatsRow,
} from './tracestore/store.ts';
export {
  EXACT_PERCENTILE_TRACES,
  InvalidCursorError,
  InvalidTimeError,
  LocalTraceStore,
  STATS_GROUPS,
  THREAD_KEYS,
  TRACE_SORT_FIELDS,
  TRACE_STATUSES,
  fromMicros,
  threadIdOf,
  toMicros,
  usageOf,
} from './tracestore/store.ts';
// The form the store keeps a 16-byte id in (a dashed, lowercase UUID), whether it was written so or as
// OTLP's 32 hex digits: what a component looks an id up by.
export { storedUuidForm } from './model/uuid-forms.ts';
