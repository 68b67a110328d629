// The `otlp` receiver over real HTTP on a loopback port: the OpenTelemetry JS exporters as clients,
// authentication, every encoding and compression, every bad input, back-pressure and CORS.

import assert from 'node:assert/strict';
import type { Host, SpanBatch } from 'tracepipe/plugin';
import { rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { compress as zstdCompress } from 'zstd-napi';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as HttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { encodeTraceRequestJson, encodeTraceRequestProtobuf } from 'tracepipe/otlp';
import { PermanentError, ThrottleError } from 'tracepipe/plugin';
import {
  Sink,
  nopHost,
  runComponentConformance,
  eventually,
  tempDir,
  intAttr,
  makeBatch,
  plainSpan,
  stringAttr,
} from 'tracepipe/testing';
import { otlpReceiverFactory } from './index.ts';
import type { SdkLikeSpan } from './testing/arbitraries.ts';
import { expectedBatch } from './testing/arbitraries.ts';
import type { RunningReceiver } from './testing/test-server.ts';
import { decodeExportResponseProtobuf, decodeStatusProtobuf, startReceiver } from './testing/test-server.ts';

const here = dirname(fileURLToPath(import.meta.url));
const TRACE_HEX = '5b8efff798038103d269b633813fc60c';
const SPAN_HEX = 'eee19b7ec3c1b174';

runComponentConformance(otlpReceiverFactory, { testdataDir: join(here, 'testdata'), config: { port: 0 } });

/** A small valid batch in the model, for requests built by hand. */
function sampleBatch(spanCount = 2): SpanBatch {
  const spans = Array.from({ length: spanCount }, (_, i) =>
    plainSpan({
      traceId: TRACE_HEX,
      spanId: SPAN_HEX.slice(0, 14) + i.toString(16).padStart(2, '0'),
      flags: 1,
      name: `span-${i}`,
      startTimeUnixNano: 1_700_000_000_000_000_000n + BigInt(i),
      endTimeUnixNano: 1_700_000_000_100_000_000n,
      attributes: [intAttr('gen_ai.usage.input_tokens', 12)],
    }),
  );
  return makeBatch(spans, { resource: [stringAttr('service.name', 'svc')], scope: { name: 'scope', version: '1' } });
}

const spanName = (batch: SpanBatch) => batch.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.name;
const jsonBody = (batch = sampleBatch()) => JSON.stringify(encodeTraceRequestJson(batch));
const protoBody = (batch = sampleBatch()) => Buffer.from(encodeTraceRequestProtobuf(batch));
const JSON_HEADERS = { 'content-type': 'application/json', 'x-api-key': 'key-1' };
const PROTO_HEADERS = { 'content-type': 'application/x-protobuf', 'x-api-key': 'key-1' };

/** Sends a request's headers, declaring `contentLength` bytes of protobuf, and no body. */
function rawPost(
  url: string,
  contentLength: number,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, {
      method: 'POST',
      headers: { ...PROTO_HEADERS, 'content-length': String(contentLength) },
    });
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        outgoing.destroy();
        resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString() });
      });
    });
    outgoing.on('error', reject);
    outgoing.flushHeaders();
  });
}

async function post(
  url: string,
  body: NonNullable<Parameters<typeof fetch>[1]>['body'],
  headers: Record<string, string>,
) {
  const response = await fetch(url, { method: 'POST', body, headers });
  const bytes = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    headers: response.headers,
    bytes,
    json: () => JSON.parse(bytes.toString('utf8')) as Record<string, unknown>,
  };
}

describe('otlp receiver: OpenTelemetry JS exporters as clients', () => {
  let server: RunningReceiver;
  before(async () => {
    server = await startReceiver();
  });
  after(() => server.close());

  const exporters = [
    [
      'exporter-trace-otlp-proto',
      (config: ConstructorParameters<typeof ProtoExporter>[0]) => new ProtoExporter(config),
    ],
    [
      'exporter-trace-otlp-http (JSON)',
      (config: ConstructorParameters<typeof HttpJsonExporter>[0]) => new HttpJsonExporter(config),
    ],
  ] as const;
  for (const [name, makeExporter] of exporters) {
    for (const compression of ['none', 'gzip'] as const) {
      it(`${name}, compression ${compression}: every attribute, id, timestamp and parent link arrives intact`, async () => {
        server.sink.batches.length = 0;
        const exporter = makeExporter({
          url: server.tracesUrl,
          headers: { 'X-API-Key': `key-${name}`, 'Service-Project': 'proj-a' },
          compression: compression as never,
        });
        const recorded = new InMemorySpanExporter();
        const provider = new BasicTracerProvider({
          resource: resourceFromAttributes({
            'service.name': 'checkout',
            'deployment.environment': 'test',
            'process.pid': 42,
          }),
          spanProcessors: [new SimpleSpanProcessor(exporter), new SimpleSpanProcessor(recorded)],
        });
        const tracer = provider.getTracer('tracepipe-test', '1.2.3');
        const root = tracer.startSpan('agent run', {
          kind: SpanKind.SERVER,
          attributes: { 'gen_ai.system': 'openai' },
        });
        const child = tracer.startSpan(
          'llm call',
          {
            kind: SpanKind.CLIENT,
            attributes: {
              'gen_ai.prompt': '[{"role":"user","content":"hi"}]',
              'gen_ai.usage.input_tokens': 12,
              'gen_ai.usage.output_tokens': 2 ** 40,
              temperature: 0.25,
              stream: false,
              stop: ['\n', 'END'],
              ids: [1, 2, 3],
              unicode: 'naïve ☕ 𝄞',
            },
            links: [{ context: root.spanContext(), attributes: { reason: 'follows' } }],
          },
          trace.setSpan(context.active(), root),
        );
        child.addEvent('token', { index: 1 });
        child.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited' });
        child.end();
        root.end();
        await provider.forceFlush();
        // Read before shutdown, which empties the in-memory exporter.
        const spans = recorded.getFinishedSpans();
        await provider.shutdown();

        assert.equal(spans.length, 2);
        await server.sink.waitFor(
          () => server.sink.batches.reduce((n, b) => n + b.data.resourceSpans[0]!.scopeSpans[0]!.spans.length, 0) === 2,
        );
        // SimpleSpanProcessor exports each span on its own: the two requests may arrive in either order.
        const bySpanId = (a: { spanId: string }, b: { spanId: string }) => a.spanId.localeCompare(b.spanId);
        const received = server.sink.batches
          .flatMap((b) => b.data.resourceSpans[0]!.scopeSpans[0]!.spans)
          .sort(bySpanId);
        const expected = expectedBatch(spans as unknown as SdkLikeSpan[]).resourceSpans[0]!;
        assert.deepEqual(received, [...expected.scopeSpans[0]!.spans].sort(bySpanId));
        assert.deepEqual(server.sink.batches[0]!.data.resourceSpans[0]!.resource, expected.resource);
        assert.deepEqual(
          server.sink.batches[0]!.data.resourceSpans[0]!.scopeSpans[0]!.scope,
          expected.scopeSpans[0]!.scope,
        );
        // The parent link, spelled out.
        const childSpan = received.find((s) => s.name === 'llm call');
        const rootSpan = received.find((s) => s.name === 'agent run');
        assert.equal(childSpan!.parentSpanId, rootSpan!.spanId);
        assert.equal(childSpan!.traceId, rootSpan!.traceId);
        assert.equal(rootSpan!.parentSpanId, '');
        assert.deepEqual(server.sink.batches[0]!.context, {
          apiKey: `key-${name}`,
          project: 'proj-a',
          receiver: 'otlp',
        });
      });
    }
  }
});

describe('otlp receiver: authentication and request context', () => {
  it('uses the X-API-Key header over the configured key, and Service-Project over the configured project', async () => {
    const server = await startReceiver({ api_key: 'default-key', project: 'default-project' });
    try {
      assert.equal(
        (
          await post(server.tracesUrl, jsonBody(), {
            'content-type': 'application/json',
            'x-api-key': 'tenant-key',
            'service-project': 'tenant-project',
          })
        ).status,
        200,
      );
      assert.equal((await post(server.tracesUrl, jsonBody(), { 'content-type': 'application/json' })).status, 200);
      assert.deepEqual(
        server.sink.batches.map((b) => b.context),
        [
          { apiKey: 'tenant-key', project: 'tenant-project', receiver: 'otlp' },
          { apiKey: 'default-key', project: 'default-project', receiver: 'otlp' },
        ],
      );
    } finally {
      await server.close();
    }
  });

  it('falls back to the project `default`', async () => {
    const server = await startReceiver();
    try {
      assert.equal((await post(server.tracesUrl, jsonBody(), JSON_HEADERS)).status, 200);
      assert.equal(server.sink.batches[0]!.context.project, 'default');
    } finally {
      await server.close();
    }
  });

  it("answers 401 when neither the header nor the config has a key, in the request's encoding", async () => {
    const server = await startReceiver();
    try {
      const json = await post(server.tracesUrl, jsonBody(), { 'content-type': 'application/json' });
      assert.equal(json.status, 401);
      assert.equal(json.headers.get('content-type'), 'application/json');
      assert.deepEqual(json.json(), {
        code: 16,
        message: 'missing API key: send it in the X-API-Key header (or configure a default api_key)',
      });
      const proto = await post(server.tracesUrl, protoBody(), {
        'content-type': 'application/x-protobuf',
        'x-api-key': '',
      });
      assert.equal(proto.status, 401);
      assert.equal(proto.headers.get('content-type'), 'application/x-protobuf');
      assert.match(decodeStatusProtobuf(proto.bytes).message, /missing API key/);
      assert.equal(server.sink.batches.length, 0);
    } finally {
      await server.close();
    }
  });

  it('accepts requests without a key when require_api_key is false', async () => {
    const server = await startReceiver({ require_api_key: false });
    try {
      assert.equal((await post(server.tracesUrl, jsonBody(), { 'content-type': 'application/json' })).status, 200);
      assert.deepEqual(server.sink.batches[0]!.context, { apiKey: undefined, project: 'default', receiver: 'otlp' });
    } finally {
      await server.close();
    }
  });
});

describe('otlp receiver: encodings and answers', () => {
  let server: RunningReceiver;
  before(async () => {
    server = await startReceiver();
  });
  after(() => server.close());

  it('answers a protobuf request with an empty ExportTraceServiceResponse', async () => {
    const response = await post(server.tracesUrl, protoBody(), PROTO_HEADERS);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/x-protobuf');
    assert.equal(response.bytes.length, 0);
  });

  it('accepts application/protobuf and a charset parameter', async () => {
    assert.equal(
      (await post(server.tracesUrl, protoBody(), { ...PROTO_HEADERS, 'content-type': 'application/protobuf' })).status,
      200,
    );
    const json = await post(server.tracesUrl, jsonBody(), {
      ...JSON_HEADERS,
      'content-type': 'application/json; charset=utf-8',
    });
    assert.equal(json.status, 200);
    assert.deepEqual(json.json(), {});
  });

  for (const [coding, compress] of [
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['zstd', zstdCompress],
    ['identity', (b: Buffer) => b],
  ] as const) {
    it(`decompresses Content-Encoding: ${coding}`, async () => {
      server.sink.batches.length = 0;
      const batch = sampleBatch(3);
      const response = await post(server.tracesUrl, compress(protoBody(batch)), {
        ...PROTO_HEADERS,
        'content-encoding': coding,
      });
      assert.equal(response.status, 200);
      assert.deepEqual(server.sink.batches[0]!.data, batch);
    });
  }

  it('reports spans with invalid ids as a partial success (JSON), and passes on the rest', async () => {
    server.sink.batches.length = 0;
    const request = encodeTraceRequestJson(sampleBatch(2)) as {
      resourceSpans: { scopeSpans: { spans: { spanId: string }[] }[] }[];
    };
    request.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.spanId = 'abc';
    const response = await post(server.tracesUrl, JSON.stringify(request), JSON_HEADERS);
    assert.equal(response.status, 200);
    assert.deepEqual(response.json(), {
      partialSuccess: {
        rejectedSpans: '1',
        errorMessage:
          '1 span rejected; first: resourceSpans[0].scopeSpans[0].spans[0]: spanId must be 16 hex or 12 base64 characters (8 bytes), got 3 characters',
      },
    });
    assert.deepEqual(
      server.sink.batches[0]!.data.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.name),
      ['span-1'],
    );
    const metrics = await server.host.metrics.metrics();
    assert.match(
      metrics,
      /tracepipe_component_items_dropped_total\{component_id="otlp",component_kind="receiver",data_type="spans",reason="invalid_id"\} 1/,
    );
  });

  it('reports a partial success in protobuf, and passes nothing on when every span is invalid', async () => {
    server.sink.batches.length = 0;
    const batch = sampleBatch(2);
    const spans = batch.resourceSpans[0]!.scopeSpans[0]!.spans as unknown as { traceId: string }[];
    for (const span of spans) span.traceId = 'abcd';
    const response = await post(server.tracesUrl, protoBody(batch), PROTO_HEADERS);
    assert.equal(response.status, 200);
    const partial = decodeExportResponseProtobuf(response.bytes);
    assert.equal(partial?.rejectedSpans, 2n);
    assert.match(partial!.errorMessage, /^2 spans rejected; first: .*traceId must be 16 bytes, got 2$/);
    // The reference client reads it too.
    assert.equal(
      ProtobufTraceSerializer.deserializeResponse(response.bytes).partialSuccess?.errorMessage,
      partial!.errorMessage,
    );
    assert.equal(server.sink.batches.length, 0);
  });

  it('answers an empty request with 200 and passes nothing on', async () => {
    server.sink.batches.length = 0;
    assert.equal((await post(server.tracesUrl, '{}', JSON_HEADERS)).status, 200);
    assert.equal((await post(server.tracesUrl, Buffer.alloc(0), PROTO_HEADERS)).status, 200);
    assert.equal(server.sink.batches.length, 0);
  });

  it('serves /live, /ready and /metrics', async () => {
    const live = await fetch(`${server.origin}/live`);
    assert.equal(live.status, 200);
    assert.deepEqual(await live.json(), { status: 'alive' });
    const ready = await fetch(`${server.origin}/ready`);
    assert.equal(ready.status, 200);
    const metrics = await (await fetch(`${server.origin}/metrics`)).text();
    assert.match(
      metrics,
      /tracepipe_otlp_receiver_requests_total\{component_id="otlp",encoding="protobuf",status_code="200"\}/,
    );
  });

  it('while the service drains, refuses new requests with 503 and Retry-After, and keeps /live and /metrics', async () => {
    let state: ReturnType<Host['state']> = 'ready';
    const server = await startReceiver({}, { host: nopHost({ state: () => state }) });
    try {
      state = 'draining';
      const refused = await fetch(server.tracesUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '5');
      assert.match(((await refused.json()) as { message: string }).message, /shutting down/);
      assert.equal(server.sink.batches.length, 0);
      assert.equal((await fetch(`${server.origin}/live`)).status, 200);
      assert.equal((await fetch(`${server.origin}/metrics`)).status, 200);
    } finally {
      await server.close();
    }
  });

  it('reports /ready as 503 while the pipelines are starting', async () => {
    const starting = await startReceiver({}, { host: nopHost({ state: () => 'starting' }) });
    try {
      const ready = await fetch(`${starting.origin}/ready`);
      assert.equal(ready.status, 503);
      assert.deepEqual(await ready.json(), { status: 'starting' });
    } finally {
      await starting.close();
    }
  });
});

/** Sends a request whose Content-Length announces more than is sent, and returns the answer. */
function postDeclaringLength(
  url: string,
  declared: number,
  sent: Buffer,
): Promise<{ status: number; body: string; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { ...JSON_HEADERS, 'content-length': String(declared) } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }));
      },
    );
    req.on('error', reject);
    req.write(sent); // ...and never the rest: the answer must come anyway.
  });
}

/** Sends a chunked request (no Content-Length) of `total` bytes. */
function postChunked(url: string, total: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: JSON_HEADERS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    let written = 0;
    const pump = () => {
      while (written < total) {
        written += chunk.length;
        if (!req.write(chunk)) return req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('otlp receiver: bad input', () => {
  const MAX = 64 * 1024;
  let server: RunningReceiver;
  before(async () => {
    server = await startReceiver({ max_body_bytes: MAX });
  });
  after(() => server.close());

  const statusCases: [
    string,
    () => Promise<{ status: number; bytes: Buffer; json: () => Record<string, unknown> }>,
    number,
    RegExp,
  ][] = [
    [
      'invalid JSON',
      () => post(server.tracesUrl, '{"resourceSpans": [', JSON_HEADERS),
      400,
      /^malformed JSON ExportTraceServiceRequest: invalid JSON: /,
    ],
    [
      'wrong JSON types',
      () => post(server.tracesUrl, '{"resourceSpans": [{"scopeSpans": {}}]}', JSON_HEADERS),
      400,
      /resourceSpans\[0\]\.scopeSpans: must be an array, got an object/,
    ],
    [
      'a missing content type',
      () => post(server.tracesUrl, Buffer.from(jsonBody()), { 'x-api-key': 'k' }),
      415,
      /unsupported media type: got no Content-Type; use one of application\/x-protobuf, application\/protobuf, application\/json/,
    ],
    [
      'an unsupported content type',
      () => post(server.tracesUrl, jsonBody(), { 'content-type': 'text/plain', 'x-api-key': 'k' }),
      415,
      /got Content-Type "text\/plain"/,
    ],
    [
      'an unparsable content type',
      () => post(server.tracesUrl, jsonBody(), { 'content-type': '/', 'x-api-key': 'k' }),
      415,
      /.+/,
    ],
    [
      'an unsupported content encoding',
      () => post(server.tracesUrl, jsonBody(), { ...JSON_HEADERS, 'content-encoding': 'br' }),
      415,
      /unsupported Content-Encoding "br"; use one of identity, gzip, deflate, zstd/,
    ],
    [
      'a bad gzip stream',
      () => post(server.tracesUrl, Buffer.from('not gzip at all'), { ...JSON_HEADERS, 'content-encoding': 'gzip' }),
      400,
      /^invalid gzip stream: /,
    ],
    [
      'a truncated gzip stream',
      () =>
        post(server.tracesUrl, gzipSync(jsonBody()).subarray(0, 20), { ...JSON_HEADERS, 'content-encoding': 'gzip' }),
      400,
      /^invalid gzip stream: /,
    ],
    [
      'a bad deflate stream',
      () => post(server.tracesUrl, Buffer.from('nope'), { ...JSON_HEADERS, 'content-encoding': 'deflate' }),
      400,
      /^invalid deflate stream: /,
    ],
    [
      'a bad zstd stream',
      () => post(server.tracesUrl, Buffer.from('definitely not zstd'), { ...JSON_HEADERS, 'content-encoding': 'zstd' }),
      400,
      /^invalid zstd stream: /,
    ],
    [
      'a truncated zstd stream',
      () =>
        post(server.tracesUrl, zstdCompress(Buffer.from(jsonBody())).subarray(0, 12), {
          ...JSON_HEADERS,
          'content-encoding': 'zstd',
        }),
      400,
      /^invalid zstd stream: /,
    ],
    [
      'a missing key',
      () => post(server.tracesUrl, jsonBody(), { 'content-type': 'application/json' }),
      401,
      /missing API key/,
    ],
    [
      'a wrong path',
      () => post(`${server.origin}/v1/trace`, jsonBody(), JSON_HEADERS),
      404,
      /^no route for POST \/v1\/trace; OTLP traces go to POST \/v1\/traces$/,
    ],
    [
      'a wrong method',
      () =>
        fetch(server.tracesUrl, { method: 'GET' }).then(async (r) => {
          const bytes = Buffer.from(await r.arrayBuffer());
          assert.equal(r.headers.get('allow'), 'POST');
          return { status: r.status, bytes, json: () => JSON.parse(bytes.toString()) };
        }),
      405,
      /^method GET is not allowed on \/v1\/traces; use POST$/,
    ],
    [
      'an oversize body',
      () => post(server.tracesUrl, Buffer.alloc(MAX + 1, 0x20), JSON_HEADERS),
      413,
      /request body of 65537 bytes exceeds the 65536-byte limit/,
    ],
    [
      'an oversize decompressed body (a gzip bomb)',
      () =>
        post(server.tracesUrl, gzipSync(Buffer.alloc(50 * MAX, 0x20)), { ...JSON_HEADERS, 'content-encoding': 'gzip' }),
      413,
      /request body decompresses to more than the 65536-byte limit/,
    ],
    [
      'an oversize decompressed body (a zstd bomb)',
      () =>
        post(server.tracesUrl, zstdCompress(Buffer.alloc(50 * MAX, 0x20)), {
          ...JSON_HEADERS,
          'content-encoding': 'zstd',
        }),
      413,
      /decompresses to more than/,
    ],
  ];
  for (const [name, send, status, message] of statusCases) {
    it(`answers ${status} to ${name}, with a google.rpc.Status body`, async () => {
      const response = await send();
      assert.equal(response.status, status);
      const body = response.json();
      assert.equal(typeof body.code, 'number');
      assert.match(String(body.message), message);
    });
  }

  it('answers every other method on the traces and health paths 405 with Allow, JSON whatever the type', async () => {
    for (const [method, path, allow] of [
      ['PUT', '/v1/traces', 'POST'],
      ['DELETE', '/v1/traces', 'POST'],
      ['OPTIONS', '/v1/traces', 'POST'],
      ['POST', '/live', 'GET, HEAD'],
      ['DELETE', '/metrics', 'GET, HEAD'],
    ] as const) {
      const response = await fetch(`${server.origin}${path}`, {
        method,
        headers: { 'content-type': 'application/x-protobuf' },
      });
      assert.equal(response.status, 405, `${method} ${path}`);
      assert.equal(response.headers.get('allow'), allow, `${method} ${path}`);
      assert.match(response.headers.get('content-type')!, /^application\/json/);
      assert.deepEqual(await response.json(), {
        code: 12,
        message: `method ${method} is not allowed on ${path}; use ${allow.replace(', ', ' or ')}`,
      });
    }
    const head = await fetch(server.tracesUrl, { method: 'HEAD' });
    assert.equal(head.status, 405);
    assert.equal(head.headers.get('allow'), 'POST');
    const unknown = await fetch(`${server.origin}/v1/traces/more`, { method: 'GET' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('allow'), null);
  });

  const protobufCases: [string, Buffer][] = [
    ['truncated protobuf', protoBody().subarray(0, 40)],
    ['garbage protobuf', Buffer.from('\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff', 'latin1')],
    ['protobuf with an overrunning length', Buffer.from([0x0a, 0x7f, 0x12, 0x00])],
  ];
  for (const [name, bytes] of protobufCases) {
    it(`answers 400 to ${name}, with a protobuf google.rpc.Status body`, async () => {
      const response = await post(server.tracesUrl, bytes, PROTO_HEADERS);
      assert.equal(response.status, 400);
      assert.equal(response.headers.get('content-type'), 'application/x-protobuf');
      const status = decodeStatusProtobuf(response.bytes);
      assert.equal(status.code, 3);
      assert.match(status.message, /^malformed protobuf ExportTraceServiceRequest: /);
    });
  }

  it('answers 413 from Content-Length alone, before the body; closes the connection only past 64 MiB declared', async () => {
    // The rest of a body up to 64 MiB is read and discarded after the answer, so that a client
    // still sending it gets the answer rather than a reset (src/http/server.ts).
    const response = await postDeclaringLength(server.tracesUrl, 10 * MAX, Buffer.from('{"resourceSpans":'));
    assert.equal(response.status, 413);
    assert.notEqual(response.connection, 'close');
    assert.match(response.body, /request body of 655360 bytes exceeds the 65536-byte limit/);
    const huge = await postDeclaringLength(server.tracesUrl, 100 * 1024 * 1024, Buffer.from('{"resourceSpans":'));
    assert.equal(huge.status, 413);
    assert.equal(huge.connection, 'close');
  });

  it('answers 413 to a chunked body that grows past the limit', async () => {
    const response = await postChunked(server.tracesUrl, 4 * MAX);
    assert.equal(response.status, 413);
    assert.match(response.body, /request body exceeds the 65536-byte limit/);
  });

  it('answers 400 (or 200 when the bytes happen to decode) to random protobuf bodies, and keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 256 }), async (bytes) => {
        const response = await post(server.tracesUrl, Buffer.from(bytes), PROTO_HEADERS);
        assert.ok(response.status === 400 || response.status === 200, `status ${response.status}`);
        if (response.status === 400) assert.equal(decodeStatusProtobuf(response.bytes).code, 3);
      }),
      { numRuns: 100 },
    );
    assert.equal((await post(server.tracesUrl, protoBody(), PROTO_HEADERS)).status, 200);
  });

  it('keeps serving after a client hangs up in the middle of its body', async () => {
    await new Promise<void>((resolve) => {
      const req = httpRequest(server.tracesUrl, {
        method: 'POST',
        headers: { ...JSON_HEADERS, 'content-length': '1000' },
      });
      req.on('error', () => resolve());
      req.write('{"resourceSpans":[', () => setTimeout(() => req.destroy(), 20));
      req.on('close', () => resolve());
    });
    server.sink.batches.length = 0;
    assert.equal((await post(server.tracesUrl, jsonBody(), JSON_HEADERS)).status, 200);
    assert.equal(server.sink.batches.length, 1);
  });

  it('serves other requests in flight while bad ones are refused', async () => {
    server.sink.batches.length = 0;
    const sends = [];
    for (let round = 0; round < 3; round++) {
      for (const [, send] of statusCases) sends.push(send().then((r) => r.status));
      for (const [, bytes] of protobufCases)
        sends.push(post(server.tracesUrl, bytes, PROTO_HEADERS).then((r) => r.status));
      sends.push(post(server.tracesUrl, protoBody(sampleBatch(5)), PROTO_HEADERS).then((r) => r.status));
      sends.push(post(server.tracesUrl, jsonBody(sampleBatch(5)), JSON_HEADERS).then((r) => r.status));
    }
    const statuses = await Promise.all(sends);
    assert.equal(statuses.filter((s) => s === 200).length, 6);
    assert.equal(server.sink.batches.length, 6);
    for (const { data } of server.sink.batches) assert.deepEqual(data, sampleBatch(5));
  });
});

describe('otlp receiver: bodies read into reused buffers', () => {
  // With fsync_interval_ms a body waits for the journal's sync before it is decoded, while other
  // requests are read: a buffer lent again too early would be overwritten under it.
  let directory: string;
  let server: RunningReceiver;
  before(async () => {
    directory = tempDir('tp-otlp-buffers-');
    server = await startReceiver({ journal: { enabled: true, directory, fsync_interval_ms: 5 } });
  });
  after(async () => {
    await server.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('delivers concurrent bodies of many chunks intact, whose buffers are reused from request to request', async () => {
    // ~300 KB each, so every body arrives in several socket reads and is assembled in a lent buffer.
    const bodyOf = (n: number) =>
      makeBatch(
        Array.from({ length: 100 }, (_, i) =>
          plainSpan({
            name: `r${n}-s${i}`,
            attributes: [stringAttr('payload', `${n}:${i}:`.padEnd(3000, String(n % 10)))],
          }),
        ),
      );
    server.sink.batches.length = 0;
    for (let round = 0; round < 3; round++) {
      const numbers = [0, 1, 2, 3, 4, 5].map((k) => round * 6 + k);
      const answers = await Promise.all(
        numbers.map((n) => post(server.tracesUrl, protoBody(bodyOf(n)), PROTO_HEADERS)),
      );
      assert.deepEqual(
        answers.map((answer) => answer.status),
        numbers.map(() => 200),
      );
    }
    const received = server.sink.batches
      .map((batch) => batch.data)
      .sort((a, b) => spanName(a).localeCompare(spanName(b)));
    const expected = Array.from({ length: 18 }, (_, n) => bodyOf(n)).sort((a, b) =>
      spanName(a).localeCompare(spanName(b)),
    );
    assert.deepEqual(received, expected);
  });
});

describe('otlp receiver: bad input with the journal on', () => {
  // The journal takes a body before it is decoded; the answers must be those of the journal off.
  let directory: string;
  let server: RunningReceiver;
  before(async () => {
    directory = tempDir('tp-otlp-journal-');
    server = await startReceiver({ journal: { enabled: true, directory, max_bytes: 65536 } });
  });
  after(async () => {
    await server.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('answers a malformed body 400 and an empty one 200, and passes on only valid spans', async () => {
    server.sink.batches.length = 0;
    const malformed = await post(server.tracesUrl, '{"resourceSpans": [', JSON_HEADERS);
    assert.equal(malformed.status, 400);
    assert.match(String(malformed.json().message), /^malformed JSON ExportTraceServiceRequest: /);
    assert.equal((await post(server.tracesUrl, '{}', JSON_HEADERS)).status, 200);
    assert.equal((await post(server.tracesUrl, protoBody(), PROTO_HEADERS)).status, 200);
    assert.equal(server.sink.batches.length, 1);
  });

  it('still answers 400 and 200 to bodies too large for the journal, and 413 to spans it cannot keep', async () => {
    const padding = ' '.repeat(70_000); // past the journal's 65,536 bytes
    const malformed = await post(server.tracesUrl, `{"resourceSpans": [${padding}`, JSON_HEADERS);
    assert.equal(malformed.status, 400);
    assert.match(String(malformed.json().message), /^malformed JSON ExportTraceServiceRequest: /);
    assert.equal((await post(server.tracesUrl, `{}${padding}`, JSON_HEADERS)).status, 200);
    const spans = await post(server.tracesUrl, `${jsonBody()}${padding}`, JSON_HEADERS);
    assert.equal(spans.status, 413);
    assert.match(String(spans.json().message), /can never fit under the journal's 65536-byte cap/);
  });
});

describe('otlp receiver: back-pressure', () => {
  let server: RunningReceiver;
  before(async () => {
    server = await startReceiver();
  });
  after(() => server.close());

  it('answers 429 with Retry-After when the pipeline throttles', async () => {
    server.sink.fail = () => new ThrottleError('batch buffer is full', 2500);
    try {
      const json = await post(server.tracesUrl, jsonBody(), JSON_HEADERS);
      assert.equal(json.status, 429);
      assert.equal(json.headers.get('retry-after'), '3');
      assert.deepEqual(json.json(), { code: 8, message: 'the pipeline is full, retry later: batch buffer is full' });
      const proto = await post(server.tracesUrl, protoBody(), PROTO_HEADERS);
      assert.equal(proto.status, 429);
      assert.deepEqual(decodeStatusProtobuf(proto.bytes), {
        code: 8,
        message: 'the pipeline is full, retry later: batch buffer is full',
      });
    } finally {
      server.sink.fail = undefined;
    }
  });

  it('refuses with 429 before reading the body when requests being read already hold memory_limit_bytes', async () => {
    const limited = await startReceiver({ memory_limit_bytes: 1000 });
    const body = Buffer.from(protoBody());
    // A request whose body is still arriving is held at five times its size: the empty receiver
    // takes it, whatever its size.
    const slow = httpRequest(limited.tracesUrl, {
      method: 'POST',
      headers: { ...PROTO_HEADERS, 'content-length': String(body.length) },
    });
    const slowAnswer = new Promise<number>((resolve, reject) => {
      slow.on('response', (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      slow.on('error', reject);
    });
    slow.write(body.subarray(0, 10));
    try {
      // Another request declaring a body is refused at once: its body is never sent, so an
      // answer proves the receiver did not wait for it.
      const refused = await eventually(async () => {
        const answer = await rawPost(limited.tracesUrl, body.length);
        assert.equal(answer.status, 429);
        return answer;
      });
      assert.equal(refused.headers['retry-after'], '1');
      assert.match(refused.body, /the pipeline is full, retry later: .*bytes of requests are held in memory/);
      slow.end(body.subarray(10));
      assert.equal(await slowAnswer, 200);
      // Delivered: the room is free again.
      assert.equal((await post(limited.tracesUrl, body, PROTO_HEADERS)).status, 200);
      assert.equal(limited.sink.batches.length, 2);
    } finally {
      slow.destroy();
      await limited.close();
    }
  });

  it('answers 503 with Retry-After when the pipeline fails for another reason', async () => {
    server.sink.fail = () => new Error('disk queue unavailable');
    try {
      const response = await post(server.tracesUrl, jsonBody(), JSON_HEADERS);
      assert.equal(response.status, 503);
      assert.equal(response.headers.get('retry-after'), '1');
      assert.deepEqual(response.json(), {
        code: 14,
        message: 'the pipeline is unavailable, retry later: disk queue unavailable',
      });
    } finally {
      server.sink.fail = undefined;
    }
  });

  it('answers 400 when the pipeline refuses the data permanently', async () => {
    server.sink.fail = () => new PermanentError('spans too large to upload');
    try {
      const response = await post(server.tracesUrl, jsonBody(), JSON_HEADERS);
      assert.equal(response.status, 400);
      assert.deepEqual(response.json(), {
        code: 3,
        message: 'the pipeline refused the data: spans too large to upload',
      });
    } finally {
      server.sink.fail = undefined;
    }
  });

  it('answers only after the pipeline has accepted the data', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let consumed = false;
    const gated = new Sink<'spans'>();
    const inner = gated.consume.bind(gated);
    gated.consume = async (data, ctx) => {
      consumed = true;
      await gate;
      return inner(data, ctx);
    };
    const slow = await startReceiver({}, { sink: gated });
    try {
      let answered = false;
      const response = post(slow.tracesUrl, jsonBody(), JSON_HEADERS).then((r) => ((answered = true), r));
      await eventually(() => consumed);
      // The pipeline holds the batch: the client must still be waiting.
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(answered, false);
      release();
      assert.equal((await response).status, 200);
      assert.equal(gated.batches.length, 1);
    } finally {
      release();
      await slow.close();
    }
  });
});

describe('otlp receiver: CORS', () => {
  let server: RunningReceiver;
  before(async () => {
    server = await startReceiver({ cors: { allowed_origins: ['https://app.example.com'] } });
  });
  after(() => server.close());

  it('answers a preflight from an allowed origin', async () => {
    const response = await fetch(server.tracesUrl, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-api-key',
      },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), 'https://app.example.com');
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /X-API-Key/);
  });

  it('answers another method 405 with Allow and an unknown path 404, preflights aside', async () => {
    const get = await fetch(server.tracesUrl, { headers: { origin: 'https://app.example.com' } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    assert.equal(get.headers.get('access-control-allow-origin'), 'https://app.example.com');
    assert.deepEqual(await get.json(), { code: 12, message: 'method GET is not allowed on /v1/traces; use POST' });
    // The CORS plugin's `OPTIONS *` route makes no path known.
    const unknown = await fetch(`${server.origin}/nowhere`, { method: 'DELETE' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('allow'), null);
    assert.match(((await unknown.json()) as { message: string }).message, /^no route for DELETE \/nowhere; /);
  });

  it('lets an allowed origin read the answer, and not another one', async () => {
    const allowed = await fetch(server.tracesUrl, {
      method: 'POST',
      body: jsonBody(),
      headers: { ...JSON_HEADERS, origin: 'https://app.example.com' },
    });
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://app.example.com');
    const other = await fetch(server.tracesUrl, {
      method: 'POST',
      body: jsonBody(),
      headers: { ...JSON_HEADERS, origin: 'https://evil.example.com' },
    });
    assert.equal(other.headers.get('access-control-allow-origin'), null);
  });
});

describe('otlp receiver: factory', () => {
  it('declares its listen address so two receivers on one port are caught before start', () => {
    const grpc = { enabled: false, host: '0.0.0.0', port: 4317 };
    assert.deepEqual(
      otlpReceiverFactory.listenAddresses({ host: '0.0.0.0', port: 4318, protocols: { grpc } } as never),
      ['0.0.0.0:4318'],
    );
    assert.deepEqual(
      otlpReceiverFactory.listenAddresses({
        host: '0.0.0.0',
        port: 4318,
        protocols: { grpc: { ...grpc, enabled: true } },
      } as never),
      ['0.0.0.0:4318', '0.0.0.0:4317'],
    );
  });
});
