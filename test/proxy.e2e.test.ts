// The trace collector proxy end to end, as a user runs it: `tracepipe --config configs/proxy.yaml`
// configured only through its environment variables (README.md, "Ready-made configs"), fed by the OpenTelemetry JS SDK's
// OTLP exporters, uploading to a backend stand-in that parses each body with the platform's own
// multipart parser (not ours), so the wire format is checked independently.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { decompress } from 'zstd-napi';
import { eventually } from '../src/testkit/eventually.ts';
import { tempDir } from './helpers.ts';
import { spawnGroup } from '../src/testkit/processes.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

interface Upload {
  apiKey: string | undefined;
  runs: Record<string, Record<string, unknown>>;
}

/** A backend that accepts multipart uploads and records each run with its inputs and outputs. */
class Backend {
  readonly uploads: Upload[] = [];
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void this.record(request.headers, Buffer.concat(chunks)).then(
        () => response.writeHead(202).end('{}'),
        (error: unknown) => response.writeHead(422).end(String(error)),
      );
    });
  });

  private async record(headers: Record<string, string | string[] | undefined>, body: Buffer): Promise<void> {
    assert.equal(headers['content-encoding'], 'zstd');
    const form = await new Response(decompress(body), {
      headers: { 'content-type': String(headers['content-type']) },
    }).formData();
    const runs: Upload['runs'] = {};
    for (const [name, value] of form.entries()) {
      const text = typeof value === 'string' ? value : await value.text();
      const [, id, field] = /^post\.([0-9a-f-]{36})(?:\.(inputs|outputs))?$/.exec(name) ?? [];
      assert.ok(id, `unexpected part ${name}`);
      runs[id] ??= {};
      if (field) runs[id]![field] = JSON.parse(text);
      else Object.assign(runs[id]!, JSON.parse(text));
    }
    this.uploads.push({ apiKey: headers['x-api-key'] as string | undefined, runs });
  }

  runs(): Record<string, unknown>[] {
    return this.uploads.flatMap((upload) =>
      Object.values(upload.runs).map((run) => ({ ...run, api_key: upload.apiKey })),
    );
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Starts the proxy from configs/proxy.yaml; resolves with its OTLP port once it listens. */
async function startProxy(env: Record<string, string>) {
  const { child } = spawnGroup(
    process.execPath,
    [join(root, 'bin/tracepipe.js'), '--config', join(root, 'configs/proxy.yaml')],
    {
      env: { ...process.env, HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', GRPC_PORT: '0', LANGSMITH_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; address?: string };
      if (entry.msg === 'Receiving OTLP traces.' && entry.address) resolve(Number(entry.address.split(':').pop()));
    });
    void exited.then((code) => reject(new Error(`proxy exited with ${code}: ${stderr}`)));
  });
  return { child, port, exited, stderr: () => stderr };
}

/** Records one small agent trace with the SDK and exports it, spans as they end (children first). */
async function sendAgentTrace(exporter: SpanExporter, name: string): Promise<{ traceId: string }> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'travel-agent' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('e2e', '1.0.0');
  const agent = tracer.startSpan(name, { attributes: { 'gen_ai.operation.name': 'invoke_agent' } });
  const inAgent = trace.setSpan(context.active(), agent);
  const chat = tracer.startSpan(
    'chat gpt-4o',
    {
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.request.temperature': 0.2,
        'gen_ai.prompt': JSON.stringify({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }),
        'gen_ai.completion': JSON.stringify({ messages: [{ role: 'assistant', content: 'Sunny.' }] }),
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 3,
      },
    },
    inAgent,
  );
  const tool = tracer.startSpan(
    'execute_tool get_weather',
    { attributes: { 'gen_ai.tool.name': 'get_weather' } },
    inAgent,
  );
  tool.end();
  chat.end();
  agent.end();
  await provider.forceFlush();
  await provider.shutdown();
  return { traceId: agent.spanContext().traceId };
}

function uuidOf(hex: string): string {
  const padded = hex.padStart(32, '0');
  return `${padded.slice(0, 8)}-${padded.slice(8, 12)}-${padded.slice(12, 16)}-${padded.slice(16, 20)}-${padded.slice(20)}`;
}

describe('trace collector proxy (configs/proxy.yaml) end to end', () => {
  const backend = new Backend();
  let proxy: Awaited<ReturnType<typeof startProxy>>;

  before(async () => {
    const endpoint = await backend.start();
    proxy = await startProxy({
      SERVICE_ENDPOINT: endpoint,
      SERVICE_API_KEY: 'default-key',
      SERVICE_PROJECT: 'travel',
      FLUSH_INTERVAL_MS: '50',
      DATA_DIR: tempDir(),
    });
  });

  after(async () => {
    proxy?.child.kill('SIGKILL');
    await backend.close();
  });

  it('translates, orders and uploads traces from the OTLP protobuf and JSON exporters, per tenant', async () => {
    const url = `http://127.0.0.1:${proxy.port}/v1/traces`;
    const first = await sendAgentTrace(new ProtoExporter({ url, compression: 'gzip' as never }), 'trip-planner');
    const second = await sendAgentTrace(
      new JsonExporter({ url, headers: { 'X-API-Key': 'tenant-b', 'Service-Project': 'bookings' } }),
      'booker',
    );
    await eventually(() => backend.runs().length >= 6, { message: 'six runs at the backend' });

    const runs = backend.runs();
    assert.equal(runs.length, 6, 'each span arrives exactly once');
    const byName = (name: string) => runs.find((run) => run.name === name)!;

    const planner = byName('trip-planner');
    const plannerId = uuidOf(first.traceId);
    assert.equal(planner.id, plannerId);
    assert.equal(planner.trace_id, plannerId);
    assert.equal(planner.parent_run_id, undefined);
    assert.equal(planner.run_type, 'chain');
    assert.equal(planner.session_name, 'travel');
    assert.equal(planner.api_key, 'default-key');

    const chats = runs.filter((run) => run.name === 'chat gpt-4o');
    const chat = chats.find((run) => run.trace_id === plannerId)!;
    assert.equal(chat.run_type, 'llm');
    assert.equal(chat.parent_run_id, plannerId);
    assert.deepEqual(chat.inputs, { messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    assert.deepEqual((chat.outputs as Record<string, unknown>).usage_metadata, {
      input_tokens: 12,
      output_tokens: 3,
      total_tokens: 15,
    });
    const metadata = (chat.extra as { metadata: Record<string, unknown> }).metadata;
    assert.equal(metadata.ls_provider, 'openai');
    assert.equal(metadata.ls_model_name, 'gpt-4o');
    assert.equal(chat.status, 'success');
    assert.match(String(chat.dotted_order), new RegExp(`^\\d{8}T\\d{12}Z${plannerId}\\.\\d{8}T\\d{12}Z${chat.id}$`));
    assert.equal(
      runs.find((run) => run.name === 'execute_tool get_weather' && run.trace_id === plannerId)!.run_type,
      'tool',
    );

    // The second trace came with its own key and project header: uploaded with that key only.
    const bookerId = uuidOf(second.traceId);
    const tenantB = runs.filter((run) => run.trace_id === bookerId);
    assert.equal(tenantB.length, 3);
    assert.ok(tenantB.every((run) => run.api_key === 'tenant-b' && run.session_name === 'bookings'));
    for (const upload of backend.uploads) {
      assert.equal(
        new Set(Object.values(upload.runs).map((run) => run.session_name === 'bookings')).size,
        1,
        'no upload mixes tenants',
      );
    }
  });

  it('answers 400 with a google.rpc.Status body for a malformed request and keeps serving', async () => {
    const response = await fetch(`http://127.0.0.1:${proxy.port}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"resourceSpans": [',
    });
    assert.equal(response.status, 400);
    const status = (await response.json()) as { code: number; message: string };
    assert.equal(typeof status.message, 'string');
    assert.ok(status.message.length > 0);
    const ready = await fetch(`http://127.0.0.1:${proxy.port}/ready`);
    assert.equal(ready.status, 200);
  });

  it("uploads the collector documentation's own example request as the expected run", async () => {
    // The request of the backend's collector-proxy guide: base64 ids, bare-number nanoseconds
    // (beyond 2^53), GenAI prompt and completion as JSON text, token counts as intValue.
    const body =
      '{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"test-service"}}]},' +
      '"scopeSpans":[{"scope":{"name":"example-scope","version":"1.0.0"},"spans":[{"traceId":"T6nh/mMkIONaoHewS9UWIw==",' +
      '"spanId":"0tEqJwCpvU0=","name":"parent-span","kind":"SPAN_KIND_INTERNAL","startTimeUnixNano":1747675155185223936,' +
      '"endTimeUnixNano":1747675156185223936,"attributes":[' +
      '{"key":"gen_ai.prompt","value":{"stringValue":"{\\"text\\":\\"Hello, world!\\"}"}},' +
      '{"key":"gen_ai.usage.input_tokens","value":{"intValue":"5"}},' +
      '{"key":"gen_ai.completion","value":{"stringValue":"{\\"text\\":\\"Hi there!\\"}"}},' +
      '{"key":"gen_ai.usage.output_tokens","value":{"intValue":"3"}}],' +
      '"droppedAttributesCount":0,"events":[],"links":[],"status":{}}]}]}]}';
    const response = await fetch(`http://127.0.0.1:${proxy.port}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'doc-key' },
      body,
    });
    assert.equal(response.status, 200);
    const id = '4fa9e1fe-6324-20e3-5aa0-77b04bd51623';
    await eventually(() => backend.runs().some((run) => run.id === id), { message: 'the example run at the backend' });
    const run = backend.runs().find((candidate) => candidate.id === id)!;
    assert.equal(run.trace_id, id);
    assert.equal(run.name, 'parent-span');
    assert.equal(run.api_key, 'doc-key');
    assert.equal(run.start_time, '2025-05-19T17:19:15.185223936Z');
    assert.equal(run.end_time, '2025-05-19T17:19:16.185223936Z');
    assert.deepEqual(run.inputs, { text: 'Hello, world!' });
    assert.deepEqual(run.outputs, {
      text: 'Hi there!',
      usage_metadata: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
    });
    assert.match(String(run.dotted_order), new RegExp(`^20250519T171915185223Z${id}$`));
    const metadata = (run.extra as { metadata: Record<string, unknown> }).metadata;
    assert.equal(metadata.OTEL_TRACE_ID, '4fa9e1fe632420e35aa077b04bd51623');
    assert.equal(metadata.OTEL_SPAN_ID, 'd2d12a2700a9bd4d');
  });

  it('stops on SIGTERM with exit code 0', async () => {
    proxy.child.kill('SIGTERM');
    assert.equal(await proxy.exited, 0, proxy.stderr());
  });
});

describe('trace collector proxy without a default key', () => {
  it('answers 401 to a request without X-API-Key', async () => {
    const backend = new Backend();
    const proxy = await startProxy({
      SERVICE_ENDPOINT: await backend.start(),
      SERVICE_API_KEY: '',
      DATA_DIR: tempDir(),
    });
    try {
      const response = await fetch(`http://127.0.0.1:${proxy.port}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"resourceSpans":[]}',
      });
      assert.equal(response.status, 401);
      assert.match(((await response.json()) as { message: string }).message, /X-API-Key/i);
    } finally {
      proxy.child.kill('SIGTERM');
      await proxy.exited;
      await backend.close();
    }
  });
});
