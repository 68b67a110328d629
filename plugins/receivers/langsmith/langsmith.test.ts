// The `langsmith` receiver on a loopback port with the LangSmith JS SDK as its client, unchanged:
// `traceable` functions and `Client` with `apiUrl`, a LangChain.js chain traced through
// LANGSMITH_ENDPOINT, the JSON endpoints, and bad input: a bad part, an oversize part and a gzip
// bomb each get their 4xx, naming the problem, while the rest of the request is kept.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import { RunnableLambda } from '@langchain/core/runnables';
import { Client } from 'langsmith';
import { traceable } from 'langsmith/traceable';
import { validateAgainst, Sink, nopSettings, runComponentConformance, eventually } from 'tracepipe/testing';
import type { Consumer, Run } from 'tracepipe/plugin';
import { LocalTraceStore } from 'tracepipe/tracestore';
import type { LangSmithReceiverConfig } from './config.ts';
import { langSmithReceiverFactory } from './index.ts';
import type { LangSmithReceiver } from './receiver.ts';

runComponentConformance(langSmithReceiverFactory, {
  testdataDir: join(import.meta.dirname, 'testdata'),
  config: { port: 0 },
});

async function startReceiver(overrides: Record<string, unknown> = {}, next?: Consumer<'runs'>) {
  const config = { port: 0, require_api_key: false, ...overrides } as unknown as LangSmithReceiverConfig;
  assert.deepEqual(validateAgainst(langSmithReceiverFactory.configSchema, config, 'langsmith'), []);
  const sink = new Sink<'runs'>();
  const receiver = langSmithReceiverFactory.create(
    nopSettings('receiver', 'langsmith'),
    config,
    next ?? sink,
  ) as LangSmithReceiver;
  await receiver.start(new AbortController().signal);
  const url = `http://127.0.0.1:${receiver.port}`;
  const runs = () => sink.batches.flatMap((batch) => batch.data.runs);
  return { receiver, sink, url, runs, close: () => receiver.shutdown(Date.now() + 5000) };
}

/** The runs of the sink folded as a store folds them: an update completes the run it names. */
function folded(runs: readonly Run[]): Map<string, Run> {
  const byId = new Map<string, Run>();
  for (const run of runs) {
    const { update, ...fields } = run;
    const stored = byId.get(run.id);
    byId.set(run.id, update && stored ? { ...stored, ...fields } : { ...stored, ...fields });
  }
  return byId;
}

function multipart(parts: { name: string; body: string | Buffer; type?: string }[], boundary = 'b0undary') {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\nContent-Type: ${part.type ?? 'application/json'}\r\n\r\n`,
      ),
      Buffer.from(part.body),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

describe('langsmith receiver with the LangSmith JS SDK', () => {
  let server: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    server = await startReceiver();
  });
  after(() => server.close());

  it('GET /info announces the batch limits and the compressions taken', async () => {
    const info = (await (await fetch(`${server.url}/info`)).json()) as Record<string, Record<string, unknown>>;
    assert.equal(info.batch_ingest_config!.size_limit, 100);
    assert.equal(info.batch_ingest_config!.use_multipart_endpoint, true);
    assert.equal(info.instance_flags!.gzip_body_enabled, true);
  });

  it('traceable functions with a Client on apiUrl: nested runs with parents, outputs, tokens, end times', async () => {
    server.sink.batches.length = 0;
    const client = new Client({ apiUrl: server.url, apiKey: 'ls-key' });
    const llm = traceable(
      async (question: string) => ({
        answer: `echo: ${question}`,
        usage_metadata: { input_tokens: 11, output_tokens: 4, total_tokens: 15 },
      }),
      { name: 'fake-llm', run_type: 'llm', client, tracingEnabled: true, project_name: 'sdk-project' },
    );
    const failing = traceable(
      async () => {
        throw new Error('tool broke');
      },
      { name: 'broken-tool', run_type: 'tool', client, tracingEnabled: true, project_name: 'sdk-project' },
    );
    const agent = traceable(
      async (question: string) => {
        await failing().catch(() => undefined);
        return llm(question);
      },
      { name: 'agent', client, tracingEnabled: true, project_name: 'sdk-project' },
    );
    await agent('hello');
    await client.awaitPendingTraceBatches();
    const runs = await eventually(() => {
      const byName = new Map([...folded(server.runs()).values()].map((run) => [run.name, run]));
      assert.equal(byName.size, 3);
      assert.ok([...byName.values()].every((run) => run.end_time));
      return byName;
    });
    const root = runs.get('agent')!;
    const child = runs.get('fake-llm')!;
    const tool = runs.get('broken-tool')!;
    assert.equal(root.parent_run_id, undefined);
    assert.equal(root.trace_id, root.id);
    assert.equal(child.parent_run_id, root.id);
    assert.equal(tool.parent_run_id, root.id);
    assert.equal(child.trace_id, root.id);
    assert.equal(child.run_type, 'llm');
    assert.deepEqual(child.inputs, { input: 'hello' });
    assert.equal(child.outputs!.answer, 'echo: hello');
    assert.deepEqual(child.outputs!.usage_metadata, { input_tokens: 11, output_tokens: 4, total_tokens: 15 });
    assert.equal(child.session_name, 'sdk-project');
    assert.match(child.dotted_order!, new RegExp(`^\\d{8}T\\d+Z${root.id}\\.\\d{8}T\\d+Z${child.id}$`));
    assert.equal(tool.status, 'error');
    assert.match(tool.error!, /tool broke/);
    assert.match(root.start_time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    assert.ok(server.sink.batches.every((batch) => batch.context.apiKey === 'ls-key'));
  });

  it('a LangChain.js chain traced through LANGSMITH_ENDPOINT', async () => {
    server.sink.batches.length = 0;
    const saved = { ...process.env };
    Object.assign(process.env, {
      LANGSMITH_TRACING: 'true',
      LANGSMITH_ENDPOINT: server.url,
      LANGSMITH_API_KEY: 'chain-key',
      LANGSMITH_PROJECT: 'chain-project',
    });
    try {
      const double = RunnableLambda.from(async (x: number) => x * 2).withConfig({ runName: 'double' });
      const chain = double.pipe(
        RunnableLambda.from(async (x: number) => ({ result: x + 1 })).withConfig({ runName: 'add-one' }),
      );
      assert.deepEqual(await chain.invoke(20), { result: 41 });
      // The tracer's callbacks have run; its client uploads them in the background (awaited below).
      await awaitAllCallbacks();
      const runs = await eventually(() => {
        const all = [...folded(server.runs()).values()];
        assert.equal(all.length, 3);
        assert.ok(all.every((run) => run.end_time));
        return all;
      });
      const root = runs.find((run) => run.parent_run_id === undefined)!;
      assert.equal(root.session_name, 'chain-project');
      assert.deepEqual(
        runs
          .filter((run) => run !== root)
          .map((run) => [run.name, run.parent_run_id])
          .sort(),
        [
          ['add-one', root.id],
          ['double', root.id],
        ],
      );
      assert.deepEqual(root.outputs, { result: 41 });
      assert.ok(server.sink.batches.every((batch) => batch.context.apiKey === 'chain-key'));
    } finally {
      for (const key of ['LANGSMITH_TRACING', 'LANGSMITH_ENDPOINT', 'LANGSMITH_API_KEY', 'LANGSMITH_PROJECT'])
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
    }
  });

  it('POST /runs and PATCH /runs/{id}: one run with its end time, outputs and error', async () => {
    server.sink.batches.length = 0;
    const id = uuid(1);
    const post = await fetch(`${server.url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'langsmith-project': 'header-project' },
      body: JSON.stringify({ id, name: 'solo', run_type: 'chain', start_time: 1_700_000_000_000, inputs: { q: 1 } }),
    });
    assert.equal(post.status, 202);
    const patch = await fetch(`${server.url}/runs/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ end_time: '2023-11-14T22:13:21.123456', outputs: { a: 2 }, error: 'late failure' }),
    });
    assert.equal(patch.status, 202);
    const run = folded(server.runs()).get(id)!;
    assert.equal(run.session_name, 'header-project');
    assert.equal(run.start_time, '2023-11-14T22:13:20.000Z');
    assert.equal(run.end_time, '2023-11-14T22:13:21.123456Z');
    assert.deepEqual(run.outputs, { a: 2 });
    assert.equal(run.status, 'error');
    assert.equal(run.error, 'late failure');
  });
});

describe('langsmith receiver into a local trace store: an update sent before its create', () => {
  // As the `local` exporter stores the receiver's batches.
  const store = new LocalTraceStore(':memory:');
  const delivered: unknown[] = [];
  const storing: Consumer<'runs'> = {
    mutatesData: false,
    consume: async (batch, context) => {
      store.insertRuns(batch.runs, context.project);
      delivered.push(batch);
    },
  };
  let server: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    server = await startReceiver({}, storing);
  });
  after(async () => {
    await server.close();
    store.close();
  });

  const send = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 202, await response.text());
  };

  it('PATCH /runs/{id} then POST /runs: one complete run, listed under its name and project', async () => {
    const id = uuid(300);
    const dotted_order = `20231114T221320000000Z${id}`;
    await send('PATCH', `/runs/${id}`, {
      id,
      trace_id: id,
      dotted_order,
      end_time: 1_700_000_001_500,
      outputs: { out: 'ooo-out' },
    });
    await eventually(() => delivered.length === 1);
    // Until its create comes, the update is no trace of its own.
    assert.deepEqual(store.listTraces(), []);
    assert.equal(store.getTrace(id), undefined);
    const create = {
      id,
      trace_id: id,
      dotted_order,
      name: 'ooo-run',
      run_type: 'chain',
      start_time: 1_700_000_000_000,
      inputs: { in: 'ooo-in' },
      session_name: 'proj-ooo',
    };
    await send('POST', '/runs', create);
    await eventually(() => delivered.length === 2);
    // The create again, as an SDK retrying it after a 429 or 503 sends it.
    await send('POST', '/runs', create);
    await eventually(() => delivered.length === 3);
    const [run] = store.getTrace(id)!.runs;
    assert.equal(run!.name, 'ooo-run');
    assert.equal(run!.session_name, 'proj-ooo');
    assert.deepEqual(run!.inputs, { in: 'ooo-in' });
    assert.equal(run!.start_time, '2023-11-14T22:13:20.000Z');
    assert.equal(run!.end_time, '2023-11-14T22:13:21.500Z');
    assert.deepEqual(run!.outputs, { out: 'ooo-out' });
    assert.equal(run!.status, 'success');
    const listed = store.listTraces({ project: 'proj-ooo' });
    assert.deepEqual(
      listed.map((trace) => [trace.name, trace.status, trace.durationMs, trace.outputPreview]),
      [['ooo-run', 'success', 1500, 'ooo-out']],
    );
    assert.deepEqual(
      store.listTraces({ text: 'ooo-out' }).map((trace) => trace.traceId),
      [id],
    );
    assert.deepEqual(store.projects(), [{ project: 'proj-ooo', traces: 1 }]);
  });
});

describe("langsmith receiver: POST /runs/batch, the SDKs' JSON fallback", () => {
  let server: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    server = await startReceiver();
  });
  after(() => server.close());

  const run = (n: number, extra: Record<string, unknown> = {}) => ({
    id: uuid(n),
    trace_id: uuid(100),
    name: `batched-${n}`,
    run_type: 'chain',
    start_time: '2023-11-14T22:13:20Z',
    ...extra,
  });

  it('posts and patches: one run per id, a patch of the same request folded into its post', async () => {
    server.sink.batches.length = 0;
    const response = await fetch(`${server.url}/runs/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'batch-key' },
      body: JSON.stringify({
        post: [run(100, { inputs: { q: 'root' } }), run(101, { parent_run_id: uuid(100), session_name: 'batched' })],
        patch: [{ id: uuid(101), trace_id: uuid(100), end_time: '2023-11-14T22:13:21Z', outputs: { a: 1 } }],
      }),
    });
    assert.equal(response.status, 202);
    assert.deepEqual(await response.json(), { message: 'accepted', runs: 2 });
    const runs = server.runs();
    assert.equal(runs.length, 2);
    assert.ok(runs.every((r) => !r.update));
    const child = runs.find((r) => r.id === uuid(101))!;
    assert.equal(child.parent_run_id, uuid(100));
    assert.equal(child.session_name, 'batched');
    assert.equal(child.end_time, '2023-11-14T22:13:21Z');
    assert.deepEqual(child.outputs, { a: 1 });
    assert.equal(child.status, 'success');
    assert.deepEqual(runs.find((r) => r.id === uuid(100))!.inputs, { q: 'root' });
    assert.ok(server.sink.batches.every((batch) => batch.context.apiKey === 'batch-key'));
  });

  it('a patch alone is passed on as an update', async () => {
    server.sink.batches.length = 0;
    const response = await fetch(`${server.url}/runs/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ patch: [{ id: uuid(102), end_time: '2023-11-14T22:13:22Z', error: 'late' }] }),
    });
    assert.equal(response.status, 202);
    const [update] = server.runs();
    assert.equal(update!.update, true);
    assert.equal(update!.id, uuid(102));
    assert.equal(update!.error, 'late');
  });

  it('a bad run is refused by its place in the batch (422), the others kept', async () => {
    server.sink.batches.length = 0;
    const response = await fetch(`${server.url}/runs/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ post: [run(103), { id: uuid(104), run_type: 'chain' }, run(105)] }),
    });
    assert.equal(response.status, 422);
    const answer = (await response.json()) as {
      statusCode: number;
      error: string;
      refused: { part: string; message: string }[];
      accepted_runs: number;
    };
    assert.equal(answer.statusCode, 422);
    assert.equal(answer.error, 'Unprocessable Entity');
    assert.deepEqual(
      answer.refused.map((r) => r.part),
      ['post[1]'],
    );
    assert.equal(answer.accepted_runs, 2);
    assert.deepEqual(
      server
        .runs()
        .map((r) => r.name)
        .sort(),
      ['batched-103', 'batched-105'],
    );
  });

  it('a body that is not {"post": [...], "patch": [...]}: 400 saying what is expected', async () => {
    for (const [body, pattern] of [
      ['[]', /expected a JSON object/],
      ['{"post": {}}', /"post" must be an array/],
      ['{"post": [', /malformed JSON body/],
    ] as const) {
      const response = await fetch(`${server.url}/runs/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      assert.equal(response.status, 400, body);
      assert.match(response.headers.get('content-type')!, /^application\/json/);
      assert.match(((await response.json()) as { message: string }).message, pattern);
    }
  });
});

describe('langsmith receiver: wrong content types', () => {
  let server: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    server = await startReceiver();
  });
  after(() => server.close());

  async function refusal(path: string, method: string, contentType: string, body: string) {
    const response = await fetch(`${server.url}${path}`, { method, headers: { 'content-type': contentType }, body });
    assert.match(response.headers.get('content-type')!, /^application\/json/);
    return { status: response.status, ...((await response.json()) as { message: string; error: string }) };
  }

  it('415 naming the type expected, on every endpoint, before the body is read', async () => {
    const run = JSON.stringify({ id: uuid(200), name: 'x', run_type: 'chain', start_time: 1 });
    for (const [path, method, contentType, pattern] of [
      [
        '/runs/multipart',
        'POST',
        'application/json',
        /expected Content-Type multipart\/form-data with a boundary, not "application\/json"/,
      ],
      ['/runs/multipart', 'POST', 'multipart/form-data', /with a boundary/],
      ['/runs/batch', 'POST', 'text/plain', /expected Content-Type application\/json, not "text\/plain"/],
      ['/runs', 'POST', 'application/x-www-form-urlencoded', /expected Content-Type application\/json/],
      [`/runs/${uuid(200)}`, 'PATCH', 'multipart/form-data; boundary=x', /expected Content-Type application\/json/],
    ] as const) {
      const answer = await refusal(path, method, contentType, run);
      assert.equal(answer.status, 415, `${method} ${path} ${contentType}`);
      assert.equal(answer.error, 'Unsupported Media Type');
      assert.match(answer.message, pattern);
    }
    // A JSON type with parameters, or a +json type, is JSON.
    const taken = await fetch(`${server.url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.api+json; charset=utf-8' },
      body: run,
    });
    assert.equal(taken.status, 202);
  });

  it('a part that is not JSON: 422 naming the part, the other runs kept', async () => {
    server.sink.batches.length = 0;
    const { body, contentType } = multipart([
      {
        name: `post.${uuid(201)}`,
        body: JSON.stringify({ id: uuid(201), name: 'kept', run_type: 'chain', start_time: 1 }),
      },
      { name: `post.${uuid(202)}`, body: 'name=dropped', type: 'text/plain' },
    ]);
    const response = await fetch(`${server.url}/runs/multipart`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
    assert.equal(response.status, 422);
    const answer = (await response.json()) as { refused: { part: string; message: string }[] };
    assert.deepEqual(answer.refused, [
      { part: `post.${uuid(202)}`, message: 'Content-Type text/plain: run parts are application/json' },
    ]);
    assert.deepEqual(
      server.runs().map((r) => r.name),
      ['kept'],
    );
  });
});

describe('langsmith receiver: a method a path does not take', () => {
  let server: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    server = await startReceiver();
  });
  after(() => server.close());

  it('405 with Allow and the error body, on static, parametric and health routes', async () => {
    // `/runs/batch` is also `PATCH /runs/:id` with the id "batch": the router takes it, so Allow says so.
    for (const [method, path, allow] of [
      ['GET', '/runs/batch', 'POST, PATCH'],
      ['GET', '/runs/multipart', 'POST, PATCH'],
      ['PUT', '/runs', 'POST'],
      ['OPTIONS', '/runs', 'POST'],
      ['DELETE', `/runs/${uuid(300)}`, 'PATCH'],
      ['POST', '/info', 'GET, HEAD'],
      ['POST', '/live', 'GET, HEAD'],
    ] as const) {
      const response = await fetch(`${server.url}${path}?x=1`, { method });
      assert.equal(response.status, 405, `${method} ${path}`);
      assert.equal(response.headers.get('allow'), allow, `${method} ${path}`);
      assert.match(response.headers.get('content-type')!, /^application\/json/);
      assert.deepEqual(await response.json(), {
        statusCode: 405,
        error: 'Method Not Allowed',
        message: `method ${method} is not allowed on ${path}; use ${allow.replace(', ', ' or ')}`,
      });
    }
    const head = await fetch(`${server.url}/runs/batch`, { method: 'HEAD' });
    assert.equal(head.status, 405);
    assert.equal(head.headers.get('allow'), 'POST, PATCH');
  });

  it('an unknown path is still 404', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['POST', '/runs/batch/more'],
      ['DELETE', '/runs/a/b'],
    ] as const) {
      const response = await fetch(`${server.url}${path}`, { method });
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal(response.headers.get('allow'), null);
      assert.deepEqual(await response.json(), {
        statusCode: 404,
        error: 'Not Found',
        message: `no route for ${method} ${path}`,
      });
    }
  });
});

describe('langsmith receiver: bad input loses nothing else', () => {
  let server: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    server = await startReceiver({ max_part_bytes: 1000, max_body_bytes: 1_000_000 });
  });
  after(() => server.close());

  const good = (n: number) => ({
    name: `post.${uuid(n)}`,
    body: JSON.stringify({
      id: uuid(n),
      trace_id: uuid(n),
      dotted_order: `20231114T221320000000Z${uuid(n)}`,
      name: `good-${n}`,
      run_type: 'chain',
      start_time: '2023-11-14T22:13:20Z',
    }),
  });

  it('a part that is not JSON: 422 naming it, the other runs kept', async () => {
    server.sink.batches.length = 0;
    const { body, contentType } = multipart([
      good(10),
      { name: `post.${uuid(11)}`, body: '{"id": ' },
      good(12),
      { name: `post.${uuid(12)}.outputs`, body: '{"x": 1}' },
    ]);
    const response = await fetch(`${server.url}/runs/multipart`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
    assert.equal(response.status, 422);
    const answer = (await response.json()) as { message: string; refused: { part: string }[]; accepted_runs: number };
    assert.deepEqual(
      answer.refused.map((r) => r.part),
      [`post.${uuid(11)}`],
    );
    assert.match(answer.message, /not valid JSON/);
    assert.equal(answer.accepted_runs, 2);
    assert.deepEqual(
      server
        .runs()
        .map((run) => run.name)
        .sort(),
      ['good-10', 'good-12'],
    );
    assert.deepEqual(server.runs().find((run) => run.name === 'good-12')!.outputs, { x: 1 });
  });

  it('an oversize part: 413 naming it, the other runs kept', async () => {
    server.sink.batches.length = 0;
    const { body, contentType } = multipart([
      good(20),
      good(21),
      { name: `post.${uuid(21)}.inputs`, body: JSON.stringify({ big: 'x'.repeat(5000) }) },
    ]);
    const response = await fetch(`${server.url}/runs/multipart`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
    assert.equal(response.status, 413);
    const answer = (await response.json()) as { refused: { part: string; message: string }[] };
    assert.equal(answer.refused[0]!.part, `post.${uuid(21)}.inputs`);
    assert.match(answer.refused[0]!.message, /exceeds the 1000-byte limit/);
    assert.deepEqual(
      server.runs().map((run) => run.name),
      ['good-20'],
    );
  });

  it('a gzip bomb: 413 before it is inflated whole, and the next request is taken', async () => {
    server.sink.batches.length = 0;
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024));
    assert.ok(bomb.length < 100_000);
    const response = await fetch(`${server.url}/runs/multipart`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b0undary', 'content-encoding': 'gzip' },
      body: bomb,
    });
    assert.equal(response.status, 413);
    assert.match(
      ((await response.json()) as { message: string }).message,
      /decompresses to more than the 1000000-byte limit/,
    );
    const { body, contentType } = multipart([good(30)]);
    const next = await fetch(`${server.url}/runs/multipart`, {
      method: 'POST',
      headers: { 'content-type': contentType, 'content-encoding': 'gzip' },
      body: gzipSync(body),
    });
    assert.equal(next.status, 202);
    assert.deepEqual(
      server.runs().map((run) => run.name),
      ['good-30'],
    );
  });

  it('a body that is not multipart: 400 naming the problem; no key where one is required: 401', async () => {
    const response = await fetch(`${server.url}/runs/multipart`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=zzz' },
      body: 'garbage',
    });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { message: string }).message, /no "--zzz" delimiter/);
    const keyed = await startReceiver({ require_api_key: true });
    try {
      const refused = await fetch(`${keyed.url}/runs`, { method: 'POST', body: '{}' });
      assert.equal(refused.status, 401);
    } finally {
      await keyed.close();
    }
  });
});
