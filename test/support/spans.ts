// Span batches for tests and benchmarks, in the pipeline's model: one resource, one scope, and
// GenAI-looking spans with random ids.

import { randomBytes } from 'node:crypto';
import type { Span, SpanBatch } from '../../src/model/spans.ts';

export function makeSpan(overrides: Partial<Span> = {}): Span {
  const start = BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n;
  return {
    traceId: randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
    parentSpanId: '',
    traceState: '',
    flags: 1,
    name: 'chat gpt-4o-mini',
    kind: 3,
    startTimeUnixNano: start,
    endTimeUnixNano: start + 1_500_000n,
    attributes: [
      { key: 'gen_ai.system', value: { type: 'string', value: 'openai' } },
      { key: 'gen_ai.usage.input_tokens', value: { type: 'int', value: 12n } },
      { key: 'gen_ai.request.temperature', value: { type: 'double', value: 0.5 } },
    ],
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: { code: 0, message: '' },
    ...overrides,
  };
}

export function makeSpanBatch(count: number): SpanBatch {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { type: 'string', value: 'test' } }], droppedAttributesCount: 0 },
        schemaUrl: '',
        scopeSpans: [
          {
            scope: { name: 'test', version: '1.0.0', attributes: [], droppedAttributesCount: 0 },
            schemaUrl: '',
            spans: Array.from({ length: count }, () => makeSpan()),
          },
        ],
      },
    ],
  };
}
