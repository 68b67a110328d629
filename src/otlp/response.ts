// The bodies an OTLP/HTTP server answers with: ExportTraceServiceResponse on success (with
// `partial_success` when spans were rejected) and google.rpc.Status on failure, each in the
// encoding of the request (protobuf or JSON).

import { ProtoWriter } from './protobuf-writer.ts';

export type OtlpEncoding = 'protobuf' | 'json';

/** The media type of response bodies: OTLP/HTTP answers protobuf requests with x-protobuf. */
export const CONTENT_TYPES: Readonly<Record<OtlpEncoding, string>> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

export interface PartialSuccess {
  readonly rejectedSpans: number;
  readonly errorMessage: string;
}

/** An ExportTraceServiceResponse; empty (all accepted) unless `partial` is given. */
export function encodeExportResponse(encoding: OtlpEncoding, partial?: PartialSuccess): Buffer {
  if (encoding === 'json') {
    // int64 `rejected_spans` is a decimal string in protobuf's JSON mapping.
    const body = partial
      ? { partialSuccess: { rejectedSpans: String(partial.rejectedSpans), errorMessage: partial.errorMessage } }
      : {};
    return Buffer.from(JSON.stringify(body));
  }
  if (!partial) return Buffer.alloc(0);
  const w = new ProtoWriter(256);
  w.fork(1);
  if (partial.rejectedSpans !== 0) w.tag(1, 0).varint64(BigInt(partial.rejectedSpans));
  if (partial.errorMessage !== '') w.tag(2, 2).string(partial.errorMessage);
  w.ldelim();
  return Buffer.from(w.finish());
}

/** gRPC status codes carried in google.rpc.Status, chosen from the HTTP status as gRPC-gateway does. */
export function grpcCodeForHttpStatus(status: number): number {
  switch (status) {
    case 400:
      return 3; // INVALID_ARGUMENT
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 404:
      return 5; // NOT_FOUND
    case 405:
    case 415:
      return 12; // UNIMPLEMENTED
    case 413:
    case 429:
      return 8; // RESOURCE_EXHAUSTED
    case 503:
      return 14; // UNAVAILABLE
    default:
      return status >= 500 ? 13 : 2; // INTERNAL : UNKNOWN
  }
}

/** A google.rpc.Status body for an HTTP error status. */
export function encodeStatus(encoding: OtlpEncoding, httpStatus: number, message: string): Buffer {
  const code = grpcCodeForHttpStatus(httpStatus);
  if (encoding === 'json') return Buffer.from(JSON.stringify({ code, message }));
  const w = new ProtoWriter(64 + message.length * 3);
  w.tag(1, 0).int32(code);
  if (message !== '') w.tag(2, 2).string(message);
  return Buffer.from(w.finish());
}
