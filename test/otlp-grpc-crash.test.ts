// Acknowledged over gRPC means kept: the proxy (configs/proxy.yaml, its OTLP/gRPC listener) is
// fed GenAI traces by the OpenTelemetry JS gRPC exporter while the backend refuses every upload,
// then killed with SIGKILL right after the last acknowledgement. Restarted on the same DATA_DIR
// with the backend back, it delivers every run of every acknowledged export, translated and with
// its parent.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Metadata } from '@grpc/grpc-js';
import { context, trace } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { BackendStub } from '../plugins/exporters/backend/testing/backend_stub.ts';
import { idToUuid } from '../plugins/processors/genai/internal/ids.ts';
import { tempDir } from '../src/testkit/files.ts';
import { ProxyProcess, killAllProxies } from './support/proxy_process.ts';

const TRACES = 20;

/** A GenAI trace of an agent span and its chat child, finished. */
function genaiTrace(index: number): ReadableSpan[] {
  const recorded = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(recorded)] });
  const tracer = provider.getTracer('crash-test');
  const agent = tracer.startSpan(`invoke_agent ${index}`, { attributes: { 'gen_ai.operation.name': 'invoke_agent' } });
  tracer
    .startSpan(
      'chat gpt-4o',
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': 'openai',
          'gen_ai.usage.input_tokens': 7,
          'gen_ai.usage.output_tokens': 2,
        },
      },
      trace.setSpan(context.active(), agent),
    )
    .end();
  agent.end();
  return recorded.getFinishedSpans();
}

describe('OTLP/gRPC through configs/proxy.yaml: kill -9 after the acknowledgement', () => {
  const backend = new BackendStub();
  let endpoint: string;
  before(async () => {
    endpoint = await backend.start();
  });
  after(async () => {
    await killAllProxies();
    await backend.close();
  });

  it('delivers every acknowledged span after a restart', async () => {
    backend.answer = () => ({ status: 503, headers: { 'retry-after': '1' } });
    const dataDir = tempDir('tp-grpc-crash-');
    const proxy = await ProxyProcess.start({ endpoint, dataDir, grpc: true, env: { FLUSH_INTERVAL_MS: '50' } });
    const metadata = new Metadata();
    metadata.set('x-api-key', 'tenant-grpc');
    const exporter = new GrpcExporter({ url: `http://127.0.0.1:${proxy.grpcPort}`, metadata });
    const expected = new Map<string, string | undefined>();
    try {
      for (let i = 0; i < TRACES; i++) {
        const spans = genaiTrace(i);
        const result = await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
        assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
        const agent = spans.find((span) => span.name.startsWith('invoke_agent'))!;
        const rootId = idToUuid(agent.spanContext().traceId)!;
        expected.set(rootId, undefined);
        const chat = spans.find((span) => span.name === 'chat gpt-4o')!;
        expected.set(idToUuid(chat.spanContext().spanId)!, rootId);
      }
    } finally {
      await exporter.shutdown();
    }
    await proxy.kill9();
    assert.equal(backend.accepted.size, 0, 'nothing was delivered before the kill');

    backend.answer = () => ({ status: 202 });
    const restarted = await proxy.restart();
    await backend.waitFor(() => [...expected.keys()].every((id) => backend.accepted.has(id)), 60_000);
    for (const [id, parent] of expected) {
      const { run, apiKey } = backend.accepted.get(id)!;
      assert.equal(run.parent_run_id, parent, `run ${id}'s parent`);
      assert.equal(apiKey, 'tenant-grpc');
    }
    const chats = [...backend.accepted.values()].filter(({ run }) => run.run_type === 'llm');
    assert.equal(chats.length, TRACES);
    await restarted.sigterm();
  });
});
