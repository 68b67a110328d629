// No secrets at rest: request headers reach a run's `configurable` only through the deployment's
// `http.configurable_headers` allow/deny list, and by default nothing that looks like a
// credential does. Credentials are sent the ways clients send them — the SDK's `defaultHeaders`
// and raw HTTP — and then looked for everywhere the server could have put them: every run,
// thread, state, history and stream response, the webhook payload, and the bytes of every SQLite
// file (WAL included).

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@langchain/langgraph-sdk';
import { eventually } from 'tracepipe/testing';
import { HeaderFilter, parseConfigurableHeaders } from './internal/api/configurable-headers.ts';
import { EXAMPLES_LANGGRAPH_JSON, startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import { kwargsOf } from './testing/types.ts';

const ask = (content: string) => ({ messages: [{ role: 'user', content }] });

// Every value holds SECRET, so one search finds any of them.
const SDK_SECRETS: Record<string, string> = {
  'X-OpenAI-Api-Key': 'sk-openai-SECRET-01',
  'X-Auth-Token': 'auth-token-SECRET-02',
  'X-Access-Token': 'access-token-SECRET-03',
  'X-Amz-Security-Token': 'amz-token-SECRET-04',
  'X-Amz-Date': 'amz-date-SECRET-05',
  'X-Secret': 'plain-SECRET-06',
  'X-Api-Key': 'api-key-SECRET-07',
  Authorization: 'Bearer bearer-SECRET-08',
  Cookie: 'session=cookie-SECRET-09',
  'X-Db-Password': 'password-SECRET-10',
  'X-Session-Id': 'session-SECRET-11',
  'X-Client-Secret-Hash': 'hash-SECRET-12',
  'X-Tenant-Id': 'tenant-SECRET-13',
};
const RAW_SECRETS: Record<string, string> = {
  ...SDK_SECRETS,
  'Proxy-Authorization': 'Basic proxy-SECRET-14',
  'X-Service-Key': 'service-SECRET-15',
  'X-Refresh-Token': 'refresh-SECRET-16',
  'X-Credentials': 'credentials-SECRET-17',
};
const PUBLIC_HEADER = { 'X-User-Id': 'user-PUBLIC-1' };

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The files under `dir` whose bytes contain `text`. */
function filesContaining(dir: string, text: string): string[] {
  return filesUnder(dir).filter((file) => readFileSync(file).includes(Buffer.from(text, 'utf8')));
}

describe('configurable headers (unit)', () => {
  it('by default passes x-* and user-agent, but nothing that looks like a credential', () => {
    const filter = new HeaderFilter();
    for (const name of ['x-user-id', 'X-Configurable-Header', 'x-project', 'user-agent', 'x-request-id'])
      assert.equal(filter.passes(name), true, name);
    for (const name of [
      'authorization',
      'proxy-authorization',
      'cookie',
      'set-cookie',
      'x-api-key',
      'x-openai-api-key',
      'x-auth-token',
      'x-access-token',
      'x-amz-security-token',
      'x-amz-date',
      'x-secret',
      'x-db-password',
      'x-session-id',
      'x-authorization',
      'x-tenant-id',
      'x-service-key',
      'x-credentials',
      'x-signature',
      'content-type',
      'host',
    ]) {
      assert.equal(filter.passes(name), false, name);
    }
  });

  it('include/exclude: exclude wins; a credential passes only when include names it exactly', () => {
    const filter = new HeaderFilter({
      include: ['x-user-*', 'x-tenant-token', 'my-prefix-*'],
      exclude: ['x-user-internal', 'x-tenant-*'],
    });
    assert.equal(filter.passes('x-user-id'), true);
    assert.equal(filter.passes('my-prefix-trace'), true);
    assert.equal(filter.passes('x-user-internal'), false, 'excluded');
    assert.equal(filter.passes('x-tenant-token'), false, 'exclude wins over an exact include');
    assert.equal(filter.passes('x-user-token'), false, 'a credential matched only by a wildcard');
    assert.equal(filter.passes('x-other'), false, 'not included');
    assert.equal(filter.passes('user-agent'), false, 'include replaces the default');
    const optIn = new HeaderFilter({ include: ['x-tenant-token'] });
    assert.equal(optIn.passes('X-Tenant-Token'), true, 'named exactly (any case): the deliberate way to pass one');
    assert.deepEqual(optIn.toConfigurable({ 'x-tenant-token': 't', 'x-other': 'o', cookie: 'c' }), {
      'x-tenant-token': 't',
    });
  });

  it('reads langgraph.json spellings and reports malformed lists', () => {
    assert.deepEqual(parseConfigurableHeaders({ includes: ['x-a'], excludes: ['x-b'] }, 'h').config, {
      include: ['x-a'],
      exclude: ['x-b'],
    });
    assert.deepEqual(parseConfigurableHeaders({ include: ['x-a'] }, 'h').config, { include: ['x-a'] });
    assert.deepEqual(parseConfigurableHeaders(undefined, 'h'), { problems: [] });
    assert.match(parseConfigurableHeaders({ include: 'x-*' }, 'h').problems[0]!, /^h\.include: must be a list/);
    assert.match(parseConfigurableHeaders({ inclde: ['x'] }, 'h').problems[0]!, /^h\.inclde: unknown key/);
    assert.match(parseConfigurableHeaders(['x'], 'h').problems[0]!, /^h: must be an object/);
  });
});

describe('no credentials at rest, with the default header policy', () => {
  let server: TestServer;
  let stopped = false;
  const webhookBodies: string[] = [];
  const hook = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      webhookBodies.push(body);
      response.end();
    });
  });

  before(async () => {
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    server = await startTestServer({ webhooks: { allow: ['loopback'] } } as never);
  });
  after(async () => {
    await new Promise<void>((resolve) => hook.close(() => resolve()));
    if (!stopped) await server.stop();
  });

  it('keeps them out of runs, threads, state, history, streams, webhooks and every SQLite file', async () => {
    const webhook = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    const sdk = new Client({
      apiUrl: server.url,
      apiKey: null,
      defaultHeaders: { ...SDK_SECRETS, ...PUBLIC_HEADER },
      callerOptions: { maxRetries: 0 },
    });
    const thread = await sdk.threads.create();
    const threadId = thread.thread_id;
    const seen: string[] = [];
    seen.push(JSON.stringify(await sdk.runs.wait(threadId, 'agent', { input: ask('waited'), webhook })));
    const background = await sdk.runs.create(threadId, 'agent', { input: ask('background'), webhook });
    seen.push(JSON.stringify(background), JSON.stringify(await sdk.runs.join(threadId, background.run_id)));
    for await (const chunk of sdk.runs.stream(threadId, 'agent', {
      input: ask('streamed'),
      streamMode: ['values', 'updates', 'debug'],
    })) {
      seen.push(JSON.stringify(chunk));
    }
    seen.push(JSON.stringify(await sdk.runs.wait(null, 'agent', { input: ask('threadless'), webhook })));

    // Raw HTTP, with the headers the SDK does not send.
    const raw = await fetch(`${server.url}/threads/${threadId}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...RAW_SECRETS, ...PUBLIC_HEADER },
      body: JSON.stringify({ assistant_id: 'agent', input: ask('raw'), webhook }),
    });
    assert.equal(raw.status, 200);
    seen.push(await raw.text());
    const rawThreadless = await fetch(`${server.url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...RAW_SECRETS, ...PUBLIC_HEADER },
      body: JSON.stringify({ assistant_id: 'agent', input: ask('raw threadless'), on_completion: 'keep' }),
    });
    const kept = (await rawThreadless.json()) as { run_id: string; thread_id: string };
    await sdk.runs.join(kept.thread_id, kept.run_id);

    // Everything the API hands back about those threads and runs.
    const runs = await sdk.runs.list(threadId, { limit: 100 });
    assert.equal(runs.length, 4);
    for (const id of [threadId, kept.thread_id]) {
      for (const path of [
        `/threads/${id}`,
        `/threads/${id}/runs?limit=100`,
        `/threads/${id}/state`,
        `/threads/${id}/history?limit=100`,
      ]) {
        const response = await fetch(`${server.url}${path}`);
        assert.equal(response.status, 200, path);
        seen.push(await response.text());
      }
      const history = await fetch(`${server.url}/threads/${id}/history`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"limit": 100}',
      });
      seen.push(await history.text());
    }
    for (const run of runs) seen.push(JSON.stringify(await sdk.runs.get(threadId, run.run_id)));
    seen.push(JSON.stringify(await sdk.threads.search({ limit: 100 })));
    await eventually(() => assert.equal(webhookBodies.length, 4, 'four runs had a webhook'));
    seen.push(...webhookBodies);

    const everything = seen.join('\n');
    assert.doesNotMatch(everything, /SECRET/);
    // Headers that are not credentials still reach `configurable`, as graphs expect.
    for (const run of runs) {
      const configurable = kwargsOf(run).config.configurable;
      assert.equal(configurable['x-user-id'], 'user-PUBLIC-1');
      assert.equal(typeof configurable['user-agent'], 'string');
      for (const name of Object.keys(RAW_SECRETS)) assert.equal(configurable[name.toLowerCase()], undefined, name);
    }
    assert.match(webhookBodies[0]!, /user-PUBLIC-1/);

    // At rest: no byte of any secret in any file of the data directory, while running (WAL) and after a stop.
    const agentDir = join(server.dataDir, 'agent');
    const files = filesUnder(agentDir).map((file) => file.slice(agentDir.length + 1));
    assert.ok(files.includes('agent.sqlite') && files.includes('checkpoints.sqlite'), files.join(', '));
    assert.deepEqual(filesContaining(agentDir, 'SECRET'), []);
    assert.ok(filesContaining(agentDir, 'user-PUBLIC-1').length > 0, 'the search does find what was stored');
    await server.stop({ keepData: true });
    stopped = true;
    try {
      assert.deepEqual(filesContaining(agentDir, 'SECRET'), []);
      assert.ok(filesContaining(agentDir, 'user-PUBLIC-1').some((file) => file.endsWith('agent.sqlite')));
    } finally {
      rmSync(server.dataDir, { recursive: true, force: true });
    }
  });
});

describe('http.configurable_headers from langgraph.json', () => {
  let server: TestServer;
  let configDir: string;
  before(async () => {
    configDir = mkdtempSync(join(tmpdir(), 'agent-api-headers-'));
    const chat = join(dirname(EXAMPLES_LANGGRAPH_JSON), 'chat.ts');
    writeFileSync(
      join(configDir, 'langgraph.json'),
      JSON.stringify({
        graphs: { agent: `${chat}:graph` },
        http: { configurable_headers: { includes: ['x-user-*', 'x-tenant-token'], excludes: ['x-user-internal'] } },
      }),
    );
    server = await startTestServer({ langgraph_config: join(configDir, 'langgraph.json') });
  });
  after(async () => {
    await server.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  it('passes what include names, never what exclude names, and a credential only when named exactly', async () => {
    const sdk = new Client({
      apiUrl: server.url,
      apiKey: null,
      defaultHeaders: {
        'x-user-id': 'u1',
        'x-user-internal': 'i',
        'x-user-token': 't',
        'x-tenant-token': 'tt',
        'x-other': 'o',
      },
      callerOptions: { maxRetries: 0 },
    });
    const thread = await sdk.threads.create();
    await sdk.runs.wait(thread.thread_id, 'agent', { input: ask('hi') });
    const [run] = await sdk.runs.list(thread.thread_id);
    const configurable = kwargsOf(run).config.configurable;
    assert.equal(configurable['x-user-id'], 'u1');
    assert.equal(configurable['x-tenant-token'], 'tt');
    for (const name of ['x-user-internal', 'x-user-token', 'x-other', 'user-agent'])
      assert.equal(configurable[name], undefined, name);
  });

  it('refuses to start with a malformed configurable_headers', async () => {
    const bad = join(configDir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({
        graphs: { agent: `${join(dirname(EXAMPLES_LANGGRAPH_JSON), 'chat.ts')}:graph` },
        http: { configurable_headers: { include: 'x-*' } },
      }),
    );
    await assert.rejects(
      startTestServer({ langgraph_config: bad }),
      /http\.configurable_headers\.include: must be a list/,
    );
  });
});
