// The `otlp` receiver's OTLP/gRPC listener on a loopback port, with the OpenTelemetry JS gRPC
// exporter and a plain @grpc/grpc-js client as clients: metadata as the request context, gzip,
// partial success, bad data, the message size limit (also after decompression), the answers of a
// full pipeline and of a full journal (with google.rpc.RetryInfo), TLS (mutual TLS too), and the
// HTTP/2 flow-control windows a client is given.

import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import type { Settings } from 'node:http2';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { context, trace } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { encodeTraceRequestProtobuf } from 'tracepipe/otlp';
import { holdDelivery, ThrottleError } from 'tracepipe/plugin';
import type { Release } from 'tracepipe/plugin';
import { Sink, eventually, tempDir, makeBatch, plainSpan, testCertificates } from 'tracepipe/testing';
import type { TestCertificates } from 'tracepipe/testing';
import type { RunningReceiver } from './testing/test-server.ts';
import { rawExport } from './testing/grpc-client.ts';
import { decodeExportResponseProtobuf, startReceiver } from './testing/test-server.ts';
import { CONNECTION_WINDOW_BYTES, STREAM_WINDOW_BYTES } from './grpc-server.ts';
import { fields } from './testing/wire.ts';

/** The retry delay, in ms, of the google.rpc.RetryInfo in a status's details; undefined without one. */
function retryDelayMs(error: grpc.ServiceError): number | undefined {
  const [details] = error.metadata.get('grpc-status-details-bin') as Buffer[];
  if (!details) return undefined;
  const status = fields(details);
  assert.equal(Number(status.get(1)), error.code, 'the details repeat the status code');
  const any = fields(status.get(3) as Uint8Array);
  assert.equal(Buffer.from(any.get(1) as Uint8Array).toString(), 'type.googleapis.com/google.rpc.RetryInfo');
  const duration = fields(fields(any.get(2) as Uint8Array).get(1) as Uint8Array);
  return Number(duration.get(1) ?? 0n) * 1000 + Number(duration.get(2) ?? 0n) / 1e6;
}

/** Finished SDK spans of a parent and a child. */
function sdkSpans(): ReadableSpan[] {
  const recorded = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(recorded)] });
  const tracer = provider.getTracer('grpc-test');
  const parent = tracer.startSpan('parent');
  tracer
    .startSpan('child', { attributes: { 'gen_ai.operation.name': 'chat' } }, trace.setSpan(context.active(), parent))
    .end();
  parent.end();
  return recorded.getFinishedSpans();
}

function exportWith(exporter: GrpcExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

function exporterFor(port: number, headers: Record<string, string> = { 'x-api-key': 'grpc-key' }) {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
  return new GrpcExporter({ url: `http://127.0.0.1:${port}`, metadata, compression: 'gzip' as never });
}

const sampleBody = (spans = 2) =>
  encodeTraceRequestProtobuf(
    makeBatch(
      Array.from({ length: spans }, (_, i) =>
        plainSpan({
          traceId: '5b8efff798038103d269b633813fc60c',
          spanId: `eee19b7ec3c1b1${i.toString(16).padStart(2, '0')}`,
        }),
      ),
    ),
  );

const grpcOn = (extra: Record<string, unknown> = {}) => ({ protocols: { grpc: { enabled: true, port: 0, ...extra } } });

describe('otlp receiver over gRPC', () => {
  let server: RunningReceiver;
  before(async () => {
    server = await startReceiver({ ...grpcOn(), require_api_key: true });
  });
  after(() => server.close());

  it('maps x-api-key and service-project metadata to the request context, gzip included', async () => {
    server.sink.batches.length = 0;
    const exporter = exporterFor(server.receiver.grpcPort!, { 'x-api-key': 'tenant-7', 'service-project': 'proj-g' });
    const result = await exportWith(exporter, sdkSpans());
    await exporter.shutdown();
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    assert.equal(server.sink.batches.length, 1);
    assert.deepEqual(server.sink.batches[0]!.context, { apiKey: 'tenant-7', project: 'proj-g', receiver: 'otlp' });
    const spans = server.sink.batches[0]!.data.resourceSpans[0]!.scopeSpans[0]!.spans;
    const parent = spans.find((span) => span.name === 'parent')!;
    assert.equal(spans.find((span) => span.name === 'child')!.parentSpanId, parent.spanId);
  });

  it('answers UNAUTHENTICATED without a key when one is required', async () => {
    const answer = await rawExport(server.receiver.grpcPort!, sampleBody());
    assert.equal(answer.ok, false);
    assert.equal(!answer.ok && answer.error.code, grpc.status.UNAUTHENTICATED);
    assert.match(!answer.ok ? answer.error.details : '', /missing API key/);
  });

  it('answers INVALID_ARGUMENT to bytes that are not an ExportTraceServiceRequest, and keeps serving', async () => {
    const before = server.sink.batches.length;
    const answer = await rawExport(server.receiver.grpcPort!, Buffer.from([0x0a, 0xff, 0xff, 0x01]), {
      'x-api-key': 'k',
    });
    assert.equal(!answer.ok && answer.error.code, grpc.status.INVALID_ARGUMENT);
    assert.match(!answer.ok ? answer.error.details : '', /malformed protobuf ExportTraceServiceRequest/);
    assert.equal(server.sink.batches.length, before);
    assert.equal((await rawExport(server.receiver.grpcPort!, sampleBody(), { 'x-api-key': 'k' })).ok, true);
  });

  it('gives a client 4 MiB windows per call and 16 MiB per connection, and takes a 12 MB export', async () => {
    // HTTP/2's default, 64 KiB for both, made every export larger than that wait for round trips.
    const session = connect(`http://127.0.0.1:${server.receiver.grpcPort!}`);
    try {
      const settings = await new Promise<Settings>((resolve) => session.once('remoteSettings', resolve));
      assert.equal(settings.initialWindowSize, STREAM_WINDOW_BYTES);
      await eventually(() => session.state.remoteWindowSize === CONNECTION_WINDOW_BYTES, {
        message: () => `connection window ${session.state.remoteWindowSize}`,
      });
    } finally {
      session.destroy();
    }
    const before = server.sink.batches.length;
    const large = makeBatch(
      Array.from({ length: 3000 }, (_, i) =>
        plainSpan({
          traceId: '5b8efff798038103d269b633813fc60c',
          spanId: (i + 1).toString(16).padStart(16, '0'),
          attributes: [{ key: 'input.value', value: { type: 'string', value: 'x'.repeat(4000) } }],
        }),
      ),
    );
    const body = encodeTraceRequestProtobuf(large);
    assert.ok(body.length > 2 * STREAM_WINDOW_BYTES, `${body.length} bytes: more than a call's window`);
    const answer = await rawExport(server.receiver.grpcPort!, body, { 'x-api-key': 'k' });
    assert.ok(answer.ok, answer.ok ? '' : answer.error.message);
    assert.equal(server.sink.batches.length, before + 1);
    assert.equal(server.sink.batches.at(-1)!.data.resourceSpans[0]!.scopeSpans[0]!.spans.length, 3000);
  });

  it('reports spans with invalid ids as a partial success, and delivers the rest', async () => {
    const batch = makeBatch([
      plainSpan({ traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174' }),
      plainSpan({ traceId: 'abcd', spanId: 'eee19b7ec3c1b175' }), // an id of the wrong length
    ]);
    const before = server.sink.batches.length;
    const answer = await rawExport(server.receiver.grpcPort!, encodeTraceRequestProtobuf(batch), { 'x-api-key': 'k' });
    assert.ok(answer.ok);
    const partial = decodeExportResponseProtobuf(answer.response);
    assert.equal(partial?.rejectedSpans, 1n);
    assert.match(partial!.errorMessage, /trace/i);
    assert.equal(server.sink.batches.length, before + 1);
    assert.equal(server.sink.batches.at(-1)!.data.resourceSpans[0]!.scopeSpans[0]!.spans.length, 1);
  });

  it('answers RESOURCE_EXHAUSTED with RetryInfo when the pipeline throttles', async () => {
    server.sink.fail = () => new ThrottleError('batch buffer is full', 2500);
    try {
      const answer = await rawExport(server.receiver.grpcPort!, sampleBody(), { 'x-api-key': 'k' });
      assert.ok(!answer.ok);
      assert.equal(answer.error.code, grpc.status.RESOURCE_EXHAUSTED);
      assert.equal(retryDelayMs(answer.error), 2500);
    } finally {
      server.sink.fail = undefined;
    }
  });

  it('answers UNAVAILABLE with RetryInfo when the pipeline fails for another reason', async () => {
    server.sink.fail = () => new Error('disk queue unavailable');
    try {
      const answer = await rawExport(server.receiver.grpcPort!, sampleBody(), { 'x-api-key': 'k' });
      assert.ok(!answer.ok);
      assert.equal(answer.error.code, grpc.status.UNAVAILABLE);
      assert.equal(retryDelayMs(answer.error), 1000);
    } finally {
      server.sink.fail = undefined;
    }
  });
});

describe('otlp receiver over gRPC: limits', () => {
  it('refuses messages above max_message_bytes, also when they are small compressed', async () => {
    const server = await startReceiver({ ...grpcOn({ max_message_bytes: 65_536 }), require_api_key: false });
    try {
      const port = server.receiver.grpcPort!;
      const large = Buffer.alloc(200_000); // zeros: gzip takes them to a few hundred bytes
      for (const options of [{}, { 'grpc.default_compression_algorithm': 2 /* gzip */ }]) {
        const answer = await rawExport(port, large, {}, options);
        assert.equal(!answer.ok && answer.error.code, grpc.status.RESOURCE_EXHAUSTED, JSON.stringify(options));
        assert.equal(!answer.ok && retryDelayMs(answer.error), undefined, 'not retryable: no RetryInfo');
      }
      assert.equal(server.sink.batches.length, 0);
      assert.equal((await rawExport(port, sampleBody())).ok, true);
    } finally {
      await server.close();
    }
  });

  it('a full journal answers RESOURCE_EXHAUSTED with RetryInfo; the same export succeeds once there is room', async () => {
    const directory = tempDir('tp-otlp-grpc-journal-');
    // Deliveries held downstream keep the journal's records until released.
    const held: Release[] = [];
    const sink = new Sink<'spans'>();
    const consume = sink.consume.bind(sink);
    sink.consume = async (data, context) => {
      held.push(holdDelivery(context.delivery));
      return consume(data, context);
    };
    const server = await startReceiver(
      { ...grpcOn(), journal: { enabled: true, directory, max_bytes: 65_536 } },
      { sink },
    );
    const exporter = exporterFor(server.receiver.grpcPort!);
    try {
      const spans = sdkSpans();
      let refused: ExportResult | undefined;
      for (let i = 0; i < 200 && !refused; i++) {
        const result = await exportWith(exporter, spans);
        if (result.code !== ExportResultCode.SUCCESS) refused = result;
      }
      assert.ok(refused, 'the journal filled up');
      const error = refused.error as grpc.ServiceError;
      assert.equal(error.code, grpc.status.RESOURCE_EXHAUSTED);
      assert.match(error.details, /cannot store the request now/);
      assert.equal(retryDelayMs(error), 5000);
      // Downstream delivers what it held: the journal frees its segments, and the export is taken.
      for (const release of held.splice(0)) release();
      await eventually(async () => assert.equal((await exportWith(exporter, spans)).code, ExportResultCode.SUCCESS));
    } finally {
      for (const release of held) release();
      await exporter.shutdown();
      await server.close();
    }
  });
});

describe('otlp receiver over gRPC: TLS', () => {
  let certs: TestCertificates;
  before(() => {
    certs = testCertificates();
  });

  /** An export over TLS trusting the test CA, with the client certificate when `withCert`. */
  const exportOverTls = async (port: number, withCert: boolean) => {
    const exporter = new GrpcExporter({
      url: `https://localhost:${port}`,
      credentials: withCert
        ? grpc.credentials.createSsl(certs.ca, certs.clientKey, certs.clientCert)
        : grpc.credentials.createSsl(certs.ca),
    });
    try {
      return await exportWith(exporter, sdkSpans());
    } finally {
      await exporter.shutdown();
    }
  };

  it('serves TLS with the configured certificate, and refuses plaintext', async () => {
    const server = await startReceiver({
      ...grpcOn({ tls: certs.serverTls() }),
      require_api_key: false,
    });
    try {
      const result = await exportOverTls(server.receiver.grpcPort!, false);
      assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
      assert.equal(server.sink.batches.length, 1);
      // A plaintext client gets no answer from a TLS port.
      const plain = await rawExport(
        server.receiver.grpcPort!,
        sampleBody(),
        {},
        { 'grpc.initial_reconnect_backoff_ms': 100 },
      );
      assert.equal(plain.ok, false);
    } finally {
      await server.close();
    }
  });

  it('with client_ca_file (mutual TLS), refuses a client without a certificate', async () => {
    const server = await startReceiver({
      ...grpcOn({ tls: certs.serverTls({ mutual: true }) }),
      require_api_key: false,
    });
    try {
      const refused = await exportOverTls(server.receiver.grpcPort!, false);
      assert.equal(refused.code, ExportResultCode.FAILED);
      assert.equal(server.sink.batches.length, 0);
      const served = await exportOverTls(server.receiver.grpcPort!, true);
      assert.equal(served.code, ExportResultCode.SUCCESS, String(served.error));
      assert.equal(server.sink.batches.length, 1);
    } finally {
      await server.close();
    }
  });

  it('a tls block that cannot be used fails the start naming its key', async () => {
    const tls = { ...certs.serverTls(), key_file: join(certs.dir, 'absent.key') };
    await assert.rejects(startReceiver({ ...grpcOn({ tls }), require_api_key: false }), {
      message: /protocols\.grpc\.tls\.key_file: cannot read .*absent\.key/,
    });
  });
});
