// Tests of run tracing: the example graphs run with the tracer in their callbacks, and the spans
// that reach a Sink are checked as a tree (ids, parents, names) and for their GenAI attributes.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Command, MemorySaver } from '@langchain/langgraph';
import { HumanMessage } from '@langchain/core/messages';
import { Sink } from 'tracepipe/testing';
import { ThrottleError, StatusCode, findAttribute } from 'tracepipe/plugin';
import type { AnyValue, Span } from 'tracepipe/plugin';
import { graph as chatGraph } from '../../../../../examples/graphs/chat.ts';
import { graph as errorGraph } from '../../../../../examples/graphs/error.ts';
import { graph as interruptGraph } from '../../../../../examples/graphs/interrupt.ts';
import { graph as subgraphGraph } from '../../../../../examples/graphs/subgraph.ts';
import { graph as toolsGraph } from '../../../../../examples/graphs/tools.ts';
import { MAX_ATTRIBUTE_CHARS, boundedJson } from './attributes.ts';
import { traceIdFromRunId } from './ids.ts';
import { SpansDroppedError, TRACER_SCOPE_NAME, createRunTracer } from './tracer.ts';

// The example graphs switch to a real OpenAI model when a key is set; these tests always run offline.
delete process.env.OPENAI_API_KEY;

interface Traced {
  runId: string;
  sink: Sink<'spans'>;
  spans: Span[];
  errors: unknown[];
  result?: unknown;
  failure?: unknown;
}

type Runnable = {
  withConfig(config: Record<string, unknown>): Runnable;
  checkpointer?: unknown;
  invoke(input: unknown, config: unknown): Promise<unknown>;
};

async function traced(
  graph: Runnable,
  graphId: string,
  input: unknown,
  extra: { threadId?: string; sink?: Sink<'spans'>; maxSpans?: number; context?: unknown } = {},
): Promise<Traced> {
  const bound = graph.withConfig({});
  bound.checkpointer = new MemorySaver();
  const runId = randomUUID();
  const sink = extra.sink ?? new Sink<'spans'>();
  const errors: unknown[] = [];
  const threadId = extra.threadId ?? randomUUID();
  const tracer = createRunTracer({
    next: sink,
    context: { project: 'default', receiver: 'agent_api' },
    runId,
    threadId,
    assistantId: 'assistant-1',
    graphId,
    maxSpans: extra.maxSpans,
    onError: (error) => errors.push(error),
  });
  const out: Traced = { runId, sink, spans: [], errors };
  try {
    out.result = await bound.invoke(input, {
      configurable: { thread_id: threadId },
      callbacks: [tracer],
      context: extra.context,
    });
  } catch (error) {
    out.failure = error;
  }
  await tracer.flush();
  out.spans = sink.batches.flatMap((batch) =>
    batch.data.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
  );
  return out;
}

function attr(span: Span, key: string): unknown {
  const value: AnyValue | undefined = findAttribute(span.attributes, key);
  return value && 'value' in value ? value.value : undefined;
}

function root(spans: Span[]): Span {
  const roots = spans.filter((span) => span.parentSpanId === '');
  assert.equal(roots.length, 1, `expected one root, got ${roots.map((span) => span.name)}`);
  return roots[0]!;
}

function childrenOf(spans: Span[], parent: Span): Span[] {
  return spans
    .filter((span) => span.parentSpanId === parent.spanId)
    .sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));
}

function assertWellFormedTree(spans: Span[], runId: string): void {
  const ids = new Set(spans.map((span) => span.spanId));
  assert.equal(ids.size, spans.length, 'span ids are unique');
  for (const span of spans) {
    assert.equal(span.traceId, runId.replace(/-/g, ''), 'the trace id is the run id');
    assert.match(span.spanId, /^[0-9a-f]{16}$/);
    assert.ok(span.parentSpanId === '' || ids.has(span.parentSpanId), `${span.name}: parent is in the trace`);
    assert.ok(span.endTimeUnixNano >= span.startTimeUnixNano, `${span.name}: ends after it starts`);
    assert.equal(attr(span, 'langsmith.metadata.run_id'), runId);
    assert.equal(attr(span, 'langsmith.metadata.assistant_id'), 'assistant-1');
    assert.ok(typeof attr(span, 'langsmith.metadata.graph_id') === 'string');
  }
}

describe('run tracer', () => {
  it('traces a tool-calling run as graph → nodes → model calls and tools', async () => {
    const run = await traced(
      toolsGraph as unknown as Runnable,
      'tools',
      { messages: [{ role: 'user', content: 'What is 2 + 40?' }] },
      { threadId: 'thread-7' },
    );
    assert.equal(run.failure, undefined);
    assert.deepEqual(run.errors, []);
    assertWellFormedTree(run.spans, run.runId);

    const top = root(run.spans);
    assert.equal(top.name, 'tools');
    assert.equal(attr(top, 'langsmith.span.kind'), 'chain');
    assert.equal(attr(top, 'langsmith.metadata.thread_id'), 'thread-7');
    assert.equal(attr(top, 'gen_ai.conversation.id'), 'thread-7');
    assert.equal(attr(top, 'gen_ai.operation.name'), 'invoke_agent');
    assert.equal(attr(top, 'gen_ai.agent.name'), 'tools');
    assert.equal(attr(top, 'gen_ai.agent.id'), 'assistant-1');
    assert.deepEqual(JSON.parse(attr(top, 'input.value') as string), {
      messages: [{ role: 'user', content: 'What is 2 + 40?' }],
    });
    assert.ok(JSON.parse(attr(top, 'output.value') as string).messages.length === 4);
    assert.deepEqual(
      childrenOf(run.spans, top).map((span) => span.name),
      ['agent', 'tools', 'agent'],
    );

    const chats = run.spans.filter((span) => attr(span, 'gen_ai.operation.name') === 'chat');
    assert.equal(chats.length, 2);
    const [firstChat, secondChat] = chats.sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));
    assert.equal(firstChat!.name, 'chat local-echo');
    assert.equal(firstChat!.kind, 3, 'model calls are CLIENT spans');
    assert.equal(attr(firstChat!, 'langsmith.span.kind'), 'llm');
    assert.equal(attr(firstChat!, 'gen_ai.request.model'), 'local-echo');
    assert.equal(attr(firstChat!, 'gen_ai.response.model'), 'local-echo');
    assert.equal(attr(firstChat!, 'gen_ai.system'), 'local');
    assert.equal(attr(firstChat!, 'langsmith.metadata.langgraph_node'), 'agent');
    assert.equal(typeof attr(firstChat!, 'gen_ai.usage.input_tokens'), 'bigint');
    assert.ok((attr(secondChat!, 'gen_ai.usage.output_tokens') as bigint) > 0n);
    const inputMessages = JSON.parse(attr(firstChat!, 'gen_ai.input.messages') as string);
    assert.deepEqual(inputMessages, [
      { role: 'system', parts: [{ type: 'text', content: 'You are a helpful assistant.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'What is 2 + 40?' }] },
    ]);
    const outputMessages = JSON.parse(attr(firstChat!, 'gen_ai.output.messages') as string);
    assert.deepEqual(outputMessages, [
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_2', name: 'add', arguments: { a: 2, b: 40 } }],
        finish_reason: 'tool_calls',
      },
    ]);
    assert.deepEqual(JSON.parse(attr(secondChat!, 'gen_ai.output.messages') as string)[0].parts, [
      { type: 'text', content: 'The tool says: 42' },
    ]);
    const secondInput = JSON.parse(attr(secondChat!, 'gen_ai.input.messages') as string);
    assert.deepEqual(secondInput.at(-1), {
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: 'call_2', response: '42' }],
    });

    const tool = run.spans.find((span) => attr(span, 'gen_ai.operation.name') === 'execute_tool')!;
    assert.equal(tool.name, 'execute_tool add');
    assert.equal(attr(tool, 'langsmith.span.kind'), 'tool');
    assert.equal(attr(tool, 'gen_ai.tool.name'), 'add');
    assert.equal(attr(tool, 'gen_ai.tool.call.id'), 'call_2');
    assert.deepEqual(JSON.parse(attr(tool, 'gen_ai.tool.call.arguments') as string), { a: 2, b: 40 });
    assert.equal(attr(tool, 'gen_ai.tool.call.result'), '42');
    const toolsNode = run.spans.find((span) => span.spanId === tool.parentSpanId)!;
    assert.equal(toolsNode.name, 'tools');

    for (const span of run.spans) assert.equal(span.status.code, StatusCode.UNSET, `${span.name} succeeded`);
  });

  it('sends spans with the run context, the service resource and the tracer scope', async () => {
    const run = await traced(chatGraph as unknown as Runnable, 'chat', { messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(run.sink.batches.length, 1);
    const { data, context } = run.sink.batches[0]!;
    assert.deepEqual(context, { project: 'default', receiver: 'agent_api' });
    const resourceSpans = data.resourceSpans[0]!;
    assert.equal(findAttribute(resourceSpans.resource.attributes, 'service.name')?.type, 'string');
    assert.deepEqual(findAttribute(resourceSpans.resource.attributes, 'service.name'), {
      type: 'string',
      value: 'tracepipe-agent-server',
    });
    assert.equal(resourceSpans.scopeSpans[0]!.scope.name, TRACER_SCOPE_NAME);
  });

  it('records the model chosen by the assistant context', async () => {
    const run = await traced(
      chatGraph as unknown as Runnable,
      'chat',
      { messages: [{ role: 'user', content: 'hi' }] },
      { context: { model_name: 'local-large' } },
    );
    const chat = run.spans.find((span) => attr(span, 'gen_ai.operation.name') === 'chat')!;
    assert.equal(chat.name, 'chat local-large');
    assert.equal(attr(chat, 'gen_ai.request.model'), 'local-large');
  });

  it('nests subgraph nodes under the subgraph span', async () => {
    const run = await traced(subgraphGraph as unknown as Runnable, 'subgraph', {
      messages: [{ role: 'user', content: 'research' }],
    });
    assertWellFormedTree(run.spans, run.runId);
    const top = root(run.spans);
    assert.deepEqual(
      childrenOf(run.spans, top).map((span) => span.name),
      ['research', 'review'],
    );
    const write = run.spans.find((span) => span.name === 'write')!;
    let ancestor = run.spans.find((span) => span.spanId === write.parentSpanId)!;
    assert.equal(ancestor.name, 'research');
    while (ancestor.parentSpanId !== top.spanId)
      ancestor = run.spans.find((span) => span.spanId === ancestor.parentSpanId)!;
    assert.equal(ancestor.name, 'research');
    assert.match(
      String(
        attr(
          run.spans.find((span) => span.name === 'chat local-echo')!,
          'langsmith.metadata.langgraph_checkpoint_ns',
        ),
      ),
      /^research:/,
    );
  });

  it('marks failed spans with ERROR status and an exception event, message before stack trace', async () => {
    const run = await traced(errorGraph as unknown as Runnable, 'error', {});
    assert.equal((run.failure as Error).name, 'CustomError');
    const top = root(run.spans);
    const node = run.spans.find((span) => span.name === 'fail')!;
    for (const span of [top, node]) {
      assert.equal(span.status.code, StatusCode.ERROR);
      assert.equal(span.status.message, 'CustomError: Boo!');
      const exception = span.events.find((event) => event.name === 'exception')!;
      assert.deepEqual(
        exception.attributes.map((attribute) => attribute.key),
        ['exception.type', 'exception.message', 'exception.stacktrace'],
      );
      assert.deepEqual(findAttribute(exception.attributes, 'exception.message'), { type: 'string', value: 'Boo!' });
    }
  });

  it('records an interrupt as control flow, not an error, and traces the resumed run', async () => {
    const threadId = randomUUID();
    const bound = (interruptGraph as unknown as Runnable).withConfig({});
    bound.checkpointer = new MemorySaver();
    const sink = new Sink<'spans'>();
    const runOnce = async (input: unknown) => {
      const tracer = createRunTracer({
        next: sink,
        context: { project: 'p' },
        runId: randomUUID(),
        threadId,
        assistantId: 'assistant-1',
        graphId: 'interrupt',
      });
      await bound.invoke(input, { configurable: { thread_id: threadId }, callbacks: [tracer] });
      await tracer.flush();
    };
    await runOnce({ messages: [{ role: 'user', content: 'draft it' }] });
    const first = sink.batches[0]!.data.resourceSpans[0]!.scopeSpans[0]!.spans;
    const review = first.find((span) => span.name === 'review')!;
    assert.equal(review.status.code, StatusCode.UNSET);
    assert.equal(attr(review, 'langgraph.interrupted'), true);
    assert.ok(review.events.some((event) => event.name === 'langgraph.interrupt'));
    assert.ok(!first.some((span) => span.status.code === StatusCode.ERROR));
    // The graph run ends normally around the interrupt; its root span says it stopped there.
    const root = first.find((span) => span.parentSpanId === undefined || span.parentSpanId === '')!;
    assert.equal(attr(root, 'langsmith.metadata.interrupted'), true, `root ${root.name}`);

    await runOnce(new Command({ resume: 'approve' }));
    const second = sink.batches[1]!.data.resourceSpans[0]!.scopeSpans[0]!.spans;
    assert.notEqual(second[0]!.traceId, first[0]!.traceId, 'each run is its own trace');
    assert.ok(
      second.some(
        (span) =>
          span.name === 'review' &&
          span.status.code === StatusCode.UNSET &&
          attr(span, 'langgraph.interrupted') === undefined,
      ),
    );
    assert.ok(second.every((span) => attr(span, 'langsmith.metadata.interrupted') === undefined));
  });

  it('never fails the run when the pipeline refuses the spans, and reports the refusal', async () => {
    const sink = new Sink<'spans'>();
    sink.fail = () => new ThrottleError('pipeline full', 1000);
    const run = await traced(
      chatGraph as unknown as Runnable,
      'chat',
      { messages: [{ role: 'user', content: 'hi' }] },
      { sink },
    );
    assert.equal(run.failure, undefined);
    assert.ok((run.result as { messages: unknown[] }).messages.length === 2);
    assert.equal(run.errors.length, 1);
    assert.ok(run.errors[0] instanceof ThrottleError);
  });

  it('keeps at most maxSpans spans per run, attaches the rest to kept ancestors and reports the drop', async () => {
    const run = await traced(
      toolsGraph as unknown as Runnable,
      'tools',
      { messages: [{ role: 'user', content: 'weather in Rome' }] },
      { maxSpans: 3 },
    );
    assert.equal(run.spans.length, 3);
    assertWellFormedTree(run.spans, run.runId);
    const dropped = run.errors.filter((error): error is SpansDroppedError => error instanceof SpansDroppedError);
    assert.equal(dropped.length, 1);
    assert.equal(dropped[0]!.count, 6);
    assert.equal(dropped[0]!.runId, run.runId);
  });

  it('ends spans still open at flush, marking them unfinished, and sends each span once', async () => {
    const sink = new Sink<'spans'>();
    const runId = randomUUID();
    const tracer = createRunTracer({ next: sink, context: { project: 'p' }, runId, assistantId: 'a', graphId: 'g' });
    const graphRun = randomUUID();
    tracer.handleChainStart!(
      { lc: 1, type: 'not_implemented', id: ['x', 'Graph'] },
      { question: 'q' },
      graphRun,
      undefined,
      [],
      {},
      undefined,
      'g',
    );
    tracer.handleChainStart!(
      { lc: 1, type: 'not_implemented', id: ['x', 'Node'] },
      {},
      randomUUID(),
      graphRun,
      [],
      { langgraph_node: 'node', langgraph_step: 1 },
      undefined,
      'node',
    );
    await Promise.all([tracer.flush(), tracer.flush()]);
    await tracer.flush();
    assert.equal(sink.batches.length, 1);
    const spans = sink.batches[0]!.data.resourceSpans[0]!.scopeSpans[0]!.spans;
    assert.deepEqual(spans.map((span) => [span.name, attr(span, 'tracepipe.span.unfinished')]).sort(), [
      ['g', true],
      ['node', true],
    ]);
    assert.equal(
      attr(
        spans.find((span) => span.name === 'node')!,
        'langsmith.metadata.langgraph_step',
      ),
      1n,
    );
    assert.equal(attr(spans[0]!, 'langsmith.metadata.thread_id'), undefined, 'threadless runs carry no thread id');
  });

  it('folds hidden internal runnables into their parent', async () => {
    const sink = new Sink<'spans'>();
    const tracer = createRunTracer({
      next: sink,
      context: { project: 'p' },
      runId: randomUUID(),
      assistantId: 'a',
      graphId: 'g',
    });
    const serialized = { lc: 1, type: 'not_implemented' as const, id: ['x'] };
    const [graphRun, hiddenRun, innerRun] = [randomUUID(), randomUUID(), randomUUID()];
    tracer.handleChainStart!(serialized, {}, graphRun, undefined, [], {}, undefined, 'g');
    tracer.handleChainStart!(serialized, {}, hiddenRun, graphRun, ['langsmith:hidden'], {}, undefined, 'ChannelWrite');
    tracer.handleChainStart!(serialized, {}, innerRun, hiddenRun, [], {}, undefined, 'inner');
    for (const id of [innerRun, hiddenRun, graphRun]) tracer.handleChainEnd!({}, id);
    await tracer.flush();
    const spans = sink.batches[0]!.data.resourceSpans[0]!.scopeSpans[0]!.spans;
    assert.deepEqual(
      spans.map((span) => span.name),
      ['inner', 'g'],
    );
    assert.equal(spans[0]!.parentSpanId, spans[1]!.spanId);
  });
});

describe('trace ids and bounded payloads', () => {
  it('uses the run id bytes as the trace id, and hashes ids that are not UUIDs (property)', () => {
    fc.assert(
      fc.property(fc.uuid(), (uuid) => {
        assert.equal(traceIdFromRunId(uuid), uuid.replace(/-/g, '').toLowerCase());
      }),
    );
    assert.notEqual(
      traceIdFromRunId('00000000-0000-0000-0000-000000000000'),
      '0'.repeat(32),
      'the nil UUID is not a valid trace id',
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        assert.match(traceIdFromRunId(text), /^[0-9a-f]{32}$/);
        assert.notEqual(traceIdFromRunId(text), '0'.repeat(32));
      }),
    );
  });

  it('writes any value as bounded JSON without throwing (property)', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withSet: true, withTypedArray: true }), (value) => {
        const text = boundedJson(value, 200);
        assert.equal(typeof text, 'string');
        assert.ok(text.length <= 200 + 40, `length ${text.length}`);
      }),
    );
  });

  it('cuts long payloads with a marker and survives cycles', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    assert.equal(boundedJson(cyclic), '{"name":"loop","self":"[circular]"}');
    const long = boundedJson('x'.repeat(MAX_ATTRIBUTE_CHARS * 2));
    assert.match(long, /…\[truncated \d+ chars\]$/);
    assert.equal(boundedJson(10n), '"10"');
  });

  it('writes LangChain messages compactly wherever they are nested', () => {
    const human = new HumanMessage({ content: 'hi', id: 'm1' });
    assert.equal(boundedJson(human), '{"role":"user","content":"hi","id":"m1"}');
    assert.deepEqual(JSON.parse(boundedJson({ messages: [human], last: human, deep: [{ message: human }] })), {
      messages: [{ role: 'user', content: 'hi', id: 'm1' }],
      last: { role: 'user', content: 'hi', id: 'm1' },
      deep: [{ message: { role: 'user', content: 'hi', id: 'm1' } }],
    });
  });
});
