// Acknowledged means kept, for a third-party receiver built only on tracepipe's public helpers:
// `tracepipe` (the CLI, run from dist/) loads examples/ndjson-receiver as a plugin, its spans go
// to the `otlp` exporter, and the OTLP endpoint refuses every upload. Each request is answered
// 202, then the process is killed with SIGKILL. Restarted on the same journal with the endpoint
// back, it delivers every span of every acknowledged request, under the key it was sent with.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '../src/testkit/eventually.ts';
import { spawnGroup } from '../src/testkit/processes.ts';
import type { GroupProcess } from '../src/testkit/processes.ts';
import { tempDir, writeFile } from './helpers.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const plugin = join(root, 'examples/ndjson-receiver/index.ts');
const REQUESTS = 20;
const SPANS_PER_REQUEST = 5;

/** An OTLP/HTTP JSON endpoint: refuses with 503 until `accepting`, then records each span id and the key it came with. */
class OtlpEndpoint {
  accepting = false;
  refused = 0;
  readonly received = new Map<string, string | undefined>();
  private readonly server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (!this.accepting) {
        this.refused++;
        response.writeHead(503, { 'retry-after': '0' }).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: { scopeSpans: { spans: { spanId: string }[] }[] }[];
      };
      const apiKey = request.headers['x-api-key'] as string | undefined;
      for (const resourceSpans of body.resourceSpans)
        for (const scopeSpans of resourceSpans.scopeSpans)
          for (const span of scopeSpans.spans) this.received.set(span.spanId, apiKey);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** `tracepipe --config`, resolved once the receiver logs its address; `url` is its spans endpoint. */
async function startTracepipe(config: string): Promise<{ process: GroupProcess; url: string }> {
  const process = spawnGroup(globalThis.process.execPath, [join(root, 'bin/tracepipe.js'), '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let address: string | undefined;
  createInterface({ input: process.child.stdout }).on('line', (text) => {
    output += `${text}\n`;
    if (!text.includes('Receiving NDJSON spans.')) return;
    address = (JSON.parse(text) as { address: string }).address;
  });
  process.child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new AbortController();
  void process.exited.then((code) => exited.abort(new Error(`tracepipe exited during start-up (${code}): ${output}`)));
  await eventually(() => address !== undefined, {
    timeoutMs: 60_000,
    signal: exited.signal,
    message: () => `the ndjson receiver to listen: ${output}`,
  });
  return { process, url: `http://${address}/v1/spans` };
}

function requestBody(request: number): { body: string; spanIds: string[] } {
  const spanIds = Array.from({ length: SPANS_PER_REQUEST }, (_, index) =>
    (request * SPANS_PER_REQUEST + index + 1).toString(16).padStart(16, '0'),
  );
  const lines = spanIds.map((spanId) =>
    JSON.stringify({
      trace_id: (request + 1).toString(16).padStart(32, '0'),
      span_id: spanId,
      name: `step ${spanId}`,
      start_time_unix_nano: '1700000000000000000',
      end_time_unix_nano: '1700000001000000000',
    }),
  );
  return { body: lines.join('\n'), spanIds };
}

describe('examples/ndjson-receiver in a real process: kill -9 after the acknowledgement', () => {
  const endpoint = new OtlpEndpoint();
  const started: GroupProcess[] = [];
  let endpointUrl: string;
  before(async () => {
    endpointUrl = await endpoint.start();
  });
  after(async () => {
    await Promise.all(started.map((process) => process.stop('SIGKILL')));
    await endpoint.close();
  });

  it('delivers every span of every acknowledged request after a restart', async () => {
    const dir = tempDir('tp-ndjson-crash-');
    const config = writeFile(
      dir,
      'pipeline.yaml',
      `plugins: [${JSON.stringify(plugin)}]
receivers:
  ndjson:
    port: 0
    journal: { enabled: true, directory: ${JSON.stringify(join(dir, 'journal'))} }
exporters:
  otlp:
    endpoint: ${endpointUrl}
    encoding: json
    compression: none
    forward_tenant: true
    retry_on_failure: { max_retries: 1000, initial_backoff_ms: 50, max_backoff_ms: 200 }
    persistent_queue: { enabled: false }
service:
  pipelines:
    traces: { receivers: [ndjson], exporters: [otlp] }
`,
    );
    const first = await startTracepipe(config);
    started.push(first.process);
    const expected: string[] = [];
    for (let request = 0; request < REQUESTS; request++) {
      const { body, spanIds } = requestBody(request);
      const response = await fetch(first.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson', 'x-api-key': `tenant-${request % 2}` },
        body,
      });
      assert.equal(response.status, 202, await response.text());
      expected.push(...spanIds);
    }
    // The exporter has tried (and been refused), so the spans were in its memory queue when killed.
    await eventually(() => endpoint.refused > 0);
    await first.process.stop('SIGKILL');
    assert.equal(endpoint.received.size, 0, 'nothing was delivered before the kill');

    endpoint.accepting = true;
    const second = await startTracepipe(config);
    started.push(second.process);
    await eventually(
      () => {
        const missing = expected.filter((spanId) => !endpoint.received.has(spanId));
        assert.deepEqual(missing, [], `${missing.length} acknowledged spans not delivered`);
      },
      { timeoutMs: 60_000 },
    );
    for (const [index, spanId] of expected.entries()) {
      const request = Math.floor(index / SPANS_PER_REQUEST);
      assert.equal(endpoint.received.get(spanId), `tenant-${request % 2}`, `span ${spanId}'s key`);
    }
    assert.equal(await second.process.stop('SIGTERM'), 0);
  });
});
