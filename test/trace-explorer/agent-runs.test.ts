// The trace list over the agent server's own runs, as someone who runs the example
// human-in-the-loop graph sees it: a run that stopped at an interrupt is listed as `interrupted`
// (not `success`), and the run that resumed it shows what it was resumed with as its input (not the
// serialized `Command`). A real agent server, pipeline, trace store and explorer, in process.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@langchain/langgraph-sdk';
import type { Service } from 'tracepipe';
import { eventually, tempDir } from 'tracepipe/testing';
import { startAgentServerWithExplorer } from './support.ts';

interface Summary {
  trace_id: string;
  status: string;
  input_preview?: string;
}

describe('the trace list of agent server runs', () => {
  const dir = tempDir('tracepipe-explorer-runs-');
  let service: Service;
  let client: Client;
  let explorer: string;

  before(async () => {
    const started = await startAgentServerWithExplorer(dir);
    service = started.service;
    client = new Client({ apiUrl: started.agentUrl });
    explorer = started.explorerUrl;
  });

  after(async () => {
    await service?.shutdown();
  });

  const listed = async (traceId: string): Promise<Summary> =>
    eventually(async () => {
      const body = (await (await fetch(`${explorer}/api/traces`)).json()) as { traces: Summary[] };
      const summary = body.traces.find((trace) => trace.trace_id === traceId);
      assert.ok(summary && summary.status !== 'pending', `trace ${traceId} listed`);
      return summary;
    });

  it('lists a run stopped at an interrupt as interrupted, and its resumption with what it resumed with', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'interrupt', {
      input: { messages: [{ role: 'user', content: 'hello' }] },
    });
    await client.runs.join(thread.thread_id, first.run_id);
    // The run itself succeeded (as on LangGraph Platform); its thread waits for the review.
    assert.equal((await client.threads.get(thread.thread_id)).status, 'interrupted');
    const paused = await listed(first.run_id);
    assert.equal(paused.status, 'interrupted');
    assert.equal(paused.input_preview, 'hello');
    const filtered = (await (await fetch(`${explorer}/api/traces?status=interrupted`)).json()) as { traces: Summary[] };
    assert.deepEqual(
      filtered.traces.map((trace) => trace.trace_id),
      [first.run_id],
    );

    const second = await client.runs.create(thread.thread_id, 'interrupt', { command: { resume: 'approve' } });
    await client.runs.join(thread.thread_id, second.run_id);
    const resumed = await listed(second.run_id);
    assert.equal(resumed.status, 'success');
    assert.equal(resumed.input_preview, 'Resumed with: approve');
  });
});
