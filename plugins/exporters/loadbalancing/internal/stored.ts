// Reading back what an endpoint's on-disk queue holds, so that the batches of an endpoint the
// resolver dropped can be routed again. The `otlp` exporter stores each request body exactly as it
// went on the wire, with the tenant in the file header; the body says itself how it is encoded.

import { gunzipSync } from 'node:zlib';
import type { SpanBatch } from 'tracepipe/plugin';
import { decodeTraceRequestJson, decodeTraceRequestProtobuf } from 'tracepipe/otlp';

/** The spans of a stored OTLP request body: gzip or not, JSON or protobuf. Throws when unreadable. */
export function decodeStoredBody(body: Buffer): SpanBatch {
  const raw = body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body) : body;
  // An ExportTraceServiceRequest in protobuf starts with field 1's tag (0x0a); JSON with `{`.
  return raw[0] === 0x7b ? decodeTraceRequestJson(raw).batch : decodeTraceRequestProtobuf(raw).batch;
}

/** The directory name of an endpoint's on-disk queue: `10.0.0.7:4318` → `10.0.0.7_4318`. */
export function queueDirectoryName(endpoint: string): string {
  return endpoint
    .replace(/^https?:\/\//, (scheme) => (scheme === 'https://' ? 'https_' : ''))
    .replace(/[^A-Za-z0-9.-]/g, '_');
}
