// The request the ingest benchmarks send: 100 GenAI-looking spans (LLM calls with prompts,
// completions and token counts, as instrumented agents produce), encoded in both OTLP forms.
// `document` adds a retrieved document of ~8 KB to every prompt, in German or in Chinese: long
// values that are not ASCII, as retrieval-augmented agents send in most languages.

import { randomBytes } from 'node:crypto';
import type { Span, SpanBatch } from '../../src/model/spans.ts';
import { encodeTraceRequestJson, encodeTraceRequestProtobuf } from '../../src/otlp/encode.ts';
import { intAttr, makeBatch, plainSpan, stringAttr } from '../../src/testkit/spans.ts';

export type DocumentLanguage = 'none' | 'german' | 'chinese';

const DOCUMENT_TEXT: Record<Exclude<DocumentLanguage, 'none'>, string> = {
  german: 'Die Rückerstattung erfolgt innerhalb von 14 Tagen über die ursprüngliche Zahlungsart. ',
  chinese: '退款将在十四天内通过原支付方式处理，请保留您的订单号以便查询。',
};

/** ~8 KB of UTF-8 in `language` (numbered sentences, so that no two prompts are equal). */
function documentIn(language: Exclude<DocumentLanguage, 'none'>, seed: number): string {
  const sentence = DOCUMENT_TEXT[language];
  const count = Math.ceil(8192 / Buffer.byteLength(sentence));
  return Array.from({ length: count }, (_, i) => `${seed}.${i} ${sentence}`).join('');
}

export function sampleBatch(spanCount = 100, document: DocumentLanguage = 'none'): SpanBatch {
  const traceId = randomBytes(16).toString('hex');
  const rootId = randomBytes(8).toString('hex');
  const spans: Span[] = [];
  for (let i = 0; i < spanCount; i++) {
    const start = 1_700_000_000_000_000_000n + BigInt(i) * 1_000_000n;
    spans.push(
      plainSpan({
        traceId,
        spanId: i === 0 ? rootId : randomBytes(8).toString('hex'),
        parentSpanId: i === 0 ? '' : rootId,
        flags: 0x101,
        name: i === 0 ? 'agent run' : `ChatOpenAI ${i}`,
        kind: i === 0 ? 2 : 3,
        startTimeUnixNano: start,
        endTimeUnixNano: start + 850_000_000n,
        attributes: [
          stringAttr('gen_ai.system', 'openai'),
          stringAttr('gen_ai.request.model', 'gpt-4o-mini'),
          stringAttr(
            'gen_ai.prompt',
            JSON.stringify([
              ...(document === 'none' ? [] : [{ role: 'system', content: documentIn(document, i) }]),
              { role: 'user', content: `Question number ${i}: what is the weather in Paris today?` },
            ]),
          ),
          stringAttr(
            'gen_ai.completion',
            JSON.stringify([
              { role: 'assistant', content: 'It is sunny, 21 degrees, with a light breeze from the west.' },
            ]),
          ),
          intAttr('gen_ai.usage.input_tokens', 42),
          intAttr('gen_ai.usage.output_tokens', 17),
          { key: 'gen_ai.request.temperature', value: { type: 'double', value: 0.2 } },
          { key: 'llm.is_streaming', value: { type: 'bool', value: false } },
        ],
        status: { code: 1, message: '' },
      }),
    );
  }
  return makeBatch(spans, {
    resource: [stringAttr('service.name', 'support-agent'), stringAttr('telemetry.sdk.language', 'nodejs')],
    scope: { name: 'openinference.instrumentation.langchain', version: '0.1.0' },
  });
}

export function sampleBodies(spanCount = 100, document: DocumentLanguage = 'none'): { protobuf: Buffer; json: Buffer } {
  const batch = sampleBatch(spanCount, document);
  return {
    protobuf: Buffer.from(encodeTraceRequestProtobuf(batch)),
    json: Buffer.from(JSON.stringify(encodeTraceRequestJson(batch))),
  };
}
