// Test helpers: a receiver on a loopback port in front of a recording sink, and small clients for
// the answers an OTLP/HTTP server gives (google.rpc.Status and ExportTraceServiceResponse).

import { configFor, Sink, nopHost, nopSettings } from 'tracepipe/testing';
import type { Host } from 'tracepipe/plugin';
import type { OtlpReceiverConfig } from '../config.ts';
import { otlpReceiverFactory } from '../index.ts';
import type { OtlpReceiver } from '../receiver.ts';
import { fields } from './wire.ts';

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
  const config = configFor<OtlpReceiverConfig>(otlpReceiverFactory, { port: 0, api_key: '', ...overrides });
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
  const status = fields(bytes);
  const message = status.get(2);
  return { code: Number(status.get(1) ?? 0n), message: message ? Buffer.from(message as Uint8Array).toString() : '' };
}

/** Decodes a protobuf ExportTraceServiceResponse into its partial success (undefined if absent). */
export function decodeExportResponseProtobuf(
  bytes: Uint8Array,
): { rejectedSpans: bigint; errorMessage: string } | undefined {
  const partial = fields(bytes).get(1) as Uint8Array | undefined;
  if (!partial) return undefined;
  const inner = fields(partial);
  const message = inner.get(2) as Uint8Array | undefined;
  return {
    rejectedSpans: (inner.get(1) as bigint | undefined) ?? 0n,
    errorMessage: message ? Buffer.from(message).toString() : '',
  };
}
