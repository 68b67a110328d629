// The translation path end to end over real HTTP and gRPC, three built-in components together:
// the OpenTelemetry JS SDK exports each span as it ends (children first, one request each) through
// the OTLP/HTTP exporters, JSON and protobuf, and the OTLP/gRPC exporter, to the `otlp` receiver on
// loopback ports, then `genai` → `batch` → a recording sink.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { context, trace } from '@opentelemetry/api';
import { Metadata } from '@grpc/grpc-js';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as HttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as HttpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { validateAgainst, Sink, nopSettings } from 'tracepipe/testing';
import { batchProcessorFactory } from '../../plugins/processors/batch/index.ts';
import type { BatchProcessorConfig } from '../../plugins/processors/batch/index.ts';
import { otlpReceiverFactory } from '../../plugins/receivers/otlp/index.ts';
import type { OtlpReceiverConfig } from '../../plugins/receivers/otlp/index.ts';
import { genAiProcessorFactory } from '../../plugins/processors/genai/index.ts';
import type { GenAiProcessorConfig } from '../../plugins/processors/genai/index.ts';
import { idToUuid } from '../../plugins/processors/genai/internal/ids.ts';

function configOf<C>(schema: Record<string, unknown>, values: Record<string, unknown>): C {
  const config = { ...values };
  const errors = validateAgainst(schema, config, 'test');
  assert.deepEqual(errors, []);
  return config as C;
}

async function runPipeline(makeExporter: (url: string) => SpanExporter, protocol: 'http' | 'grpc') {
  const sink = new Sink<'runs'>();
  const batch = batchProcessorFactory.create(
    nopSettings('processor', 'batch'),
    configOf<BatchProcessorConfig>(batchProcessorFactory.configSchema, { flush_interval_ms: 20 }),
    sink,
  );
  const genai = genAiProcessorFactory.create(
    nopSettings('processor', 'genai'),
    configOf<GenAiProcessorConfig>(genAiProcessorFactory.configSchema, {}),
    batch,
  );
  const receiverConfig = configOf<OtlpReceiverConfig>(otlpReceiverFactory.configSchema, {
    port: 0,
    api_key: '',
    protocols: { grpc: { enabled: true, port: 0 } },
  });
  const receiver = otlpReceiverFactory.create(nopSettings('receiver', 'otlp'), receiverConfig, genai) as ReturnType<
    typeof otlpReceiverFactory.create
  > & { port: number; grpcPort: number };
  const controller = new AbortController();
  await batch.start(controller.signal);
  await genai.start(controller.signal);
  await receiver.start(controller.signal);

  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'e2e-agent' }),
    spanProcessors: [
      new SimpleSpanProcessor(
        makeExporter(
          protocol === 'grpc' ? `http://127.0.0.1:${receiver.grpcPort}` : `http://127.0.0.1:${receiver.port}/v1/traces`,
        ),
      ),
    ],
  });
  const tracer = provider.getTracer('e2e');
  const root = tracer.startSpan('invoke_agent trip', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } });
  const rootContext = trace.setSpan(context.active(), root);
  const llm = tracer.startSpan(
    'chat gpt-4o',
    {
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.prompt': 'Plan a trip',
        'gen_ai.completion': 'Go to Rome',
        'gen_ai.usage.input_tokens': 5,
        'gen_ai.usage.output_tokens': 3,
      },
    },
    rootContext,
  );
  const tool = tracer.startSpan(
    'execute_tool book',
    { attributes: { 'gen_ai.tool.name': 'book' } },
    trace.setSpan(rootContext, llm),
  );
  tool.end();
  llm.end();
  root.end();
  await provider.forceFlush();
  await sink.waitFor(() => sink.batches.flatMap((item) => item.data.runs).length === 3);

  await receiver.shutdown(Date.now() + 2000);
  await genai.shutdown(Date.now() + 2000);
  await batch.shutdown(Date.now() + 2000);
  await provider.shutdown();
  controller.abort();
  return { sink, traceId: root.spanContext().traceId, llmSpanId: llm.spanContext().spanId };
}

/** The tenant's key and project, as a gRPC exporter sends them: call metadata. */
function grpcMetadata(): Metadata {
  const metadata = new Metadata();
  metadata.set('x-api-key', 'tenant-key');
  metadata.set('service-project', 'trips');
  return metadata;
}

describe('genai + batch behind the otlp receiver, fed by the OpenTelemetry JS SDK', () => {
  for (const [label, protocol, makeExporter] of [
    [
      'OTLP/HTTP JSON',
      'http',
      (url: string) =>
        new HttpJsonExporter({ url, headers: { 'x-api-key': 'tenant-key', 'service-project': 'trips' } }),
    ],
    [
      'OTLP/HTTP protobuf',
      'http',
      (url: string) =>
        new HttpProtoExporter({ url, headers: { 'x-api-key': 'tenant-key', 'service-project': 'trips' } }),
    ],
    [
      'OTLP/gRPC, gzip',
      'grpc',
      (url: string) => new GrpcExporter({ url, compression: 'gzip' as never, metadata: grpcMetadata() }),
    ],
  ] as const) {
    it(`${label}: spans exported children first become one ordered trace`, async () => {
      const { sink, traceId, llmSpanId } = await runPipeline(makeExporter, protocol);
      const runs = sink.batches.flatMap((item) => item.data.runs);
      assert.ok(sink.batches.every((item) => item.context.apiKey === 'tenant-key'));
      const rootId = idToUuid(traceId)!;
      const llmId = idToUuid(llmSpanId)!;
      assert.deepEqual(
        runs.map((run) => [run.name, run.run_type, run.parent_run_id, run.trace_id, run.session_name]),
        [
          ['invoke_agent trip', 'chain', undefined, rootId, 'trips'],
          ['chat gpt-4o', 'llm', rootId, rootId, 'trips'],
          ['execute_tool book', 'tool', llmId, rootId, 'trips'],
        ],
      );
      const llm = runs[1]!;
      assert.deepEqual(llm.inputs, { input: 'Plan a trip' });
      assert.deepEqual(llm.outputs, {
        text: 'Go to Rome',
        usage_metadata: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
      });
      assert.deepEqual(llm.extra!.resource, { 'service.name': 'e2e-agent' });
      assert.match(
        runs[2]!.dotted_order!,
        new RegExp(`^\\d{8}T\\d{12}Z${rootId}\\.\\d{8}T\\d{12}Z${llmId}\\.\\d{8}T\\d{12}Z${runs[2]!.id}$`),
      );
    });
  }
});
