// One set of HTTP guards (tracepipe/confighttp) on every HTTP server of a service: the `otlp` and
// `langsmith` receivers and the trace explorer, each on loopback, accept the same Host names —
// every loopback form and the configured `allowed_hosts` — and refuse the others with the same
// 403 body; unknown routes and refusals answer in the same `{statusCode, error, code?, message}`.
// (The agent server's guard is the same function: plugins/receivers/agent_api/browser-safety.test.ts.)

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startService } from './support/service.ts';
import type { Service } from '../src/pipeline/service.ts';
import { tempDir } from '../src/testkit/files.ts';

/** One GET with exactly this Host (fetch would not let a test set it), as a rebinding page's browser sends it. */
function get(port: number, path: string, host: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, headers: { host } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text || '{}') }));
    })
      .on('error', reject)
      .end();
  });
}

describe('HTTP guards shared by every server', () => {
  let service: Service;
  const ports = new Map<string, number>();

  before(async () => {
    const dir = tempDir();
    const store = join(dir, 'traces.db');
    const yaml = `
receivers:
  otlp: { port: 0, require_api_key: false, allowed_hosts: traces.internal }
  langsmith: { port: 0, require_api_key: false, allowed_hosts: [traces.internal] }
processors: { genai: {}, batch: {} }
exporters: { local: { path: ${store} } }
extensions:
  trace_explorer: { port: 0, path: ${store}, allowed_hosts: [traces.internal] }
service:
  extensions: [trace_explorer]
  pipelines: { traces: { receivers: [langsmith], processors: [batch], exporters: [local] }, traces/otlp: { receivers: [otlp], processors: [genai, batch], exporters: [local] } }
`;
    const started = await startService(yaml, dir);
    service = started.service;
    for (const id of ['otlp', 'langsmith', 'trace_explorer']) ports.set(id, Number(new URL(started.endpoint(id)).port));
  });
  after(() => service?.shutdown());

  it('every loopback form of Host and the configured names are accepted, by every server', async () => {
    for (const [id, port] of ports) {
      for (const host of [
        `localhost:${port}`,
        `127.0.0.1:${port}`,
        `127.0.0.2:${port}`,
        `studio.localhost:${port}`,
        `[::1]:${port}`,
        `[0:0:0:0:0:0:0:1]:${port}`,
        `[::ffff:127.0.0.1]:${port}`,
        `LOCALHOST.:${port}`,
        `traces.internal:${port}`,
        'Traces.Internal',
      ]) {
        const answer = await get(port, '/live', host);
        assert.equal(answer.status, 200, `${id} with Host ${host}: ${JSON.stringify(answer.body)}`);
      }
    }
  });

  it('any other Host is refused by every server with the same 403 body', async () => {
    for (const [id, port] of ports) {
      for (const host of ['evil.example', `evil.example:${port}`, `10.0.0.1:${port}`, 'localhost.evil.example']) {
        const answer = await get(port, '/live', host);
        assert.equal(answer.status, 403, `${id} with Host ${host}`);
        assert.deepEqual(Object.keys(answer.body), ['statusCode', 'error', 'code', 'message']);
        assert.equal(answer.body.statusCode, 403);
        assert.equal(answer.body.error, 'Forbidden');
        assert.equal(answer.body.code, 'TP_ERR_API_HOST_NOT_ALLOWED');
        assert.match(String(answer.body.message), new RegExp(`^Host "${host}" is not allowed: .*allowed_hosts`));
      }
    }
  });

  it('an unknown route answers 404 in the shared body (the explorer and the LangSmith ingest)', async () => {
    for (const id of ['langsmith', 'trace_explorer']) {
      const port = ports.get(id)!;
      const answer = await get(port, '/nowhere', `localhost:${port}`);
      assert.equal(answer.status, 404, id);
      assert.equal(answer.body.statusCode, 404);
      assert.equal(answer.body.error, 'Not Found');
      assert.match(String(answer.body.message), /GET \/nowhere/);
    }
  });
});
