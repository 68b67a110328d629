// The example ndjson receiver: conformance, answers, and the journal's promise in one process — a
// request acknowledged while its delivery was still held is replayed, with its tenant, by the next
// receiver on the same journal. (test/ndjson-receiver-crash.test.ts in tracepipe's repository does
// the same across a kill -9 of a real process.)

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Consumer, Release, SpanBatch } from 'tracepipe/plugin';
import { holdDelivery } from 'tracepipe/plugin';
import { Sink, configFor, nopSettings, runComponentConformance, tempDir } from 'tracepipe/testing';
import type { NdjsonReceiver, NdjsonReceiverConfig } from './index.ts';
import factory from './index.ts';

runComponentConformance(factory, {
  testdataDir: fileURLToPath(new URL('./testdata', import.meta.url)),
  config: () => configFor<NdjsonReceiverConfig>(factory, { port: 0 }),
});

function line(spanId: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    trace_id: '0af7651916cd43dd8448eb211c80319c',
    span_id: spanId,
    name: `span ${spanId}`,
    start_time_unix_nano: '1700000000000000000',
    end_time_unix_nano: '1700000000500000000',
    ...extra,
  });
}

async function startReceiver(next: Consumer<'spans'>, partial: object = {}) {
  const config = configFor<NdjsonReceiverConfig>(factory, { port: 0, ...partial });
  const receiver = factory.create(nopSettings('receiver', 'ndjson'), config, next) as NdjsonReceiver;
  await receiver.start();
  const post = (body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${receiver.port}/v1/spans`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', ...headers },
      body,
    });
  return { receiver, post, stop: () => receiver.shutdown(Date.now() + 5000) };
}

const spansOf = (batch: SpanBatch) => batch.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));

describe('ndjson receiver', () => {
  it('answers 202 once the pipeline took the spans, under the request’s tenant and service', async () => {
    const sink = new Sink<'spans'>();
    const { post, stop } = await startReceiver(sink);
    try {
      const body = [
        line('1111111111111111', { attributes: { 'gen_ai.system': 'openai', tokens: 12, ratio: 0.5, cached: true } }),
        '',
        line('2222222222222222', { parent_span_id: '1111111111111111', status: 'error' }),
      ].join('\n');
      const response = await post(gzipSync(body), {
        'content-encoding': 'gzip',
        'x-api-key': 'key-1',
        'x-project': 'shop',
        'x-service-name': 'checkout',
      });
      assert.equal(response.status, 202);
      assert.deepEqual(await response.json(), { message: 'accepted', spans: 2 });
      const { data, context } = sink.batches[0]!;
      assert.deepEqual(context, { project: 'shop', receiver: 'ndjson', apiKey: 'key-1' });
      assert.deepEqual(data.resourceSpans[0]!.resource.attributes, [
        { key: 'service.name', value: { type: 'string', value: 'checkout' } },
      ]);
      const [root, child] = spansOf(data);
      assert.deepEqual(root!.attributes, [
        { key: 'gen_ai.system', value: { type: 'string', value: 'openai' } },
        { key: 'tokens', value: { type: 'int', value: 12n } },
        { key: 'ratio', value: { type: 'double', value: 0.5 } },
        { key: 'cached', value: { type: 'bool', value: true } },
      ]);
      assert.equal(child!.parentSpanId, '1111111111111111');
      assert.equal(child!.status.code, 2);
      assert.equal(child!.endTimeUnixNano, 1_700_000_000_500_000_000n);
    } finally {
      await stop();
    }
  });

  it('refuses bad input with a coded JSON error naming the problem, and delivers none of it', async () => {
    const sink = new Sink<'spans'>();
    const { post, stop } = await startReceiver(sink, { max_body_bytes: 1000 });
    try {
      const bad = await post([line('1111111111111111'), line('2222222222222222', { span_id: 'xyz' })].join('\n'));
      assert.equal(bad.status, 400);
      assert.deepEqual(await bad.json(), {
        statusCode: 400,
        error: 'Bad Request',
        code: 'TP_ERR_NDJSON_INVALID',
        message: 'line 2: span_id must be 16 lowercase hex digits',
      });
      const media = await post(line('1111111111111111'), { 'content-type': 'text/plain' });
      assert.equal(media.status, 415);
      assert.equal(((await media.json()) as { code: string }).code, 'TP_ERR_NDJSON_UNSUPPORTED_MEDIA');
      const large = await post('x'.repeat(2000));
      assert.equal(large.status, 413);
      assert.equal(((await large.json()) as { code: string }).code, 'TP_ERR_NDJSON_TOO_LARGE');
      // A gzip bomb: small as sent, over the limit once decompressed.
      const bomb = await post(gzipSync(Buffer.alloc(100_000, ' ')), { 'content-encoding': 'gzip' });
      assert.equal(bomb.status, 413);
      assert.equal(sink.batches.length, 0);
    } finally {
      await stop();
    }
  });

  it('replays an acknowledged request whose delivery never settled, with its tenant, after a restart', async () => {
    const journal = { enabled: true, directory: join(tempDir('ndjson-journal-'), 'journal') };
    // Takes the spans and holds their delivery forever: acknowledged, never delivered.
    const held: Release[] = [];
    const holding: Consumer<'spans'> = {
      mutatesData: false,
      consume: async (_batch, context) => void held.push(holdDelivery(context.delivery)),
    };
    const first = await startReceiver(holding, { journal });
    const answer = await first.post(line('3333333333333333'), { 'x-api-key': 'key-2', 'x-service-name': 'billing' });
    assert.equal(answer.status, 202);
    await first.stop();
    assert.equal(held.length, 1);

    const sink = new Sink<'spans'>();
    const second = await startReceiver(sink, { journal });
    try {
      await sink.waitFor(() => sink.batches.length === 1);
      const { data, context } = sink.batches[0]!;
      assert.deepEqual(context, { project: 'default', receiver: 'ndjson', apiKey: 'key-2' });
      assert.equal(spansOf(data)[0]!.spanId, '3333333333333333');
      assert.deepEqual(data.resourceSpans[0]!.resource.attributes[0]!.value, { type: 'string', value: 'billing' });
    } finally {
      await second.stop();
    }
  });
});
