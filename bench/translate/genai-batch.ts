// Throughput of the translation path: spans → `genai` processor → `batch` processor → a consumer
// that takes every batch. Traces of 20 spans (an agent root, LLM calls with messages and usage,
// tool calls) arrive children first, 200 spans per request, as an OTel BatchSpanProcessor sends
// them. Prints spans per second for the translator alone and for translator + batcher.
//
//   node --import tsx bench/translate/genai-batch.ts [total spans, default 200000]

import { performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import type { Attribute, Span, SpanBatch } from '../../src/model/spans.ts';
import { intAttr as int, makeBatch, plainSpan, stringAttr as str } from '../../src/testkit/spans.ts';
import type { Consumer } from '../../src/pipeline/component.ts';
import { nopSettings } from '../../src/pipeline/testing.ts';
import { BatchProcessor } from '../../plugins/processors/batch/batcher.ts';
import { GenAiProcessor } from '../../plugins/processors/genai/processor.ts';

const TOTAL = Number(process.argv[2] ?? 200_000);
const SPANS_PER_TRACE = 20;
const SPANS_PER_REQUEST = 200;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

function traceSpans(trace: number): Span[] {
  const traceId = hex(trace + 1, 32);
  const rootId = hex(trace * SPANS_PER_TRACE + 1, 16);
  const base = 1_700_000_000_000_000_000n + BigInt(trace) * 1_000_000_000n;
  const spans: Span[] = [];
  for (let n = SPANS_PER_TRACE - 1; n >= 0; n--) {
    const isRoot = n === 0;
    const isLlm = n % 2 === 1;
    const attributes: Attribute[] = isRoot
      ? [
          str('openinference.span.kind', 'AGENT'),
          str('input.value', 'Plan a trip to Rome'),
          str('output.value', '{"plan":"..."}'),
        ]
      : isLlm
        ? [
            str('gen_ai.operation.name', 'chat'),
            str('gen_ai.provider.name', 'openai'),
            str('gen_ai.request.model', 'gpt-4o'),
            str(
              'gen_ai.input.messages',
              JSON.stringify([
                {
                  role: 'user',
                  parts: [{ type: 'text', content: 'Step ' + n + ' of the plan, with some context text.' }],
                },
              ]),
            ),
            str(
              'gen_ai.output.messages',
              JSON.stringify([
                { role: 'assistant', parts: [{ type: 'text', content: 'Result of step ' + n }], finish_reason: 'stop' },
              ]),
            ),
            int('gen_ai.usage.input_tokens', 120),
            int('gen_ai.usage.output_tokens', 40),
          ]
        : [
            str('gen_ai.operation.name', 'execute_tool'),
            str('gen_ai.tool.name', 'search'),
            str('input.value', '{"q":"rome"}'),
            str('output.value', 'results'),
          ];
    spans.push(
      plainSpan({
        traceId,
        spanId: hex(trace * SPANS_PER_TRACE + n + 1, 16),
        parentSpanId: isRoot ? '' : rootId,
        flags: 1,
        name: isRoot ? 'agent' : isLlm ? 'chat gpt-4o' : 'execute_tool search',
        startTimeUnixNano: base + BigInt(n) * 1_000_000n,
        endTimeUnixNano: base + BigInt(n + 1) * 1_000_000n,
        attributes,
      }),
    );
  }
  return spans;
}

function requests(): SpanBatch[] {
  const all: Span[] = [];
  for (let trace = 0; all.length < TOTAL; trace++) all.push(...traceSpans(trace));
  const batches: SpanBatch[] = [];
  for (let offset = 0; offset < all.length; offset += SPANS_PER_REQUEST) {
    batches.push(
      makeBatch(all.slice(offset, offset + SPANS_PER_REQUEST), {
        resource: [str('service.name', 'bench')],
        scope: { name: 'bench', version: '1' },
      }),
    );
  }
  return batches;
}

async function measure(label: string, withBatcher: boolean): Promise<void> {
  const input = requests();
  let delivered = 0;
  const sinkConsumer: Consumer<'runs'> = {
    mutatesData: false,
    consume: async (data) => void (delivered += data.runs.length),
  };
  const batcher = new BatchProcessor(
    nopSettings('processor', 'batch'),
    {
      batch_size: 100,
      flush_interval_ms: 1000,
      max_buffer_bytes: 10_485_760,
      max_held_runs: 1_000_000,
      max_held_bytes: 2 ** 31,
      max_backlog_runs: 1_000_000,
      orphan_timeout_ms: 30_000,
      orphan_policy: 'attach_to_root',
      dotted_order_ttl_ms: 300_000,
      max_remembered_runs: 500_000,
      max_remembered_bytes: 16 * 1024 * 1024,
    },
    sinkConsumer,
  );
  const genai = new GenAiProcessor(
    nopSettings('processor', 'genai'),
    { filter_non_genai: false, generic_otel: false, root_cache_ttl_ms: 300_000, root_cache_max_entries: 100_000 },
    withBatcher ? batcher : sinkConsumer,
  );
  const context = { project: 'bench', apiKey: 'key' };
  const started = performance.now();
  for (const request of input) await genai.consume(request, context);
  await batcher.shutdown(Date.now() + 60_000);
  const seconds = (performance.now() - started) / 1000;
  const spans = input.length * SPANS_PER_REQUEST;
  console.log(
    `${label}: ${spans} spans in ${seconds.toFixed(2)} s = ${Math.round(spans / seconds)} spans/s (${delivered} runs out)`,
  );
}

console.log(`node ${process.version}, ${availableParallelism()} cores, ${new Date().toISOString()}`);
await measure('genai alone      ', false);
await measure('genai + batch    ', true);
await measure('genai alone (2nd)', false);
await measure('genai + batch (2nd)', true);
