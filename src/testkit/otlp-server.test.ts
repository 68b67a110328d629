// The test kit's OTLP/HTTP endpoint answers as an OTLP server would for what the exporters' tests
// do not send: another path, a body that does not decode, a request without tenant headers.

import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { encodeTraceRequestJson, encodeTraceRequestProtobuf } from '../otlp/encode.ts';
import { makeSpanBatch } from './spans.ts';
import { OtlpHttpServer, startOtlpHttpServer } from './otlp-server.ts';

describe('OtlpHttpServer', () => {
  let server: OtlpHttpServer;
  before(async () => {
    server = await startOtlpHttpServer();
  });
  after(async () => {
    await server.close();
  });

  it('accepts a gzipped protobuf export into its sink, for the tenant its headers name', async () => {
    const batch = makeSpanBatch(3);
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-protobuf',
        'content-encoding': 'gzip',
        'x-api-key': 'key-1',
        'service-project': 'proj-1',
      },
      body: gzipSync(encodeTraceRequestProtobuf(batch)),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/x-protobuf');
    assert.deepEqual(server.sink.batches.at(-1), {
      data: batch,
      context: { apiKey: 'key-1', project: 'proj-1', receiver: 'otlp' },
    });
    assert.equal(server.requests.at(-1)!.spans, 3);
  });

  it('records a JSON export without tenant headers under the default project', async () => {
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(encodeTraceRequestJson(makeSpanBatch(1))),
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {});
    assert.deepEqual(server.sink.batches.at(-1)!.context, { project: 'default', receiver: 'otlp' });
  });

  it('answers a body that does not decode with 400, recorded with its error and kept out of the sink', async () => {
    const accepted = server.sink.batches.length;
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"resourceSpans": 7}',
    });
    assert.equal(response.status, 400);
    assert.equal(typeof ((await response.json()) as { message: unknown }).message, 'string');
    assert.ok(server.requests.at(-1)!.error);
    assert.equal(server.sink.batches.length, accepted);
  });

  it('answers what the test scripts, and keeps a refused batch out of the sink', async () => {
    const accepted = server.sink.batches.length;
    server.answer = () => ({ status: 429, headers: { 'retry-after': '3' } });
    try {
      const response = await fetch(`${server.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf' },
        body: encodeTraceRequestProtobuf(makeSpanBatch(2)),
      });
      assert.equal(response.status, 429);
      assert.equal(response.headers.get('retry-after'), '3');
      assert.equal(server.requests.at(-1)!.spans, 2);
      assert.equal(server.sink.batches.length, accepted);
    } finally {
      server.answer = () => ({ status: 200 });
    }
  });

  it('answers 404 off the traces path', async () => {
    const response = await fetch(`${server.url}/v1/metrics`, { method: 'POST', body: '' });
    assert.equal(response.status, 404);
    await response.body?.cancel();
  });

  it('comes back on the same port after close(), still recording into the same sink', async () => {
    const { port } = server;
    const accepted = server.sink.batches.length;
    await server.close();
    await assert.rejects(fetch(`${server.url}/v1/traces`, { method: 'POST', body: '' }));
    await server.listen(port);
    assert.equal(server.port, port);
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: encodeTraceRequestProtobuf(makeSpanBatch(1)),
    });
    assert.equal(response.status, 200);
    assert.equal(server.sink.batches.length, accepted + 1);
  });
});
