// The runs' spans go through a journal: what the pipeline still held when the server stopped is
// delivered after the next start on the same data directory, under the run's project; what the
// pipeline settled is not sent again; with the journal off, held spans are not kept.

import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { DataOf, RequestContext } from 'tracepipe/plugin';
import { Sink } from 'tracepipe/testing';
import { startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import { traceIdFromRunId } from './internal/tracing/ids.ts';

/** Takes a reference on every delivery and keeps it, as an exporter does while a batch is unsent. */
class HoldingSink extends Sink<'spans'> {
  readonly held: (() => void)[] = [];

  override async consume(data: DataOf['spans'], context: RequestContext): Promise<void> {
    if (context.delivery) this.held.push(context.delivery.hold());
    await super.consume(data, context);
  }

  releaseAll(): void {
    for (const release of this.held.splice(0)) release();
  }
}

function traceIds(sink: Sink<'spans'>): Set<string> {
  const ids = new Set<string>();
  for (const { data } of sink.batches)
    for (const resource of data.resourceSpans)
      for (const scope of resource.scopeSpans) for (const span of scope.spans) ids.add(span.traceId);
  return ids;
}

const hello = (text: string) => ({ messages: [{ role: 'user', content: text }] });

/** Runs the `agent` graph once under `project`; returns the run's trace id once its spans reached the sink. */
async function tracedRun(server: TestServer, project: string): Promise<string> {
  const thread = await server.client.threads.create();
  const run = await server.client.runs.create(thread.thread_id, 'agent', {
    input: hello('journaled'),
    config: { configurable: { 'x-project': project } },
  });
  await server.client.runs.join(thread.thread_id, run.run_id);
  const traceId = traceIdFromRunId(run.run_id);
  await server.sink.waitFor(() => traceIds(server.sink).has(traceId));
  return traceId;
}

describe('agent_api run tracing through the journal', () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const server of servers) await server.stop().catch(() => undefined);
  });

  it('spans the pipeline still held at shutdown are delivered after a restart; settled ones are not', async () => {
    const holding = new HoldingSink();
    const first = await startTestServer({ sink: holding });
    const settled = await tracedRun(first, 'settled-project');
    holding.releaseAll();
    const held = await tracedRun(first, 'held-project');
    assert.ok(existsSync(join(first.dataDir, 'agent/tracing-journal')), 'the journal lives under data_dir');
    await first.stop({ keepData: true });

    const second = await startTestServer({ dataDir: first.dataDir });
    servers.push(second);
    await second.sink.waitFor(() => traceIds(second.sink).has(held));
    const replayed = second.sink.batches.find(({ data }) =>
      data.resourceSpans.some((r) => r.scopeSpans.some((s) => s.spans.some((span) => span.traceId === held))),
    )!;
    assert.equal(replayed.context.project, 'held-project');
    assert.equal(traceIds(second.sink).has(settled), false, 'a settled batch is not sent again');
    // The spans come back as they were sent: the same span ids, names and attributes.
    const before = holding.batches.filter(({ data }) =>
      data.resourceSpans.some((r) => r.scopeSpans.some((s) => s.spans.some((span) => span.traceId === held))),
    );
    const spanNames = (batches: typeof before) =>
      batches
        .flatMap(({ data }) => data.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)))
        .filter((span) => span.traceId === held)
        .map((span) => `${span.spanId} ${span.name} ${span.attributes.length}`)
        .sort();
    assert.deepEqual(spanNames([replayed]), spanNames(before));
  });

  it('with the journal off, spans held at shutdown are not kept', async () => {
    const holding = new HoldingSink();
    const first = await startTestServer({ sink: holding, tracing: tracingWithJournal(false) });
    const held = await tracedRun(first, 'default');
    assert.equal(existsSync(join(first.dataDir, 'agent/tracing-journal')), false);
    await first.stop({ keepData: true });
    const second = await startTestServer({ dataDir: first.dataDir });
    servers.push(second);
    // A run of the new server, traced as usual, and nothing replayed before it.
    const fresh = await tracedRun(second, 'default');
    assert.deepEqual([...traceIds(second.sink)], [fresh]);
    assert.equal(traceIds(second.sink).has(held), false);
    rmSync(first.dataDir, { recursive: true, force: true });
  });
});

function tracingWithJournal(enabled: boolean) {
  return {
    enabled: true,
    service_name: 'agent-server',
    project: 'default',
    journal: {
      enabled,
      directory: 'agent/tracing-journal',
      max_bytes: 1_073_741_824,
      segment_bytes: 16_777_216,
      fsync_interval_ms: 0,
    },
    memory_limit_bytes: 33_554_432,
  };
}
