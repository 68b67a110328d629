// Span batches for tests and benchmarks (part of `tracepipe/testing`), in the pipeline's model. `plainSpan` and `makeBatch` hold
// the model's boilerplate (empty events, zero counters, one resource with one scope), so that a
// test spells out only the fields it is about; `makeSpan` and `makeSpanBatch` give GenAI-looking
// spans with random ids.

import { randomBytes } from 'node:crypto';
import type { Attribute, Span, SpanBatch } from '../model/spans.ts';

/** The trace id of `plainSpan`. */
export const TRACE_ID = '0102030405060708090a0b0c0d0e0f10';

/**
 * A span with fixed ids and times (trace `TRACE_ID`, span `…01`, from 1 700 000 000 s for one
 * second), no attributes, events or links, and unset status; `overrides` replaces any field.
 */
export function plainSpan(overrides: Partial<Span> = {}): Span {
  return {
    traceId: TRACE_ID,
    spanId: '0000000000000001',
    parentSpanId: '',
    traceState: '',
    flags: 0,
    name: 'span',
    kind: 1,
    startTimeUnixNano: 1_700_000_000_000_000_000n,
    endTimeUnixNano: 1_700_000_001_000_000_000n,
    attributes: [],
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: { code: 0, message: '' },
    ...overrides,
  };
}

/** A GenAI-looking client span (an LLM call with token usage) with random ids. */
export function makeSpan(overrides: Partial<Span> = {}): Span {
  const start = BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n;
  return plainSpan({
    traceId: randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
    flags: 1,
    name: 'chat gpt-4o-mini',
    kind: 3,
    startTimeUnixNano: start,
    endTimeUnixNano: start + 1_500_000n,
    attributes: [
      stringAttr('gen_ai.system', 'openai'),
      intAttr('gen_ai.usage.input_tokens', 12),
      { key: 'gen_ai.request.temperature', value: { type: 'double', value: 0.5 } },
    ],
    ...overrides,
  });
}

/** Where a batch's spans come from; both default to empty. */
export interface BatchOrigin {
  readonly resource?: Attribute[];
  readonly scope?: { readonly name: string; readonly version?: string };
}

/** One resource with one scope holding `spans`. */
export function makeBatch(spans: Span[], origin: BatchOrigin = {}): SpanBatch {
  return {
    resourceSpans: [
      {
        resource: { attributes: origin.resource ?? [], droppedAttributesCount: 0 },
        schemaUrl: '',
        scopeSpans: [
          {
            scope: {
              name: origin.scope?.name ?? '',
              version: origin.scope?.version ?? '',
              attributes: [],
              droppedAttributesCount: 0,
            },
            schemaUrl: '',
            spans,
          },
        ],
      },
    ],
  };
}

/** `count` spans from `makeSpan`, from service `test`. */
export function makeSpanBatch(count: number): SpanBatch {
  return makeBatch(
    Array.from({ length: count }, () => makeSpan()),
    { resource: [stringAttr('service.name', 'test')], scope: { name: 'test', version: '1.0.0' } },
  );
}

export function stringAttr(key: string, value: string): Attribute {
  return { key, value: { type: 'string', value } };
}

export function intAttr(key: string, value: number | bigint): Attribute {
  return { key, value: { type: 'int', value: BigInt(value) } };
}
