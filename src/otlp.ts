// `tracepipe/otlp`: the OTLP trace codecs — ExportTraceServiceRequest decoded from and encoded to
// protobuf and JSON (the protobuf JSON mapping, hex ids), the OTLP/HTTP response bodies
// (ExportTraceServiceResponse with its partial success, google.rpc.Status); and the OTLP/HTTP
// exporter itself, for a component that sends to OTLP endpoints of its own (the `loadbalancing`
// exporter runs one per endpoint). The protobuf wire reader and writer the codecs run on are tuned
// for them and stay internal. The `otlp` receiver and exporter, the `file` exporter and the
// `loadbalancing` exporter are built on it; docs/writing-a-plugin.md ("OTLP codecs") shows how.
//
// Everything exported here is public API under semantic versioning; api/tracepipe.api.md lists
// it, and a test fails when it changes without that file being updated.

export type { DecodedTraceRequest } from './otlp/decoded.ts';
export { decodeTraceRequestJson } from './otlp/decode-json.ts';
export { decodeTraceRequestProtobuf } from './otlp/decode-protobuf.ts';
export { encodeTraceRequestJson, encodeTraceRequestProtobuf } from './otlp/encode.ts';
export { OtlpDecodeError } from './otlp/errors.ts';
export type { OtlpEncoding, PartialSuccess } from './otlp/response.ts';
export { CONTENT_TYPES, encodeExportResponse, encodeStatus, grpcCodeForHttpStatus } from './otlp/response.ts';

// The OTLP/HTTP exporter: the `otlp` exporter's config schema and component, which the
// `loadbalancing` exporter also runs, one per endpoint.
export type { OtlpExporterConfig } from './otlp/exporter-config.ts';
export { otlpExporterConfigSchema } from './otlp/exporter-config.ts';
export { otlpExporter } from './otlp/exporter.ts';
