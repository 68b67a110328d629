// Spans that graph code opens itself, through the global OpenTelemetry API, belong to the run: once
// the run tracing globals are registered they nest under the span of the node that opened them, in
// the run's trace, and reach the pipeline with the run's spans.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { trace } from '@opentelemetry/api';
import { Sink } from 'tracepipe/testing';
import type { Span } from 'tracepipe/plugin';
import { graph } from '../graphs/fixtures/own-spans.ts';
import { registerGlobalRunTracing } from './global.ts';
import { TRACER_SCOPE_NAME, createRunTracer } from './tracer.ts';

describe('spans opened by graph code', () => {
  it('nest under the span of the node that opened them, in the run trace', async () => {
    assert.deepEqual(registerGlobalRunTracing(), { tracerProvider: 'ours', contextManager: 'ours' });
    const sink = new Sink<'spans'>();
    const runId = randomUUID();
    const tracer = createRunTracer({ next: sink, context: { project: 'p' }, runId, assistantId: 'a', graphId: 'own' });
    await graph.invoke({ steps: [] }, { callbacks: [tracer] });
    await tracer.flush();

    assert.equal(sink.batches.length, 1);
    const scopes = sink.batches[0]!.data.resourceSpans[0]!.scopeSpans;
    assert.deepEqual(
      scopes.map((scope) => scope.scope.name),
      [TRACER_SCOPE_NAME, 'graph-code'],
    );
    const spans: Span[] = scopes.flatMap((scope) => scope.spans);
    const byName = (name: string) => spans.find((span) => span.name === name)!;
    const own = byName('own work');
    assert.equal(own.traceId, runId.replace(/-/g, ''), 'the same trace as the run');
    assert.equal(own.parentSpanId, byName('work').spanId, "a child of the node's span");
    assert.equal(byName('own detail').parentSpanId, own.spanId, 'the active span survives an await');
    assert.equal(byName('work').parentSpanId, byName('own').spanId);
    assert.ok(!spans.some((span) => span.parentSpanId === byName('after').spanId));
  });

  it('are not recorded outside a run', () => {
    registerGlobalRunTracing();
    const span = trace.getTracer('graph-code').startSpan('outside');
    assert.equal(span.isRecording(), false);
    span.end();
  });
});
