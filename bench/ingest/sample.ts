// The request the ingest benchmarks send: 100 GenAI-looking spans (LLM calls with prompts,
// completions and token counts, as instrumented agents produce), encoded in both OTLP forms.

import { randomBytes } from 'node:crypto';
import type { Span, SpanBatch } from '../../src/model/spans.ts';
import { encodeTraceRequestJson, encodeTraceRequestProtobuf } from '../../src/otlp/encode.ts';

export function sampleBatch(spanCount = 100): SpanBatch {
  const traceId = randomBytes(16).toString('hex');
  const rootId = randomBytes(8).toString('hex');
  const spans: Span[] = [];
  for (let i = 0; i < spanCount; i++) {
    const start = 1_700_000_000_000_000_000n + BigInt(i) * 1_000_000n;
    spans.push({
      traceId,
      spanId: i === 0 ? rootId : randomBytes(8).toString('hex'),
      parentSpanId: i === 0 ? '' : rootId,
      traceState: '',
      flags: 0x101,
      name: i === 0 ? 'agent run' : `ChatOpenAI ${i}`,
      kind: i === 0 ? 2 : 3,
      startTimeUnixNano: start,
      endTimeUnixNano: start + 850_000_000n,
      attributes: [
        { key: 'gen_ai.system', value: { type: 'string', value: 'openai' } },
        { key: 'gen_ai.request.model', value: { type: 'string', value: 'gpt-4o-mini' } },
        { key: 'gen_ai.prompt', value: { type: 'string', value: JSON.stringify([{ role: 'user', content: `Question number ${i}: what is the weather in Paris today?` }]) } },
        { key: 'gen_ai.completion', value: { type: 'string', value: JSON.stringify([{ role: 'assistant', content: 'It is sunny, 21 degrees, with a light breeze from the west.' }]) } },
        { key: 'gen_ai.usage.input_tokens', value: { type: 'int', value: 42n } },
        { key: 'gen_ai.usage.output_tokens', value: { type: 'int', value: 17n } },
        { key: 'gen_ai.request.temperature', value: { type: 'double', value: 0.2 } },
        { key: 'llm.is_streaming', value: { type: 'bool', value: false } },
      ],
      droppedAttributesCount: 0,
      events: [],
      droppedEventsCount: 0,
      links: [],
      droppedLinksCount: 0,
      status: { code: 1, message: '' },
    });
  }
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { type: 'string', value: 'support-agent' } },
            { key: 'telemetry.sdk.language', value: { type: 'string', value: 'nodejs' } },
          ],
          droppedAttributesCount: 0,
        },
        schemaUrl: '',
        scopeSpans: [{ scope: { name: 'openinference.instrumentation.langchain', version: '0.1.0', attributes: [], droppedAttributesCount: 0 }, schemaUrl: '', spans }],
      },
    ],
  };
}

export function sampleBodies(spanCount = 100): { protobuf: Buffer; json: Buffer } {
  const batch = sampleBatch(spanCount);
  return {
    protobuf: Buffer.from(encodeTraceRequestProtobuf(batch)),
    json: Buffer.from(JSON.stringify(encodeTraceRequestJson(batch))),
  };
}
