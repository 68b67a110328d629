// Test helpers: a receiver on a loopback port in front of a recording sink, and small clients for
// the answers an OTLP/HTTP server gives (google.rpc.Status and ExportTraceServiceResponse).

import { validateAgainst, Sink, nopHost, nopSettings } from 'tracepipe/testing';
import { ProtoReader } from 'tracepipe/otlp';
import type { Host } from 'tracepipe/plugin';
import type { OtlpReceiverConfig } from '../config.ts';
import { otlpReceiverFactory } from '../index.ts';
import type { OtlpReceiver } from '../receiver.ts';

export interface RunningReceiver {
  readonly receiver: OtlpReceiver;
  readonly sink: Sink<'spans'>;
  readonly host: Host;
  readonly origin: string;
  readonly tracesUrl: string;
  close(): Promise<void>;
}

export async function startReceiver(
  overrides: Record<string, unknown> = {},
  options: { sink?: Sink<'spans'>; host?: Host } = {},
): Promise<RunningReceiver> {
  const config = { port: 0, api_key: '', ...overrides } as unknown as OtlpReceiverConfig;
  const errors = validateAgainst(otlpReceiverFactory.configSchema, config, 'otlp');
  if (errors.length > 0) throw new Error(errors.join('; '));
  const sink = options.sink ?? new Sink<'spans'>();
  const host = options.host ?? nopHost();
  const receiver = otlpReceiverFactory.create(nopSettings('receiver', 'otlp', host), config, sink) as OtlpReceiver;
  const controller = new AbortController();
  await receiver.start(controller.signal);
  const origin = `http://127.0.0.1:${receiver.port}`;
  return {
    receiver,
    sink,
    host,
    origin,
    tracesUrl: `${origin}${config.traces_path}`,
    close: async () => {
      controller.abort();
      await receiver.shutdown(Date.now() + 5000);
    },
  };
}

/** Decodes a protobuf google.rpc.Status body. */
export function decodeStatusProtobuf(bytes: Uint8Array): { code: number; message: string } {
  const reader = new ProtoReader(bytes);
  const end = reader.buf.length;
  let code = 0;
  let message = '';
  while (reader.pos < end) {
    const tag = reader.tag(end);
    if (tag >>> 3 === 1) code = reader.int32(end);
    else if (tag >>> 3 === 2) message = reader.string(end);
    else reader.skip(tag & 7, end);
  }
  return { code, message };
}

/** Decodes a protobuf ExportTraceServiceResponse into its partial success (undefined if absent). */
export function decodeExportResponseProtobuf(
  bytes: Uint8Array,
): { rejectedSpans: bigint; errorMessage: string } | undefined {
  const reader = new ProtoReader(bytes);
  const end = reader.buf.length;
  let partial: { rejectedSpans: bigint; errorMessage: string } | undefined;
  while (reader.pos < end) {
    const tag = reader.tag(end);
    if (tag >>> 3 !== 1) {
      reader.skip(tag & 7, end);
      continue;
    }
    const stop = reader.lengthEnd(end);
    partial = { rejectedSpans: 0n, errorMessage: '' };
    while (reader.pos < stop) {
      const inner = reader.tag(stop);
      if (inner >>> 3 === 1) partial.rejectedSpans = reader.varint64(stop);
      else if (inner >>> 3 === 2) partial.errorMessage = reader.string(stop);
      else reader.skip(inner & 7, stop);
    }
  }
  return partial;
}
