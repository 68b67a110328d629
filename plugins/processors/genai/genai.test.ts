// Tests of the `genai` processor: the conformance kit, one hand-written OTLP/JSON fixture per
// convention with its expected runs written out in full, tree facts across batches (roots seen
// earlier or later, filtered parents), spans from the real OpenTelemetry JS SDK, and property
// tests over arbitrary attribute values.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { AttributeValue, HrTime } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  defaultsOf,
  Sink,
  nopSettings,
  runComponentConformance,
  eventually,
  makeBatch,
  plainSpan,
  stringAttr,
} from 'tracepipe/testing';
import type { RunBatch, AnyValue, Attribute, Span, SpanBatch, RequestContext } from 'tracepipe/plugin';
import { RUN_TYPES, ThrottleError } from 'tracepipe/plugin';
import type { GenAiProcessorConfig } from './config.ts';
import { configSchema } from './config.ts';
import { genAiProcessorFactory } from './index.ts';
import { idToUuid } from './internal/ids.ts';
import { spanBatchFromJson } from './testing/otlp-json-fixture.ts';
import { GenAiProcessor } from './processor.ts';

const testdata = join(import.meta.dirname, 'testdata');
const CONTEXT: RequestContext = { project: 'default', apiKey: 'key-a' };

/** Every span here names its id: the tests are about the tree. */
function span(overrides: Partial<Span> & Pick<Span, 'spanId'>): Span {
  return plainSpan(overrides);
}

function batchOf(...spans: Span[]): SpanBatch {
  return makeBatch(spans);
}

const str = stringAttr;

function create(config: Partial<GenAiProcessorConfig> = {}) {
  const sink = new Sink<'runs'>();
  const settings = nopSettings('processor', 'genai');
  const processor = new GenAiProcessor(
    settings,
    { ...(defaultsOf(configSchema) as unknown as GenAiProcessorConfig), ...config },
    sink,
  );
  return { processor, sink, settings };
}

function runsOf(sink: Sink<'runs'>, index = -1): RunBatch {
  return sink.batches.at(index)!.data;
}

runComponentConformance(genAiProcessorFactory, {
  testdataDir: testdata,
  sample: () => batchOf(span({ spanId: '1111111111111111', attributes: [str('gen_ai.operation.name', 'chat')] })),
});

describe('genai: conventions (OTLP/JSON fixtures → runs)', () => {
  const dir = join(testdata, 'spans');
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    const fixture = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
      description: string;
      config?: Partial<GenAiProcessorConfig>;
      context: RequestContext;
      request: Record<string, unknown>;
      expected: RunBatch;
    };
    it(`${file}: ${fixture.description}`, async () => {
      const { processor, sink } = create(fixture.config);
      await processor.consume(spanBatchFromJson(fixture.request), fixture.context);
      assert.equal(sink.batches.length, 1);
      assert.deepEqual(sink.batches[0]!.context, fixture.context);
      // Through JSON, as an exporter would see it: no undefined fields, nothing unserialisable.
      assert.deepEqual(JSON.parse(JSON.stringify(runsOf(sink))), fixture.expected);
    });
  }
});

describe('genai: tree facts across batches', () => {
  it('a child translated after its root points at the root run (the trace UUID)', async () => {
    const { processor, sink } = create();
    await processor.consume(batchOf(span({ spanId: '1111111111111111', name: 'root' })), CONTEXT);
    await processor.consume(
      batchOf(span({ spanId: '2222222222222222', parentSpanId: '1111111111111111', name: 'late' })),
      CONTEXT,
    );
    assert.equal(runsOf(sink).runs[0]!.parent_run_id, '01020304-0506-0708-090a-0b0c0d0e0f10');
    assert.equal(runsOf(sink).hints, undefined);
  });

  it('gives back the memory of remembered roots once their TTL has passed, with no data arriving', async () => {
    const { processor, sink, settings } = create({ root_cache_ttl_ms: 1000 });
    const remembered = async () =>
      (await settings.host.metrics.getSingleMetric('tracepipe_genai_remembered_bytes')!.get()).values[0]?.value ?? 0;
    await processor.start(new AbortController().signal);
    // 5,000 traces' roots: 40 bytes each, and a hash table grown for them.
    const roots = Array.from({ length: 5000 }, (_, i) =>
      span({ traceId: (i + 1).toString(16).padStart(32, '0'), spanId: (i + 1).toString(16).padStart(16, '0') }),
    );
    await processor.consume(batchOf(...roots), CONTEXT);
    await eventually(async () => assert.ok((await remembered()) > 5000 * 40, 'the roots are remembered'));
    // Nothing is consumed from here on: only the processor's own sweep can forget the roots. What
    // is left is an empty map's smallest hash table (1,024 slots of 4 bytes).
    await eventually(async () => assert.equal(await remembered(), 4096));
    const lateChild = span({ traceId: roots[0]!.traceId, spanId: 'aaaaaaaaaaaaaaaa', parentSpanId: roots[0]!.spanId });
    await processor.consume(batchOf(lateChild), CONTEXT);
    assert.equal(sink.batches.at(-1)!.data.runs[0]!.parent_run_id, idToUuid(roots[0]!.spanId));
    await processor.shutdown(Date.now() + 1000);
  });

  it('a child translated before its root keeps the root span UUID, and the root brings the alias', async () => {
    const { processor, sink } = create();
    await processor.consume(
      batchOf(span({ spanId: '2222222222222222', parentSpanId: '1111111111111111', name: 'early' })),
      CONTEXT,
    );
    assert.equal(runsOf(sink).runs[0]!.parent_run_id, '00000000-0000-0000-1111-111111111111');
    await processor.consume(batchOf(span({ spanId: '1111111111111111', name: 'root' })), CONTEXT);
    assert.deepEqual(runsOf(sink).hints, {
      rootAliases: { '00000000-0000-0000-1111-111111111111': '01020304-0506-0708-090a-0b0c0d0e0f10' },
    });
  });

  it('a child of a span filtered in an earlier batch moves up to the nearest kept ancestor', async () => {
    const { processor, sink, settings } = create({ filter_non_genai: true });
    await processor.consume(batchOf(span({ spanId: '1111111111111111', name: 'gen_ai.root' })), CONTEXT);
    await processor.consume(
      batchOf(
        span({
          spanId: '2222222222222222',
          parentSpanId: '1111111111111111',
          name: 'db.query',
          attributes: [str('db.system', 'sqlite')],
        }),
      ),
      CONTEXT,
    );
    assert.deepEqual(runsOf(sink), {
      runs: [],
      hints: { droppedRuns: { '00000000-0000-0000-2222-222222222222': '01020304-0506-0708-090a-0b0c0d0e0f10' } },
    });
    await processor.consume(
      batchOf(span({ spanId: '3333333333333333', parentSpanId: '2222222222222222', name: 'llm.call' })),
      CONTEXT,
    );
    assert.equal(runsOf(sink).runs[0]!.parent_run_id, '01020304-0506-0708-090a-0b0c0d0e0f10');
    const metric = await settings.host.metrics.getSingleMetric('tracepipe_genai_spans_filtered_total')!.get();
    assert.equal(metric.values[0]!.value, 1);
  });

  it('a filter cycle (a span naming itself as parent) ends instead of looping', async () => {
    const { processor, sink } = create({ filter_non_genai: true });
    await processor.consume(
      batchOf(
        span({ spanId: '2222222222222222', parentSpanId: '2222222222222222', name: 'loop' }),
        span({ spanId: '3333333333333333', parentSpanId: '2222222222222222', name: 'gen_ai.child' }),
      ),
      CONTEXT,
    );
    const [run] = runsOf(sink).runs;
    assert.equal(run!.parent_run_id, undefined);
    assert.equal(run!.trace_id, run!.id);
  });

  it('drops spans with unusable ids, counts and keeps the rest', async () => {
    const { processor, sink, settings } = create();
    await processor.consume(
      batchOf(
        span({ spanId: '11', name: 'short' }),
        span({ spanId: 'zzzzzzzzzzzzzzzz', name: 'not-hex' }),
        span({ spanId: '3333333333333333', parentSpanId: '44', name: 'bad-parent' }),
        span({ spanId: '2222222222222222', name: 'fine' }),
      ),
      CONTEXT,
    );
    assert.deepEqual(
      runsOf(sink).runs.map((run) => run.name),
      ['fine'],
    );
    const metric = await settings.host.metrics.getSingleMetric('tracepipe_component_items_dropped_total')!.get();
    assert.deepEqual(
      metric.values.map((value) => [value.labels.reason, value.value]),
      [['invalid_id', 3]],
    );
  });

  it('falls back, without failing, when JSON-carrying attributes are not JSON or not the expected shape', async () => {
    const { processor, sink } = create();
    await processor.consume(
      batchOf(
        span({
          spanId: '1111111111111111',
          attributes: [
            str('gen_ai.operation.name', 'chat'),
            str('gen_ai.input.messages', '{not json'),
            str('gen_ai.output.messages', '{"role":"assistant"}'),
            str('llm.invocation_parameters', '[1,2]'),
            str('langsmith.usage_metadata', 'null'),
            str('metadata', '"text"'),
            str('gen_ai.usage.input_tokens', 'seven'),
            str('gen_ai.usage.output_tokens', '2'),
            str('output.value', '{"answer":'),
          ],
        }),
      ),
      CONTEXT,
    );
    const [run] = runsOf(sink).runs;
    assert.equal(run!.inputs, undefined);
    assert.deepEqual(run!.outputs, {
      text: '{"answer":',
      usage_metadata: { input_tokens: 0, output_tokens: 2, total_tokens: 2 },
    });
    assert.equal(run!.extra!.invocation_params, undefined);
    assert.deepEqual(run!.extra!.metadata, {
      OTEL_TRACE_ID: '0102030405060708090a0b0c0d0e0f10',
      OTEL_SPAN_ID: '1111111111111111',
    });
  });

  it('reads the same system instructions and tool schemas in every span that repeats them (parsed once, shared)', async () => {
    const { processor, sink } = create();
    const instructions = JSON.stringify([
      { type: 'text', content: 'Be brief. ' },
      { type: 'image', uri: 'https://example.com/logo.png' },
    ]);
    const schema = '{"type":"function","function":{"name":"search"}}';
    const spans = ['1111111111111111', '2222222222222222', '3333333333333333'].map((spanId, n) =>
      span({
        spanId,
        attributes: [
          str('gen_ai.operation.name', 'chat'),
          str('gen_ai.system_instructions', n === 2 ? 'Plain text instructions.' : instructions),
          str('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `q${n}` }] }])),
          str('llm.tools.0.tool.json_schema', schema),
          str('llm.tools.1.tool.json_schema', 'not json'),
        ],
      }),
    );
    await processor.consume(batchOf(spans[0]!), CONTEXT);
    await processor.consume(batchOf(spans[1]!, spans[2]!), CONTEXT);
    const runs = [...runsOf(sink, 0).runs, ...runsOf(sink, 1).runs];
    const system = {
      role: 'system',
      content: [
        { type: 'text', text: 'Be brief. ' },
        { type: 'image', uri: 'https://example.com/logo.png' },
      ],
    };
    for (const [n, run] of runs.entries()) {
      assert.deepEqual(run.inputs, {
        messages: [
          n === 2 ? { role: 'system', content: 'Plain text instructions.' } : system,
          { role: 'user', content: `q${n}` },
        ],
      });
      assert.deepEqual((run.extra!.invocation_params as { tools: unknown }).tools, [JSON.parse(schema), 'not json']);
    }
    assert.equal(JSON.stringify(runs[0]!.inputs).replace('q0', 'q1'), JSON.stringify(runs[1]!.inputs));
  });

  it('passes a downstream throttle error back to the caller', async () => {
    const { processor, sink } = create();
    sink.fail = () => new ThrottleError('full', 1000);
    await assert.rejects(processor.consume(batchOf(span({ spanId: '1111111111111111' })), CONTEXT), ThrottleError);
  });

  it('sends nothing downstream for an empty batch, and refuses data after shutdown', async () => {
    const { processor, sink } = create();
    await processor.consume({ resourceSpans: [] }, CONTEXT);
    assert.equal(sink.batches.length, 0);
    await processor.shutdown(Date.now() + 1000);
    await assert.rejects(processor.consume(batchOf(span({ spanId: '1111111111111111' })), CONTEXT));
  });
});

describe('genai: spans from the OpenTelemetry JS SDK', () => {
  function hrToNanos(time: HrTime): bigint {
    return BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
  }

  function anyValue(value: AttributeValue | undefined): AnyValue {
    if (typeof value === 'string') return { type: 'string', value };
    if (typeof value === 'boolean') return { type: 'bool', value };
    if (typeof value === 'number')
      return Number.isInteger(value) ? { type: 'int', value: BigInt(value) } : { type: 'double', value };
    if (Array.isArray(value)) return { type: 'array', value: value.map((item) => anyValue(item ?? undefined)) };
    return { type: 'empty' };
  }

  function attributes(record: Record<string, AttributeValue | undefined>): Attribute[] {
    return Object.entries(record).map(([key, value]) => ({ key, value: anyValue(value) }));
  }

  /** What the receiver would decode from the SDK's export of these spans. */
  function toBatch(spans: readonly ReadableSpan[]): SpanBatch {
    const first = spans[0]!;
    return {
      resourceSpans: [
        {
          resource: {
            attributes: attributes(first.resource.attributes as Record<string, AttributeValue>),
            droppedAttributesCount: 0,
          },
          schemaUrl: '',
          scopeSpans: [
            {
              scope: {
                name: first.instrumentationScope.name,
                version: first.instrumentationScope.version ?? '',
                attributes: [],
                droppedAttributesCount: 0,
              },
              schemaUrl: '',
              spans: spans.map((readable) => ({
                traceId: readable.spanContext().traceId,
                spanId: readable.spanContext().spanId,
                parentSpanId: readable.parentSpanContext?.spanId ?? '',
                traceState: '',
                flags: readable.spanContext().traceFlags,
                name: readable.name,
                kind: readable.kind + 1,
                startTimeUnixNano: hrToNanos(readable.startTime),
                endTimeUnixNano: hrToNanos(readable.endTime),
                attributes: attributes(readable.attributes),
                droppedAttributesCount: readable.droppedAttributesCount,
                events: readable.events.map((event) => ({
                  timeUnixNano: hrToNanos(event.time),
                  name: event.name,
                  attributes: attributes(event.attributes ?? {}),
                  droppedAttributesCount: 0,
                })),
                droppedEventsCount: 0,
                links: [],
                droppedLinksCount: 0,
                status: { code: readable.status.code, message: readable.status.message ?? '' },
              })),
            },
          ],
        },
      ],
    };
  }

  it('translates an instrumented agent with an LLM call and a failing tool', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'sdk-agent' }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const tracer = provider.getTracer('sdk-test', '1.2.3');
    const agent = tracer.startSpan('invoke_agent planner');
    const parent = trace.setSpan(context.active(), agent);
    {
      agent.setAttributes({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' });
      const llm = tracer.startSpan('chat gpt-4o', {}, parent);
      llm.setAttributes({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.request.stop_sequences': ['END'],
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Plan a trip' }] }]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: 'Go to Rome' }], finish_reason: 'stop' },
        ]),
        'gen_ai.usage.input_tokens': 11,
        'gen_ai.usage.output_tokens': 4,
      });
      llm.end();
      const tool = tracer.startSpan('execute_tool book', {}, parent);
      tool.setAttributes({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'book' });
      tool.recordException(new TypeError('no seats'));
      tool.setStatus({ code: SpanStatusCode.ERROR, message: 'no seats' });
      tool.end();
      agent.end();
    }
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    assert.equal(spans.length, 3);

    const { processor, sink } = create();
    await processor.consume(toBatch(spans), { project: 'sdk', apiKey: 'key-a' });
    const runs = runsOf(sink).runs;
    const root = runs.find((run) => run.name === 'invoke_agent planner')!;
    const llm = runs.find((run) => run.name === 'chat gpt-4o')!;
    const tool = runs.find((run) => run.name === 'execute_tool book')!;
    const traceId = spans[0]!.spanContext().traceId;

    assert.equal(root.id, idToUuid(traceId));
    assert.equal(root.trace_id, root.id);
    assert.equal(root.run_type, 'chain');
    assert.equal(root.parent_run_id, undefined);
    assert.deepEqual(root.extra!.resource, { 'service.name': 'sdk-agent' });
    assert.deepEqual(root.extra!.scope, { name: 'sdk-test', version: '1.2.3' });
    assert.equal((root.extra!.metadata as Record<string, unknown>).agent_name, 'planner');

    assert.equal(llm.parent_run_id, root.id);
    assert.equal(llm.run_type, 'llm');
    assert.equal(llm.session_name, 'sdk');
    assert.deepEqual(llm.inputs, { messages: [{ role: 'user', content: 'Plan a trip' }] });
    assert.deepEqual(llm.outputs, {
      messages: [{ role: 'assistant', content: 'Go to Rome', finish_reason: 'stop' }],
      usage_metadata: { input_tokens: 11, output_tokens: 4, total_tokens: 15 },
    });
    assert.deepEqual(llm.extra!.invocation_params, { model: 'gpt-4o', stop_sequences: ['END'] });
    assert.equal((llm.extra!.metadata as Record<string, unknown>).ls_provider, 'openai');

    assert.equal(tool.run_type, 'tool');
    assert.equal(tool.status, 'error');
    assert.match(tool.error!, /^no seats\n\nStacktrace:\nTypeError: no seats/);
    await provider.shutdown();
  });
  it('reads structured event values sent as JSON text, as the SDK event API must send them', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const llm = provider.getTracer('sdk-test').startSpan('chat gpt-4o');
    llm.setAttributes({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' });
    const toolCall = { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } };
    llm.addEvent('gen_ai.user.message', { content: 'Weather in Paris?' });
    llm.addEvent('gen_ai.assistant.message', { tool_calls: JSON.stringify([toolCall]) });
    llm.addEvent('gen_ai.choice', {
      index: 0,
      finish_reason: 'stop',
      message: JSON.stringify({ role: 'assistant', content: 'Sunny, 24 °C.' }),
    });
    llm.end();
    await provider.forceFlush();

    const { processor, sink } = create();
    await processor.consume(toBatch(exporter.getFinishedSpans()), { project: 'sdk', apiKey: 'key-a' });
    const [run] = runsOf(sink).runs;
    assert.deepEqual(run!.inputs, {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', tool_calls: [toolCall] },
      ],
    });
    assert.deepEqual(run!.outputs, {
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Sunny, 24 °C.' } }],
    });
    await provider.shutdown();
  });
});

describe('genai: properties', () => {
  const keys = [
    'gen_ai.prompt',
    'gen_ai.completion',
    'gen_ai.prompt.0.content',
    'gen_ai.prompt.1.role',
    'gen_ai.completion.0.content',
    'gen_ai.usage.input_tokens',
    'gen_ai.usage.output_tokens',
    'gen_ai.operation.name',
    'gen_ai.input.messages',
    'gen_ai.output.messages',
    'gen_ai.system_instructions',
    'gen_ai.tool.name',
    'gen_ai.request.model',
    'llm.input_messages.0.message.content',
    'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments',
    'llm.invocation_parameters',
    'llm.token_count.prompt',
    'llm.prompt_template.variables',
    'input.value',
    'output.value',
    'openinference.span.kind',
    'langsmith.span.kind',
    'langsmith.span.tags',
    'langsmith.metadata.x',
    'langsmith.is_root',
    'langsmith.usage_metadata',
    'metadata',
    'tools',
    'tool_arguments',
    'events',
    'retrieval.documents.0.document.content',
    'retrieval.documents.0.document.metadata',
    'ai.prompt',
    'ai.prompt.messages',
    'ai.response.toolCalls',
    'tag.tags',
  ];
  const jsonText = fc.json().map((text) => text);
  const anyValue: fc.Arbitrary<AnyValue> = fc.letrec<{ value: AnyValue }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.oneof(fc.string(), jsonText).map((value): AnyValue => ({ type: 'string', value })),
      fc.boolean().map((value): AnyValue => ({ type: 'bool', value })),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((value): AnyValue => ({ type: 'int', value })),
      fc.double().map((value): AnyValue => ({ type: 'double', value })),
      fc.uint8Array({ maxLength: 8 }).map((value): AnyValue => ({ type: 'bytes', value })),
      fc.array(tie('value'), { maxLength: 3 }).map((value): AnyValue => ({ type: 'array', value })),
      fc
        .array(fc.record({ key: fc.constantFrom(...keys, 'role', 'content'), value: tie('value') }), { maxLength: 3 })
        .map((value): AnyValue => ({ type: 'kvlist', value })),
      fc.constant<AnyValue>({ type: 'empty' }),
    ),
  })).value;
  const attribute = fc.record({ key: fc.oneof(fc.constantFrom(...keys), fc.string()), value: anyValue });
  const hexId = (bytes: number) =>
    fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'));

  it('any attributes and events give a well-formed, JSON-encodable run', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(attribute, { maxLength: 12 }),
        fc.array(
          fc.record({
            name: fc.constantFrom(
              'gen_ai.user.message',
              'gen_ai.choice',
              'exception',
              'gen_ai.content.prompt',
              'other',
            ),
            attributes: fc.array(attribute, { maxLength: 4 }),
          }),
          { maxLength: 3 },
        ),
        hexId(16),
        hexId(8),
        fc.option(hexId(8), { nil: '' }),
        async (attributes, events, traceId, spanId, parentSpanId) => {
          const { processor, sink } = create({ generic_otel: true });
          const input = span({
            traceId,
            spanId,
            parentSpanId,
            attributes,
            events: events.map((event) => ({ ...event, timeUnixNano: 0n, droppedAttributesCount: 0 })),
          });
          await processor.consume(batchOf(input), CONTEXT);
          const [run] = runsOf(sink).runs;
          const text = JSON.stringify(run);
          assert.ok(text.length > 0);
          assert.match(run!.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
          assert.ok((RUN_TYPES as readonly string[]).includes(run!.run_type));
          assert.equal(typeof run!.start_time, 'string');
          assert.equal((run!.extra!.metadata as Record<string, unknown>).OTEL_SPAN_ID, spanId);
          if (run!.parent_run_id === undefined) assert.equal(run!.id, run!.trace_id);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('span ids map to UUIDs right-aligned, trace ids one to one', () => {
    fc.assert(
      fc.property(hexId(8), hexId(16), (spanId, traceId) => {
        assert.equal(idToUuid(spanId)!.replace(/-/g, ''), spanId.padStart(32, '0'));
        assert.equal(idToUuid(traceId)!.replace(/-/g, ''), traceId);
      }),
    );
  });
});
