// Run records for tests and benchmarks (part of `tracepipe/testing`): realistic shapes (an LLM child under a chain root, with
// inputs, outputs and metadata), unique ids, and a batch builder.

import { randomUUID } from 'node:crypto';
import type { Run } from '../model/runs.ts';

export function makeRun(overrides: Partial<Run> = {}): Run {
  const id = overrides.id ?? randomUUID();
  const start = new Date(Date.UTC(2026, 0, 1, 12, 0, 0)).toISOString();
  return {
    id,
    trace_id: id,
    name: 'ChatOpenAI',
    run_type: 'llm',
    start_time: start,
    end_time: start,
    dotted_order: `20260101T120000000000Z${id}`,
    status: 'success',
    session_name: 'default',
    inputs: { messages: [{ role: 'user', content: 'What is the capital of France?' }] },
    outputs: {
      generations: [{ text: 'Paris.' }],
      usage_metadata: { input_tokens: 12, output_tokens: 3, total_tokens: 15 },
    },
    extra: {
      metadata: {
        ls_provider: 'openai',
        ls_model_name: 'gpt-4o-mini',
        OTEL_TRACE_ID: id,
        OTEL_SPAN_ID: id.slice(0, 16),
      },
    },
    tags: [],
    ...overrides,
  };
}

export function makeRuns(count: number, overrides: Partial<Run> = {}): Run[] {
  return Array.from({ length: count }, () => makeRun(overrides));
}
