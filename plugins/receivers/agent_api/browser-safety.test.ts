// Safe by default in the browser: real servers on loopback ports, spoken to with raw HTTP (to set
// `Host`, `Origin` and content types as browsers and attackers do) and with the SDK. A loopback
// server refuses DNS-rebinding `Host` names; without configured origins it sends no CORS headers;
// with them, a browser client's preflight for every method and header the SDK uses is allowed;
// state-changing bodies must be JSON; cross-site form posts are refused; API keys are checked on
// every route except the public ones; test-only routes exist only when configured.

import assert from 'node:assert/strict';
import { fetchAcceptingJson } from './testing/agent-wire.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Client } from '@langchain/langgraph-sdk';
import { ApiKeys, splitList } from './internal/auth/api-keys.ts';
import { hostName, isLoopbackName } from './internal/http/request-guard.ts';
import { startTestServer, useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import type { ErrorBody } from './testing/types.ts';
import { asObject, asString, kwargsOf } from './testing/types.ts';
import { spawnGroup } from 'tracepipe/testing';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: unknown;
}

/** One request with exactly these headers (fetch would not let a test set `Host`). */
function raw(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawAnswer> {
  const target = new URL(path, url);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method,
        path: target.pathname + target.search,
        // Asks for the JSON error body, so that each refusal's code can be checked.
        headers: {
          accept: 'application/json',
          ...headers,
          ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode!, headers: response.headers, body: text, json });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const corsHeaders = (answer: RawAnswer) =>
  Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'));
const sdk = (url: string, apiKey: string | null) =>
  new Client({ apiUrl: url, apiKey, callerOptions: { maxRetries: 0 } });

describe('host names: loopback and configured ones only', () => {
  it('recognises loopback names, with or without port, brackets, case or a trailing dot', () => {
    for (const name of [
      'localhost',
      'LOCALHOST:8123',
      'app.localhost',
      'a.b.localhost.:80',
      '127.0.0.1',
      '127.1.2.3:9',
      '[::1]:8123',
      '::1',
      '[::ffff:127.0.0.1]',
    ]) {
      assert.equal(isLoopbackName(name), true, name);
    }
    for (const name of [
      'evil.example',
      'localhost.evil.example',
      '127.0.0.1.evil.example',
      '0.0.0.0',
      '10.0.0.1',
      '[::2]',
      '128.0.0.1',
      'localhost-evil',
    ]) {
      assert.equal(isLoopbackName(name), false, name);
    }
    assert.equal(hostName('Agents.Example.:443'), 'agents.example');
  });

  it('reads key and origin lists from a list or one comma-separated string, and compares keys whole', () => {
    assert.deepEqual(splitList(' a , b,,c '), ['a', 'b', 'c']);
    assert.deepEqual(splitList(''), []);
    assert.deepEqual(splitList(['x', ' ']), ['x']);
    const keys = new ApiKeys(['first-key', 'second-key']);
    assert.equal(keys.accepts('first-key'), true);
    assert.equal(keys.accepts('second-key'), true);
    for (const wrong of ['first-ke', 'first-key ', 'second-keyx', '', undefined, ['first-key']])
      assert.equal(keys.accepts(wrong as never), false, String(wrong));
    assert.equal(new ApiKeys([]).enabled, false);
  });
});

describe('agent_api on loopback with the defaults', () => {
  let server: TestServer;
  useTestServer((started) => {
    server = started;
  });
  const port = () => new URL(server.url).port;

  it('refuses DNS-rebinding Host names on every route with a JSON 403, and answers loopback names', async () => {
    for (const path of ['/ok', '/info', '/ui/', '/threads/search', '/assistants/search']) {
      const method = path.endsWith('search') ? 'POST' : 'GET';
      const answer = await raw(
        server.url,
        method,
        path,
        { host: `evil.example:${port()}`, 'content-type': 'application/json' },
        method === 'POST' ? '{}' : undefined,
      );
      assert.equal(answer.status, 403, path);
      assert.equal((answer.json as ErrorBody).code, 'TP_ERR_API_HOST_NOT_ALLOWED');
      assert.match((answer.json as ErrorBody).message, /Host "evil\.example:\d+" is not allowed/);
    }
    for (const host of [
      `localhost:${port()}`,
      `127.0.0.1:${port()}`,
      `[::1]:${port()}`,
      `studio.localhost:${port()}`,
      `127.0.0.7:${port()}`,
    ]) {
      assert.equal((await raw(server.url, 'GET', '/ok', { host })).status, 200, host);
    }
    for (const host of [`localhost.evil.example:${port()}`, `127.0.0.1.nip.example:${port()}`]) {
      assert.equal((await raw(server.url, 'GET', '/ok', { host })).status, 403, host);
    }
  });

  it('sends no CORS headers, and answers a foreign preflight with none', async () => {
    const preflight = await raw(server.url, 'OPTIONS', '/threads', {
      host: `localhost:${port()}`,
      origin: 'https://evil.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    });
    assert.deepEqual(corsHeaders(preflight), []);
    assert.notEqual(preflight.status, 204);
    const read = await raw(server.url, 'GET', '/info', { host: `localhost:${port()}`, origin: 'https://evil.example' });
    assert.equal(read.status, 200);
    assert.deepEqual(corsHeaders(read), []);
  });

  it('refuses bodies that are not JSON with 415, so cross-site form posts never parse', async () => {
    const threadsBefore = await server.client.threads.count();
    const cases: [string, string, string][] = [
      ['/threads', 'text/plain', '{"metadata":{"x":1}}'],
      ['/threads', 'text/plain;charset=UTF-8', '{}'],
      ['/runs', 'application/x-www-form-urlencoded', 'assistant_id=agent'],
      ['/threads', 'multipart/form-data; boundary=x', '--x--'],
    ];
    for (const [path, type, body] of cases) {
      const answer = await raw(server.url, 'POST', path, { host: `localhost:${port()}`, 'content-type': type }, body);
      assert.equal(answer.status, 415, `${path} ${type}`);
      assert.equal((answer.json as ErrorBody).code, 'TP_ERR_API_UNSUPPORTED_MEDIA_TYPE');
      assert.match((answer.json as ErrorBody).message, /Content-Type: application\/json/);
    }
    const untyped = await raw(
      server.url,
      'PUT',
      '/store/items',
      { host: `localhost:${port()}` },
      '{"namespace":["a"],"key":"k","value":{}}',
    );
    assert.equal(untyped.status, 415);
    assert.match((untyped.json as ErrorBody).message, /no Content-Type/);
    assert.equal(await server.client.threads.count(), threadsBefore);
    // JSON with parameters is fine, and so is a POST without a body.
    const json = await raw(
      server.url,
      'POST',
      '/threads',
      { host: `localhost:${port()}`, 'content-type': 'application/json; charset=utf-8' },
      '{}',
    );
    assert.equal(json.status, 200);
    const empty = await raw(server.url, 'POST', '/threads', { host: `localhost:${port()}` });
    assert.equal(empty.status, 200);
  });

  it('refuses state-changing requests a browser marks as cross-site, even without a body', async () => {
    const thread = await server.client.threads.create();
    const run = await server.client.runs.create(thread.thread_id, 'sleep', { input: { delay_ms: 60_000, steps: 600 } });
    const attempts: Record<string, string>[] = [
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { origin: 'http://localhost:3000', 'sec-fetch-site': 'same-site' },
      // Browsers without Fetch Metadata: the Origin alone tells.
      { origin: 'https://evil.example' },
      { origin: 'null' },
    ];
    for (const headers of attempts) {
      const answer = await raw(server.url, 'POST', `/threads/${thread.thread_id}/runs/${run.run_id}/cancel`, {
        host: `localhost:${port()}`,
        ...headers,
      });
      assert.equal(answer.status, 403, JSON.stringify(headers));
      assert.equal((answer.json as ErrorBody).code, 'TP_ERR_API_CROSS_SITE');
    }
    assert.equal((await server.client.runs.get(thread.thread_id, run.run_id)).status, 'running');
    // The same request from the server's own page goes through.
    const own = await raw(server.url, 'POST', `/threads/${thread.thread_id}/runs/${run.run_id}/cancel?wait=1`, {
      host: `localhost:${port()}`,
      origin: `http://localhost:${port()}`,
      'sec-fetch-site': 'same-origin',
    });
    assert.equal(own.status, 204);
    assert.equal((await server.client.runs.get(thread.thread_id, run.run_id)).status, 'interrupted');
  });

  it('has no test-only routes: the measured attack on /internal/truncate finds nothing to call', async () => {
    await server.client.threads.create();
    const before = await server.client.threads.count();
    const attack = await raw(
      server.url,
      'POST',
      '/internal/truncate',
      { host: `localhost:${port()}`, origin: 'https://evil.example', 'content-type': 'text/plain' },
      '{"threads":true}',
    );
    assert.notEqual(attack.status, 200);
    const direct = await raw(
      server.url,
      'POST',
      '/internal/truncate',
      { host: `localhost:${port()}`, 'content-type': 'application/json' },
      '{"threads":true}',
    );
    assert.equal(direct.status, 404);
    assert.equal(await server.client.threads.count(), before);
  });
});

describe('agent_api with configured CORS origins and host names', () => {
  let server: TestServer;
  useTestServer(
    (started) => {
      server = started;
    },
    {
      cors: { allowed_origins: 'http://localhost:3000, https://chat.example' },
      allowed_hosts: 'agents.internal',
      test_routes: true,
    } as never,
  );
  const port = () => new URL(server.url).port;

  it('allows a preflight for PATCH, PUT and DELETE with the SDK headers from a configured origin, and no other origin', async () => {
    for (const method of ['PATCH', 'DELETE', 'PUT', 'POST']) {
      const preflight = await raw(server.url, 'OPTIONS', '/threads/00000000-0000-4000-8000-000000000000', {
        host: `localhost:${port()}`,
        origin: 'http://localhost:3000',
        'access-control-request-method': method,
        'access-control-request-headers': 'content-type,x-api-key,authorization,last-event-id',
      });
      assert.equal(preflight.status, 204, method);
      assert.equal(preflight.headers['access-control-allow-origin'], 'http://localhost:3000');
      assert.match(String(preflight.headers['access-control-allow-methods']), new RegExp(`\\b${method}\\b`));
      for (const header of ['content-type', 'x-api-key', 'authorization', 'last-event-id']) {
        assert.match(
          String(preflight.headers['access-control-allow-headers']).toLowerCase(),
          new RegExp(header),
          header,
        );
      }
    }
    const foreign = await raw(server.url, 'OPTIONS', '/threads', {
      host: `localhost:${port()}`,
      origin: 'https://evil.example',
      'access-control-request-method': 'PATCH',
    });
    assert.equal(foreign.headers['access-control-allow-origin'], undefined);
  });

  it('answers a configured origin with its CORS headers, and lets its state-changing requests through', async () => {
    const created = await raw(
      server.url,
      'POST',
      '/runs',
      {
        host: `localhost:${port()}`,
        origin: 'https://chat.example',
        'sec-fetch-site': 'cross-site',
        'content-type': 'application/json',
      },
      JSON.stringify({
        assistant_id: 'agent',
        input: { messages: [{ role: 'user', content: 'hi' }] },
        on_completion: 'keep',
      }),
    );
    assert.equal(created.status, 200);
    assert.equal(created.headers['access-control-allow-origin'], 'https://chat.example');
    assert.match(String(created.headers['access-control-expose-headers']), /content-location/);
    assert.match(String(created.headers['access-control-expose-headers']), /x-pagination-total/);
    const run = asObject(created.json);
    await server.client.runs.join(asString(run.thread_id), asString(run.run_id));
  });

  it('answers the configured host names as well as the loopback ones', async () => {
    assert.equal((await raw(server.url, 'GET', '/ok', { host: `agents.internal:${port()}` })).status, 200);
    assert.equal((await raw(server.url, 'GET', '/ok', { host: 'AGENTS.internal' })).status, 200);
    assert.equal((await raw(server.url, 'GET', '/ok', { host: `other.internal:${port()}` })).status, 403);
  });

  it('serves /internal/truncate when test_routes is on', async () => {
    await server.client.threads.create();
    const answer = await raw(
      server.url,
      'POST',
      '/internal/truncate',
      { host: `localhost:${port()}`, 'content-type': 'application/json' },
      '{"threads":true}',
    );
    assert.equal(answer.status, 200);
    assert.equal(await server.client.threads.count(), 0);
  });
});

describe('agent_api with API keys', () => {
  let server: TestServer;
  useTestServer(
    (started) => {
      server = started;
    },
    {
      auth: { api_keys: 'first-key,second-key' },
      cors: { allowed_origins: ['http://localhost:3000'] },
    } as never,
  );

  it('answers 401 (JSON) without a key or with a wrong one, and 200 with either right one through the SDK', async () => {
    await assert.rejects(sdk(server.url, null).assistants.search(), /HTTP 401: Missing or invalid X-Api-Key/);
    await assert.rejects(sdk(server.url, 'wrong-key').threads.create(), /HTTP 401/);
    await assert.rejects(sdk(server.url, 'first-key,second-key').threads.create(), /HTTP 401/);
    for (const key of ['first-key', 'second-key']) {
      const client = sdk(server.url, key);
      const thread = await client.threads.create();
      assert.equal((await client.threads.get(thread.thread_id)).thread_id, thread.thread_id);
      assert.ok((await client.assistants.search({ graphId: 'agent' })).length > 0);
    }
  });

  it('keeps /ok, /info, /live, /ready and the web interface files public, and everything else behind the key', async () => {
    for (const path of ['/ok', '/info', '/live', '/ready', '/ui/', '/ui/js/main.js', '/ui/vendor/preact.mjs']) {
      assert.equal((await fetchAcceptingJson(`${server.url}${path}`)).status, 200, path);
    }
    assert.equal((await fetchAcceptingJson(`${server.url}/`, { redirect: 'manual' })).status, 302);
    for (const path of [
      '/openapi.json',
      '/metrics',
      '/docs',
      '/docs/json',
      '/threads/00000000-0000-4000-8000-000000000000',
      '/no/such/route',
    ]) {
      const answer = await fetchAcceptingJson(`${server.url}${path}`);
      assert.equal(answer.status, 401, path);
      assert.equal(((await answer.json()) as ErrorBody).code, 'TP_ERR_API_UNAUTHORIZED');
    }
    for (const path of ['/openapi.json', '/metrics']) {
      assert.equal(
        (await fetchAcceptingJson(`${server.url}${path}`, { headers: { 'x-api-key': 'second-key' } })).status,
        200,
        path,
      );
    }
  });

  it('never lets a request say who the user is: `langgraph_auth_*` in a run config are dropped', async () => {
    const client = sdk(server.url, 'first-key');
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'hi' }] },
      config: { configurable: { langgraph_auth_user_id: 'admin', langgraph_auth_permissions: ['*'], other: 1 } },
    });
    const configurable = kwargsOf(run).config.configurable;
    assert.equal(configurable.langgraph_auth_user_id, undefined);
    assert.equal(configurable.langgraph_auth_permissions, undefined);
    assert.equal(configurable.other, 1);
    await client.runs.join(thread.thread_id, run.run_id);
  });

  it('lets a configured origin read a 401, so a browser client can ask for the key', async () => {
    const answer = await fetchAcceptingJson(`${server.url}/threads/search`, {
      method: 'POST',
      headers: { origin: 'http://localhost:3000', 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(answer.status, 401);
    assert.equal(answer.headers.get('access-control-allow-origin'), 'http://localhost:3000');
  });
});

describe('agent_api without authentication', () => {
  it('serves /metrics and /docs publicly', async () => {
    const server = await startTestServer();
    try {
      assert.equal((await fetchAcceptingJson(`${server.url}/metrics`)).status, 200);
      assert.equal((await fetchAcceptingJson(`${server.url}/docs`, { redirect: 'manual' })).status < 400, true);
      assert.equal((await fetchAcceptingJson(`${server.url}/openapi.json`)).status, 200);
    } finally {
      await server.stop();
    }
  });
});

describe('configs/local.yaml: AGENT_API_KEY and AGENT_API_CORS_ORIGINS', () => {
  it('requires one of the keys and allows the named origin when the variables are set', async () => {
    const repo = fileURLToPath(new URL('../../..', import.meta.url));
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-api-local-yaml-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      AGENT_API_PORT: '0',
      TRACE_EXPLORER_PORT: '0',
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      LANGSMITH_PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
    };
    Object.assign(env, { AGENT_API_KEY: 'local-one, local-two', AGENT_API_CORS_ORIGINS: 'http://localhost:3000' });
    delete env.AGENT_API_HOST;
    delete env.AGENT_API_ALLOWED_HOSTS;
    const server = spawnGroup(
      process.execPath,
      [join(repo, 'bin/tracepipe.js'), '--config', join(repo, 'configs/local.yaml')],
      { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const { child } = server;
    try {
      let output = '';
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const listening = await new Promise<{ port: number; auth: { api_keys: number } }>((resolve, reject) => {
        void server.exited.then((code) =>
          reject(new Error(`tracepipe exited with ${code} before listening:\n${output}`)),
        );
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const line = output.split('\n').find((candidate) => candidate.includes('Agent API server listening'));
          if (line) resolve(JSON.parse(line));
        });
      });
      assert.equal(listening.auth.api_keys, 2);
      const url = `http://127.0.0.1:${listening.port}`;
      await assert.rejects(sdk(url, null).threads.create(), /HTTP 401/);
      await assert.rejects(sdk(url, 'local-three').threads.create(), /HTTP 401/);
      const thread = await sdk(url, 'local-two').threads.create();
      assert.equal((await sdk(url, 'local-one').threads.get(thread.thread_id)).thread_id, thread.thread_id);
      const preflight = (origin: string) =>
        raw(url, 'OPTIONS', '/threads', {
          host: `localhost:${listening.port}`,
          origin,
          'access-control-request-method': 'DELETE',
          'access-control-request-headers': 'x-api-key',
        });
      assert.equal(
        (await preflight('http://localhost:3000')).headers['access-control-allow-origin'],
        'http://localhost:3000',
      );
      assert.equal((await preflight('https://evil.example')).headers['access-control-allow-origin'], undefined);
      assert.equal((await raw(url, 'GET', '/ok', { host: `rebound.example:${listening.port}` })).status, 403);
      assert.equal(await server.stop('SIGTERM'), 0);
    } finally {
      await server.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
