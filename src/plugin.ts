// `tracepipe/plugin`: what a component — receiver, processor, exporter or extension — is written against.
// The component contract and its factory, the data that flows through pipelines, the request
// context and its delivery tracking, the error classes consumers reject with, and the helpers a
// component commonly needs (metrics, an HTTP listener, loading user code).
//
// Everything exported here is public API under semantic versioning; api/tracepipe.api.md lists
// it, and a test fails when it changes without that file being updated.

// The component contract.
export type {
  ComponentDescription,
  ComponentKind,
  ComponentSettings,
  Consumer,
  Endpoint,
  Exporter,
  ExporterFactory,
  Extension,
  ExtensionFactory,
  Factory,
  Host,
  Lifecycle,
  NamedFile,
  PluginExport,
  Processor,
  ProcessorFactory,
  Receiver,
  ReceiverFactory,
  Stability,
  TraceAccessCheck,
  TraceAccessRefusal,
  TraceViewer,
  TraceViewerGuard,
} from './pipeline/component.ts';
export { COMPONENT_KINDS, isTraceViewer } from './pipeline/component.ts';
export type { ConfigOf, DeepReadonly } from './config/config-of.ts';
export type {
  ComponentCounter,
  ComponentGauge,
  ComponentHistogram,
  ComponentMeter,
  InstrumentConfig,
  TelemetrySettings,
} from './telemetry/component.ts';
// The telemetry of a component another component creates inside itself (an exporter per endpoint).
export { componentTelemetry } from './telemetry/component.ts';

// The data between components, and who sent it.
export type { ConsumedType, DataOf, DataType, RequestContext } from './pipeline/data.ts';
export { DATA_TYPES, countItems } from './pipeline/data.ts';
export type {
  AnyValue,
  Attribute,
  InstrumentationScope,
  Resource,
  ResourceSpans,
  ScopeSpans,
  Span,
  SpanBatch,
  SpanEvent,
  SpanLink,
  SpanStatus,
} from './model/spans.ts';
export { SpanKind, StatusCode, countSpans, findAttribute } from './model/spans.ts';
export type { Run, RunBatch, RunTreeHints, RunType } from './model/runs.ts';
export { RUN_TYPES } from './model/runs.ts';

// Delivery tracking: how "acknowledged" comes to mean "kept".
export type { Release } from './pipeline/delivery.ts';
export { Delivery, DeliveryGroup, holdDelivery } from './pipeline/delivery.ts';

// Errors.
export { PermanentError, ThrottleError, errorMessage, isPermanent, isThrottle } from './pipeline/errors.ts';
export type { CodedErrorConstructor, ErrorCode } from './errors.ts';
export { CodedError, ERROR_CODES, TracepipeError, createCodedError } from './errors.ts';

// Helpers.
export { counter, gauge, histogram } from './telemetry/metrics.ts';
// A full garbage collection that gives emptied pages back to the system (the memory limiter's, and
// the one `tracepipe run` runs once the process is quiet after a load).
export { fullCollection } from './runtime/idle-collection.ts';
export type { HttpServerOptions } from './http/server.ts';
export { ListenError, closeBy, createHttpServer, listen, listenerSchema } from './http/server.ts';
export { importModule } from './runtime/user_modules.ts';
// JSON: a JSON Lines record, a cheap size estimate (for byte limits), and the frozen values many
// runs share (a resource, tool definitions) serialized once.
export { toJsonLine } from './model/json.ts';
export { estimateJsonBytes } from './model/json-size.ts';
export { SharedJsonCache, jsonWithShared, shareJson } from './model/shared-json.ts';
export { attachRunJson, encodedRunJson, runBodyJson, runJson } from './model/run-json.ts';
export type { RunBodyJson, RunJson } from './model/run-json.ts';
