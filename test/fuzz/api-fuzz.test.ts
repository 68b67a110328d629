// A fuzz that stays: requests generated from the two OpenAPI documents (the agent API's
// `/openapi.json` and the trace explorer's), plus `/mcp`, `/a2a` and the agent card, sent to a real
// service (agent server, trace store, explorer) with a fixed seed — schema-valid bodies, queries and
// path ids from the server's own resources, and hostile variants (wrong types, broken JSON, huge
// strings, deep nesting, odd path values, wrong content types and encodings). Every request must
// get an answer below 500 on a connection that stays usable, and the server must be alive at the
// end. A hang is a request still unanswered after HANG_MS, a bound far above any answer, there
// only so that a hang fails the test instead of stalling it; nothing here is timed.
//
// Then two users of one deployment (a custom auth handler stamping and filtering `owner`): user-b
// sends generated requests aimed at user-a's threads, runs, assistants, crons and store items
// through the API, `/mcp`, `/a2a` and the explorer; none of user-a's data shows in an answer to
// user-b, and user-a's resources are unchanged afterwards.
//
// CI runs FUZZ_REQUESTS (default 1600) + FUZZ_TWO_USER_REQUESTS (default 400) requests;
// `FUZZ_REQUESTS=100000 node scripts/run-tests.mjs test/fuzz/api-fuzz.test.ts` is the long mode for
// a bench (FUZZ_SEED picks another sequence). Long-lived routes by design are left out: the thread
// stream (`GET /threads/{id}/stream`) and the run join/stream GETs, which wait for a run to end.

import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import { Client } from '@langchain/langgraph-sdk';
import { parseConfigText, validateConfig } from '../../src/config/load.ts';
import { Registry } from '../../src/pipeline/registry.ts';
import { Service } from '../../src/pipeline/service.ts';
import { silentLogger } from '../../src/telemetry/logger.ts';
import { createMetricsRegistry } from '../../src/telemetry/metrics.ts';
import { tempDir } from '../../src/testkit/files.ts';
import { localExporterFactory } from '../../plugins/exporters/local/index.ts';
import { batchProcessorFactory } from '../../plugins/processors/batch/index.ts';
import { genAiProcessorFactory } from '../../plugins/processors/genai/index.ts';
import { agentApiReceiverFactory } from '../../plugins/receivers/agent_api/index.ts';
import { traceExplorerExtensionFactory } from '../../plugins/extensions/trace_explorer/index.ts';
import { hostileBody, hostileText, valueOf } from './openapi-schema.ts';
import type { KeyOverrides, Schema } from './openapi-schema.ts';

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 1600);
const TWO_USER_REQUESTS = Number(process.env.FUZZ_TWO_USER_REQUESTS ?? 400);
const SEED = Number(process.env.FUZZ_SEED ?? 39);
const HANG_MS = 60_000;

const GRAPHS = fileURLToPath(new URL('../../examples/graphs/langgraph.json', import.meta.url));
const OWNER_AUTH = fileURLToPath(
  new URL('../../plugins/receivers/agent_api/testdata/auth/langgraph-owner.json', import.meta.url),
);
const registry = new Registry([
  agentApiReceiverFactory,
  genAiProcessorFactory,
  batchProcessorFactory,
  localExporterFactory,
  traceExplorerExtensionFactory,
]);

async function startService(
  dir: string,
  graphs: string,
): Promise<{ service: Service; agent: string; explorer: string }> {
  const yaml = `
receivers:
  agent_api: { port: 0, langgraph_config: ${graphs}, data_dir: ${dir}/agent, workers: 2, tracing: { enabled: true } }
processors: { genai: {}, batch: { flush_interval_ms: 100 } }
exporters: { local: { path: ${dir}/traces.db } }
extensions: { trace_explorer: { port: 0, path: ${dir}/traces.db } }
service:
  extensions: [trace_explorer]
  pipelines: { traces: { receivers: [agent_api], processors: [genai, batch], exporters: [local] } }
`;
  const { config, errors } = validateConfig(parseConfigText(yaml), registry, dir);
  assert.deepEqual(errors, []);
  const service = new Service(config!, {
    logger: silentLogger(),
    metrics: createMetricsRegistry({ processMetrics: false }),
  });
  await service.start();
  const described = service.describe();
  return {
    service,
    agent: described.find((d) => d.id === 'agent_api')!.endpoints![0]!.url.replace(/\/$/, ''),
    explorer: described.find((d) => d.id === 'trace_explorer')!.endpoints![0]!.url.replace(/\/ui\/traces$/, ''),
  };
}

/** One route of an OpenAPI document. */
interface Operation {
  readonly base: string;
  readonly method: string;
  readonly path: string;
  readonly parameters: { name: string; in: string; schema?: Schema; required?: boolean }[];
  readonly body?: Schema;
}

const LONG_LIVED = /\/(stream|join)$/;

/** The routes of the OpenAPI document at `base`, read with `headers`. */
async function operationsOf(base: string, headers: Record<string, string> = {}): Promise<Operation[]> {
  const response = await fetch(`${base}/openapi.json`, { headers });
  assert.equal(response.status, 200, `${base}/openapi.json`);
  const document = (await response.json()) as Parameters<typeof documentOperations>[1];
  return documentOperations(base, document);
}

/** A request as sent. */
interface FuzzRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

/** Ids of real resources, so that generated requests reach past the 404s. */
interface Pools {
  readonly thread_id: string[];
  readonly run_id: string[];
  readonly assistant_id: string[];
  readonly cron_id: string[];
  readonly checkpoint_id: string[];
}

function poolOr(values: readonly string[], fallback: Arbitrary<string>): Arbitrary<string> {
  return values.length === 0
    ? fallback
    : fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: fallback });
}

function overridesFor(pools: Pools): KeyOverrides {
  return {
    assistant_id: poolOr(pools.assistant_id, fc.string({ minLength: 1, maxLength: 8 })),
    thread_id: poolOr(pools.thread_id, fc.uuid()),
    checkpoint_id: poolOr(pools.checkpoint_id, fc.uuid()),
    // Valid values that would make a run wait or call out by design, not by bug.
    after_seconds: fc.constantFrom(0, 1),
    webhook: fc.constant(undefined),
    schedule: fc.constantFrom('0 0 1 1 *', '*/5 * * * *', 'not a schedule', ''),
    input: fc.oneof(fc.constant({ messages: [{ role: 'user', content: 'fuzz' }] }), fc.jsonValue({ maxDepth: 2 })),
  };
}

function pathValue(name: string, pools: Pools): Arbitrary<string> {
  const pool = (pools as unknown as Record<string, string[]>)[name] ?? [];
  return fc.oneof({ weight: 5, arbitrary: poolOr(pool, fc.uuid()) }, { weight: 1, arbitrary: hostileText() });
}

function requestFor(operation: Operation, pools: Pools, headers: Record<string, string>): Arbitrary<FuzzRequest> {
  const pathParameters = operation.parameters.filter((p) => p.in === 'path');
  const queryParameters = operation.parameters.filter((p) => p.in === 'query');
  const overrides = overridesFor(pools);
  const path = fc
    .tuple(...pathParameters.map((p) => pathValue(p.name, pools)))
    .map((values) =>
      pathParameters.reduce(
        (text, p, i) => text.replace(`{${p.name}}`, encodeURIComponent(values[i]!)),
        operation.path,
      ),
    );
  const query = fc
    .tuple(
      ...queryParameters.map((p) =>
        fc.option(
          fc.oneof(
            { weight: 3, arbitrary: valueOf(p.schema, overrides).map(String) },
            { weight: 1, arbitrary: hostileText() },
          ),
          { nil: undefined },
        ),
      ),
    )
    .map((values) => {
      const search = new URLSearchParams();
      queryParameters.forEach((p, i) => values[i] !== undefined && search.append(p.name, values[i]!));
      const text = search.toString();
      return text ? `?${text}` : '';
    });
  const body: Arbitrary<{ text?: string; type?: string; encoding?: string }> = operation.body
    ? fc.oneof(
        {
          weight: 4,
          arbitrary: valueOf(operation.body, overrides).map((value) => ({
            text: JSON.stringify(value) ?? 'null',
            type: 'application/json',
          })),
        },
        { weight: 2, arbitrary: hostileBody().map((text) => ({ text, type: 'application/json' })) },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data')
            .map((type) => ({ text: '{}', type })),
        },
        { weight: 1, arbitrary: fc.constant({ text: '{}', type: 'application/json', encoding: 'gzip' }) },
        { weight: 1, arbitrary: fc.constant({}) },
      )
    : fc.oneof(
        { weight: 6, arbitrary: fc.constant({}) },
        { weight: 1, arbitrary: hostileBody().map((text) => ({ text, type: 'application/json' })) },
      );
  return fc.tuple(path, query, body).map(([p, q, b]) => ({
    url: `${operation.base}${p}${q}`,
    method: operation.method,
    headers: {
      ...headers,
      ...(b.type ? { 'content-type': b.type } : {}),
      ...(b.encoding ? { 'content-encoding': b.encoding } : {}),
    },
    ...(b.text !== undefined && operation.method !== 'GET' ? { body: b.text } : {}),
  }));
}

/** JSON-RPC requests to `/mcp` and `/a2a/{assistant_id}`, and the agent cards. */
function agentProtocolRequests(agent: string, pools: Pools, headers: Record<string, string>): Arbitrary<FuzzRequest> {
  const text = fc.oneof(fc.constant('fuzz'), fc.string({ maxLength: 30 }));
  const assistant = poolOr(pools.assistant_id, hostileText());
  const rpc = (
    url: Arbitrary<string>,
    method: Arbitrary<string>,
    params: Arbitrary<unknown>,
    extra: Record<string, string>,
  ) =>
    fc.tuple(url, method, params, fc.oneof(fc.integer(), fc.string({ maxLength: 5 }))).map(([u, m, p, id]) => ({
      url: u,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', ...extra },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: m, params: p }),
    }));
  const message = fc.record({
    message: fc.record({
      role: fc.constantFrom('user', 'agent', 'x'),
      messageId: fc.uuid(),
      parts: fc.array(fc.record({ kind: fc.constantFrom('text', 'data', 'file'), text }), { maxLength: 2 }),
      contextId: fc.option(poolOr(pools.thread_id, fc.uuid()), { nil: undefined }),
      taskId: fc.option(poolOr(pools.run_id, fc.uuid()), { nil: undefined }),
    }),
  });
  return fc.oneof(
    rpc(
      fc.constant(`${agent}/mcp`),
      fc.constantFrom('initialize', 'tools/list', 'tools/call', 'ping', 'resources/list', 'nope'),
      fc.oneof(
        fc.record({
          name: assistant,
          arguments: fc.record({ messages: fc.constant([{ role: 'user', content: 'fuzz' }]) }),
        }),
        fc.jsonValue({ maxDepth: 2 }),
      ),
      { accept: 'application/json, text/event-stream' },
    ),
    rpc(
      assistant.map((id) => `${agent}/a2a/${encodeURIComponent(id)}`),
      fc.constantFrom('message/send', 'tasks/get', 'tasks/cancel', 'SendMessage', 'GetTask', 'nope'),
      fc.oneof(
        message,
        fc.record({ id: poolOr(pools.run_id, fc.uuid()), contextId: poolOr(pools.thread_id, fc.uuid()) }),
        fc.jsonValue({ maxDepth: 2 }),
      ),
      { accept: 'application/json' },
    ),
    hostileBody().map((body) => ({
      url: `${agent}/mcp`,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body,
    })),
    assistant.map((id) => ({
      url: `${agent}/.well-known/agent-card.json?assistant_id=${encodeURIComponent(id)}`,
      method: 'GET',
      headers,
    })),
  );
}

/** Sends one request; fails the property on a hang, a dropped connection or a 5xx. */
async function send(request: FuzzRequest): Promise<{ status: number; text: string }> {
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      signal: AbortSignal.timeout(HANG_MS),
    });
  } catch (error) {
    const what =
      (error as Error).name === 'TimeoutError' ? 'no answer (hang)' : `connection dropped (${String(error)})`;
    throw new Error(`${request.method} ${request.url}: ${what}`);
  }
  const text = await response.text().catch((error: unknown) => {
    throw new Error(`${request.method} ${request.url}: body cut (${String(error)})`);
  });
  if (response.status >= 500)
    throw new Error(
      `${request.method} ${request.url} ${request.body?.slice(0, 300) ?? ''} → ${response.status} ${text.slice(0, 500)}`,
    );
  return { status: response.status, text };
}

/** Threads, a run with checkpoints, an assistant, a cron and a store item, as `client` sees them. */
async function seed(client: Client, secret: string): Promise<Pools> {
  const assistant = await client.assistants.create({ graphId: 'agent', metadata: { note: secret } });
  const thread = await client.threads.create({ metadata: { note: secret } });
  const run = await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: secret }] },
  });
  assert.ok(run);
  const [runRecord] = await client.runs.list(thread.thread_id);
  const history = await client.threads.getHistory(thread.thread_id);
  const cron = await client.crons.create(assistant.assistant_id, {
    schedule: '0 0 1 1 *',
    input: { messages: [{ role: 'user', content: secret }] },
  });
  return {
    thread_id: [thread.thread_id],
    run_id: [runRecord!.run_id],
    assistant_id: ['agent', assistant.assistant_id],
    cron_id: [(cron as unknown as { cron_id: string }).cron_id],
    checkpoint_id: history.map((state) => state.checkpoint.checkpoint_id!).filter(Boolean),
  };
}

const runProperty = (
  arbitrary: Arbitrary<FuzzRequest>,
  numRuns: number,
  check?: (answer: { status: number; text: string }) => void,
) =>
  fc.assert(
    fc.asyncProperty(arbitrary, async (request) => {
      const answer = await send(request);
      check?.(answer);
    }),
    { numRuns, seed: SEED, endOnFailure: true },
  );

describe('API fuzz: generated and hostile requests to a real service', () => {
  const dir = tempDir('tracepipe-fuzz-');
  let running: Awaited<ReturnType<typeof startService>>;
  let pools: Pools;
  before(async () => {
    running = await startService(dir, GRAPHS);
    pools = await seed(
      new Client({ apiUrl: running.agent, apiKey: null, callerOptions: { maxRetries: 0 } }),
      'fuzz-seed',
    );
  });
  after(() => running?.service.shutdown());

  it(`answers ${REQUESTS} requests below 500, on connections that stay usable, and stays alive`, async () => {
    const operations = [...(await operationsOf(running.agent)), ...(await operationsOf(running.explorer))];
    assert.ok(operations.length > 50, `${operations.length} operations`);
    const arbitrary = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...operations).chain((operation) => requestFor(operation, pools, {})) },
      { weight: 1, arbitrary: agentProtocolRequests(running.agent, pools, {}) },
    );
    await runProperty(arbitrary, REQUESTS);
    assert.equal((await fetch(`${running.agent}/ok`)).status, 200);
    assert.equal((await fetch(`${running.explorer}/live`)).status, 200);
    assert.equal((await fetch(`${running.explorer}/api/traces`)).status, 200);
  });
});

describe('API fuzz: two users never read or write each other’s data', () => {
  const dir = tempDir('tracepipe-fuzz-users-');
  const SECRET = 'user-a-secret-7f3c';
  let running: Awaited<ReturnType<typeof startService>>;
  let pools: Pools;
  const as = (user: string) =>
    new Client({
      apiUrl: running.agent,
      apiKey: null,
      defaultHeaders: { Authorization: `Bearer ${user}` },
      callerOptions: { maxRetries: 0 },
    });

  /** Everything of user-a's, as user-a reads it. */
  async function snapshotOfA(): Promise<string> {
    const a = as('user-a');
    const threads = await a.threads.search({ limit: 100 });
    const states = await Promise.all(threads.map((thread) => a.threads.getState(thread.thread_id)));
    return JSON.stringify({
      threads: threads
        .map(({ thread_id, metadata, status, values }) => ({ thread_id, metadata, status, values }))
        .sort((x, y) => x.thread_id.localeCompare(y.thread_id)),
      states: states.map((state) => state.checkpoint.checkpoint_id),
      assistants: (await a.assistants.search({ limit: 100 })).map(({ assistant_id, version, metadata, config }) => ({
        assistant_id,
        version,
        metadata,
        config,
      })),
      crons: (await a.crons.search({ limit: 100 })).map((cron) => {
        const { cron_id, schedule, metadata, payload } = cron as unknown as Record<string, unknown>;
        return { cron_id, schedule, metadata, payload };
      }),
      store: (await a.store.searchItems(['user-a'])).items.map(({ namespace, key, value }) => ({
        namespace,
        key,
        value,
      })),
    });
  }

  before(async () => {
    running = await startService(dir, OWNER_AUTH);
    pools = await seed(as('user-a'), SECRET);
    await as('user-a').store.putItem(['user-a', 'notes'], 'k', { note: SECRET });
  });
  after(() => running?.service.shutdown());

  it(`user-b's ${TWO_USER_REQUESTS} requests at user-a's ids, through the API, /mcp, /a2a and the explorer, see and change nothing of user-a's`, async () => {
    const before = await snapshotOfA();
    assert.match(before, new RegExp(SECRET));
    // Behind the handler the documents themselves need a user: the API's as user-a, the explorer's as its operator.
    const documents = [
      ...(await operationsOf(running.agent, { authorization: 'Bearer user-a' })),
      ...(await operationsOf(running.explorer, { authorization: 'Bearer operator' })),
    ];
    const headers = { authorization: 'Bearer user-b' };
    const arbitrary = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.constantFrom(...documents).chain((operation) => requestFor(operation, pools, headers)),
      },
      { weight: 2, arbitrary: agentProtocolRequests(running.agent, pools, headers) },
    );
    await runProperty(arbitrary, TWO_USER_REQUESTS, (answer) => {
      assert.ok(!answer.text.includes(SECRET), `user-a's data in an answer to user-b: ${answer.text.slice(0, 300)}`);
    });
    assert.equal(await snapshotOfA(), before);
    assert.equal((await fetch(`${running.agent}/ok`)).status, 200);
  });
});

function documentOperations(
  base: string,
  document: {
    paths: Record<
      string,
      Record<
        string,
        { parameters?: Operation['parameters']; requestBody?: { content?: Record<string, { schema?: Schema }> } }
      >
    >;
  },
): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (method.toUpperCase() === 'GET' && LONG_LIVED.test(path)) continue;
      const body = operation.requestBody?.content?.['application/json']?.schema;
      operations.push({
        base,
        method: method.toUpperCase(),
        path,
        parameters: operation.parameters ?? [],
        ...(body ? { body } : {}),
      });
    }
  }
  return operations;
}
