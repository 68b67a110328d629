// The proxy benchmarks' workload (proxy.ts, stages.ts): OTLP/protobuf requests of traces of an
// agent root, an LLM call (prompt, completion, token usage), a tool call and a second LLM call,
// each request with fresh ids.

import { randomBytes } from 'node:crypto';
import type { Attribute, Span, SpanBatch } from '../../src/model/spans.ts';
import { encodeTraceRequestProtobuf } from '../../src/otlp/encode.ts';
import { intAttr as int, makeBatch as batchOf, plainSpan, stringAttr as str } from '../../src/testkit/spans.ts';

/** One request of `spans` spans: traces of an agent root with an LLM call, a tool call and a second LLM call. */
export function makeBatch(spans: number, sequence: number): SpanBatch {
  const list: Span[] = [];
  const base = BigInt(Date.now()) * 1_000_000n;
  while (list.length < spans) {
    const traceId = randomBytes(16).toString('hex');
    const rootId = randomBytes(8).toString('hex');
    const span = (name: string, parent: string, attributes: Attribute[], offset: bigint): Span =>
      plainSpan({
        traceId,
        spanId: parent === '' ? rootId : randomBytes(8).toString('hex'),
        parentSpanId: parent,
        flags: 1,
        name,
        startTimeUnixNano: base + offset,
        endTimeUnixNano: base + offset + 900_000_000n,
        attributes,
      });
    const question = `Request ${sequence}-${list.length}: summarise the quarterly report for the sales team in three bullet points.`;
    const llm = (offset: bigint) =>
      span(
        'chat gpt-4o-mini',
        rootId,
        [
          str('gen_ai.system', 'openai'),
          str('gen_ai.operation.name', 'chat'),
          str('gen_ai.request.model', 'gpt-4o-mini'),
          str(
            'gen_ai.prompt',
            JSON.stringify([
              { role: 'system', content: 'You are a helpful assistant.' },
              { role: 'user', content: question },
            ]),
          ),
          str(
            'gen_ai.completion',
            JSON.stringify([
              {
                role: 'assistant',
                content: `- Revenue grew 12%.\n- Churn fell to 3%.\n- Pipeline is ${sequence % 97} deals.`,
              },
            ]),
          ),
          int('gen_ai.usage.input_tokens', 42n),
          int('gen_ai.usage.output_tokens', 31n),
        ],
        offset,
      );
    list.push(
      span('agent', '', [str('openinference.span.kind', 'AGENT'), str('input.value', question)], 0n),
      llm(1_000_000n),
      span(
        'search_reports',
        rootId,
        [
          str('openinference.span.kind', 'TOOL'),
          str('tool.name', 'search_reports'),
          str('input.value', '{"quarter":"Q3"}'),
          str('output.value', '{"hits":3}'),
        ],
        2_000_000n,
      ),
      llm(3_000_000n),
    );
  }
  return batchOf(list.slice(0, spans), {
    resource: [str('service.name', 'bench-app')],
    scope: { name: 'bench', version: '1.0.0' },
  });
}

/** The same request, encoded as OTLP/protobuf. */
export function makeRequest(spans: number, sequence: number): Uint8Array {
  return encodeTraceRequestProtobuf(makeBatch(spans, sequence));
}
