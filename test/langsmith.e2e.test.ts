// Apps traced by the LangSmith SDK, pointed at tracepipe as users point them (the JS SDK unchanged:
// `traceable` with a `Client` on `apiUrl`, and a LangChain.js chain with LANGSMITH_ENDPOINT set):
//  - through configs/proxy.yaml, every run reaches a capture backend exactly once, with its tenant's
//    key; a run posted and later patched is one run there, complete (the backend folds the patch in);
//  - on configs/local.yaml, the runs appear in the trace explorer with their parents, tokens and outputs.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import { RunnableLambda } from '@langchain/core/runnables';
import { Client } from 'langsmith';
import { traceable } from 'langsmith/traceable';
import { eventually } from '../src/testkit/eventually.ts';
import { tempDir } from '../src/testkit/files.ts';
import { CaptureBackend } from './support/capture_backend.ts';
import { ProxyProcess, killAllProxies, startTracepipe } from './support/proxy_process.ts';
import type { TracepipeProcess } from './support/proxy_process.ts';

/** The port of the address a JSON log line carries, from text holding many lines. */
function portOf(output: string, msg: string, field: 'address' | 'url'): number {
  for (const line of output.split('\n')) {
    if (!line.includes(msg)) continue;
    const value = String((JSON.parse(line) as Record<string, unknown>)[field]);
    return Number(/:(\d+)(?:\/|$)/.exec(value)![1]);
  }
  throw new Error(`no "${msg}" line in:\n${output}`);
}

/**
 * An agent that calls a failing tool and a model reporting its tokens: three nested runs. The agent
 * returns the model's result unchanged, so its outputs carry the same usage as the model run's.
 */
function tracedAgent(client: Client, project: string) {
  const options = { client, tracingEnabled: true, project_name: project };
  const llm = traceable(
    async (question: string) => ({
      answer: `echo: ${question}`,
      usage_metadata: { input_tokens: 11, output_tokens: 4, total_tokens: 15 },
    }),
    { name: 'fake-llm', run_type: 'llm', ...options },
  );
  const tool = traceable(
    async () => {
      throw new Error('tool broke');
    },
    { name: 'broken-tool', run_type: 'tool', ...options },
  );
  return traceable(
    async (question: string) => {
      await tool().catch(() => undefined);
      return llm(question);
    },
    { name: 'agent', ...options },
  );
}

/** Runs a two-step LangChain.js chain with the SDK's environment pointing at `endpoint`. */
async function runChain(endpoint: string, project: string): Promise<void> {
  const names = ['LANGSMITH_TRACING', 'LANGSMITH_ENDPOINT', 'LANGSMITH_API_KEY', 'LANGSMITH_PROJECT'];
  const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
  Object.assign(process.env, {
    LANGSMITH_TRACING: 'true',
    LANGSMITH_ENDPOINT: endpoint,
    LANGSMITH_API_KEY: 'chain-key',
    LANGSMITH_PROJECT: project,
  });
  try {
    const chain = RunnableLambda.from(async (x: number) => x * 2)
      .withConfig({ runName: 'double' })
      .pipe(RunnableLambda.from(async (x: number) => ({ result: x + 1 })).withConfig({ runName: 'add-one' }));
    assert.deepEqual(await chain.invoke(20), { result: 41 });
    await awaitAllCallbacks();
  } finally {
    for (const name of names)
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
  }
}

after(killAllProxies);

describe('LangSmith SDK → configs/proxy.yaml → backend', () => {
  const backend = new CaptureBackend();
  let proxy: ProxyProcess;
  let ingestUrl: string;
  before(async () => {
    backend.keepRuns = true;
    backend.keepRunDetails = true;
    proxy = await ProxyProcess.start({
      endpoint: await backend.start(),
      dataDir: tempDir('tracepipe-langsmith-proxy-'),
      env: { FLUSH_INTERVAL_MS: '50' },
    });
    await eventually(() => proxy.find('Receiving LangSmith SDK runs.').length > 0, {
      message: 'the LangSmith ingest listener',
    });
    ingestUrl = `http://127.0.0.1:${portOf(proxy.tail(1000), 'Receiving LangSmith SDK runs.', 'address')}`;
  });
  after(async () => {
    await proxy?.sigterm();
    await backend.close();
  });

  it('traceable runs arrive once each, nested, with the tenant key of the SDK', async () => {
    const client = new Client({ apiUrl: ingestUrl, apiKey: 'tenant-key' });
    await tracedAgent(client, 'proxy-project')('hello');
    await client.awaitPendingTraceBatches();
    const byName = await eventually(
      () => {
        const runs = [...backend.stored.values()].filter((run) => run.session_name === 'proxy-project');
        assert.equal(runs.length, 3);
        assert.ok(runs.every((run) => run.end_time));
        return new Map(runs.map((run) => [run.name, run]));
      },
      { message: () => `three complete runs at the backend (${backend.summary()})` },
    );
    const root = byName.get('agent')!;
    const llm = byName.get('fake-llm')!;
    const tool = byName.get('broken-tool')!;
    assert.equal(root.parent_run_id, undefined);
    assert.equal(llm.parent_run_id, root.id);
    assert.equal(tool.parent_run_id, root.id);
    assert.equal(llm.trace_id, root.id);
    assert.match(llm.dotted_order!, new RegExp(`^\\d{8}T\\d+Z${root.id}\\.\\d{8}T\\d+Z${llm.id}$`));
    assert.deepEqual(llm.outputs!.usage_metadata, { input_tokens: 11, output_tokens: 4, total_tokens: 15 });
    assert.equal(tool.status, 'error');
    assert.match(tool.error!, /tool broke/);
    const ids = [root.id, llm.id, tool.id];
    assert.deepEqual(backend.missing(ids), []);
    assert.equal(backend.duplicatesAmong(ids), 0, backend.summary());
    for (const id of ids) assert.equal(backend.details.get(id)?.apiKey, 'tenant-key');
    assert.deepEqual(backend.malformed, []);
  });

  it('a run posted, then patched in a later request, arrives once and complete', async () => {
    const client = new Client({ apiUrl: ingestUrl, apiKey: 'tenant-key' });
    const id = crypto.randomUUID();
    const start = Date.now();
    await client.createRun({
      id,
      name: 'long-step',
      run_type: 'chain',
      inputs: { question: 'how long?' },
      start_time: start,
      project_name: 'patch-project',
      trace_id: id,
      dotted_order: `${new Date(start).toISOString().replace(/[-:.]/g, '').replace('Z', '000Z')}${id}`,
    });
    await client.awaitPendingTraceBatches();
    // The post is relayed on its own before the patch is sent.
    await backend.waitForAll([id], 30_000);
    assert.equal(backend.stored.get(id)!.end_time, undefined);
    await client.updateRun(id, {
      end_time: start + 1500,
      outputs: { answer: 'this long' },
      error: 'gave up at the end',
      trace_id: id,
      dotted_order: backend.stored.get(id)!.dotted_order!,
    });
    await client.awaitPendingTraceBatches();
    const run = await eventually(
      () => {
        const held = backend.stored.get(id)!;
        assert.ok(held.end_time);
        return held;
      },
      { message: () => `the patch at the backend (${backend.summary()})` },
    );
    assert.equal(backend.runs.get(id)!.count, 1);
    assert.equal(backend.patches.get(id), 1);
    assert.equal(run.name, 'long-step');
    assert.equal(run.session_name, 'patch-project');
    assert.deepEqual(run.inputs, { question: 'how long?' });
    assert.deepEqual(run.outputs, { answer: 'this long' });
    assert.equal(run.error, 'gave up at the end');
    assert.equal(Date.parse(run.end_time!) - Date.parse(run.start_time), 1500);
  });
});

describe('LangSmith SDK → configs/local.yaml → trace explorer', () => {
  let tracepipe: TracepipeProcess;
  let ingestUrl: string;
  let explorerUrl: string;
  before(async () => {
    tracepipe = await startTracepipe({ config: 'configs/local.yaml', env: { FLUSH_INTERVAL_MS: '50' } });
    const ports = await eventually(() => ({
      ingest: portOf(tracepipe.output(), 'Receiving LangSmith SDK runs.', 'address'),
      explorer: portOf(tracepipe.output(), 'Trace explorer listening.', 'url'),
    }));
    ingestUrl = `http://127.0.0.1:${ports.ingest}`;
    explorerUrl = `http://127.0.0.1:${ports.explorer}`;
  });
  after(() => tracepipe?.stop());

  interface Summary {
    trace_id: string;
    name: string;
    run_count: number;
    total_tokens: number;
    prompt_tokens: number;
    status: string;
  }
  interface StoredRun {
    id: string;
    name: string;
    parent_run_id?: string;
    outputs?: Record<string, unknown>;
    end_time?: string;
    total_tokens?: number;
  }

  async function traceOf(project: string, runCount: number) {
    const summary = await eventually(
      async () => {
        const response = await fetch(`${explorerUrl}/api/traces?project=${project}`);
        assert.equal(response.status, 200);
        const { traces } = (await response.json()) as { traces: Summary[] };
        assert.equal(traces.length, 1);
        assert.equal(traces[0]!.run_count, runCount);
        return traces[0]!;
      },
      { message: () => `a trace of ${runCount} runs in project ${project}` },
    );
    const detail = await eventually(async () => {
      const { runs } = (await (await fetch(`${explorerUrl}/api/traces/${summary.trace_id}`)).json()) as {
        runs: StoredRun[];
      };
      assert.ok(runs.every((run) => run.end_time));
      return runs;
    });
    return { summary, runs: new Map(detail.map((run) => [run.name, run])) };
  }

  it('traceable runs: the tree, the tokens and the outputs', async () => {
    const client = new Client({ apiUrl: ingestUrl });
    await tracedAgent(client, 'explorer-sdk')('hello');
    await client.awaitPendingTraceBatches();
    const { summary, runs } = await traceOf('explorer-sdk', 3);
    assert.equal(summary.name, 'agent');
    assert.equal(summary.status, 'success');
    // The model run's tokens once: the agent's outputs repeat them and do not count again.
    assert.deepEqual(runs.get('agent')!.outputs!.usage_metadata, runs.get('fake-llm')!.outputs!.usage_metadata);
    assert.equal(summary.total_tokens, 15);
    assert.equal(summary.prompt_tokens, 11);
    const root = runs.get('agent')!;
    assert.equal(root.parent_run_id, undefined);
    assert.equal(runs.get('fake-llm')!.parent_run_id, root.id);
    assert.equal(runs.get('broken-tool')!.parent_run_id, root.id);
    assert.equal(runs.get('fake-llm')!.outputs!.answer, 'echo: hello');
    assert.equal(runs.get('fake-llm')!.total_tokens, 15);
  });

  it('a LangChain.js chain traced through LANGSMITH_ENDPOINT', async () => {
    await runChain(ingestUrl, 'explorer-chain');
    const { summary, runs } = await traceOf('explorer-chain', 3);
    const root = [...runs.values()].find((run) => run.parent_run_id === undefined)!;
    assert.equal(summary.name, root.name);
    assert.equal(runs.get('double')!.parent_run_id, root.id);
    assert.equal(runs.get('add-one')!.parent_run_id, root.id);
    assert.deepEqual(root.outputs, { result: 41 });
    assert.deepEqual(runs.get('double')!.outputs, { output: 40 });
  });
});
