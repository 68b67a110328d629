// A plain @grpc/grpc-js client of the OTLP/gRPC `TraceService/Export` method: the request bytes
// are sent as they are (no protobuf layer of its own), so tests can send any body, malformed ones
// included, and read the status the receiver answers with.

import * as grpc from '@grpc/grpc-js';
import { traceService } from '../grpc-server.ts';

const RawTraceClient = grpc.makeGenericClientConstructor(traceService, 'TraceService');

type ExportMethod = (
  body: Buffer,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: Buffer) => void,
) => void;

export type ExportAnswer = { ok: true; response: Buffer } | { ok: false; error: grpc.ServiceError };

/** One Export call of `body` to 127.0.0.1:`port`, with `metadata` as the call's metadata. */
export function rawExport(
  port: number,
  body: Uint8Array,
  metadata: Record<string, string> = {},
  options: grpc.ClientOptions = {},
): Promise<ExportAnswer> {
  const client = new RawTraceClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), options);
  const meta = new grpc.Metadata();
  for (const [key, value] of Object.entries(metadata)) meta.set(key, value);
  return new Promise<ExportAnswer>((resolve) => {
    // A generic client's methods are made at runtime; this is the one declared above.
    const call = client as unknown as { Export: ExportMethod };
    call.Export(Buffer.from(body), meta, { deadline: Date.now() + 60_000 }, (error, response) => {
      client.close();
      resolve(error ? { ok: false, error } : { ok: true, response: response! });
    });
  });
}
