// `/mcp` through `@modelcontextprotocol/sdk`'s own client over Streamable HTTP: list the tools (one
// per assistant, schemas from the graphs), call one (final answer as text, final state as
// structured content), errors (a failing graph as a tool error, an unknown tool as a protocol
// error), the stateless HTTP rules (Accept, parse errors, 405s, the protocol version header), API
// keys and a custom auth handler (401 with a JSON body), `mcp.enabled: false` and langgraph.json's
// `http.disable_mcp`.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type {
  CallToolRequest,
  CallToolResult,
  InitializeResult,
  ListToolsResult,
} from '@modelcontextprotocol/sdk/types.js';
import { EXAMPLES_LANGGRAPH_JSON, startTestServer, useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import { asObject, asRpcAnswer, messagesOf, rpcErrorOf, rpcResultOf } from './testing/types.ts';
import type { ErrorBody } from './testing/types.ts';

const CRONS_AUTH = fileURLToPath(new URL('./testdata/auth/langgraph-crons.json', import.meta.url));

async function connect(url: string, headers: Record<string, string> = {}): Promise<McpClient> {
  const client = new McpClient({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

/**
 * Calls a tool; its answer in the current shape (the SDK's return type also allows the pre-2024
 * `toolResult` one), checked against the SDK's schema.
 */
async function callTool(client: McpClient, params: CallToolRequest['params']): Promise<CallToolResult> {
  return CallToolResultSchema.parse(await client.callTool(params));
}

/** The text of a tool call's first content item; fails the test when it is not text. */
function firstText(result: CallToolResult): string {
  const [first] = result.content;
  assert.ok(first?.type === 'text', `the first content is not text: ${JSON.stringify(result.content)}`);
  return first.text;
}

/** A langgraph.json in a temporary folder serving the example chat graph as `agent`, plus `http`. */
function langgraphJson(http: Record<string, unknown>): { file: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'agent-api-mcp-'));
  const file = join(dir, 'langgraph.json');
  const chat = join(dirname(EXAMPLES_LANGGRAPH_JSON), 'chat.ts');
  writeFileSync(file, JSON.stringify({ graphs: { agent: `${chat}:graph` }, http }));
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('agent_api MCP endpoint', () => {
  let server: TestServer;
  useTestServer((started) => {
    server = started;
  });

  it('lists one tool per assistant and calls one', async () => {
    const created = await server.client.assistants.create({
      graphId: 'agent',
      name: 'support bot',
      description: 'Answers support questions.',
    });
    const mcp = await connect(server.url);
    try {
      const { tools } = await mcp.listTools();
      const names = tools.map((tool) => tool.name);
      for (const graph of ['agent', 'chat', 'tools', 'sleep', 'error']) assert.ok(names.includes(graph), graph);
      const support = tools.find((tool) => tool.name === 'support_bot')!;
      assert.equal(support.description, 'Answers support questions.');
      assert.equal(support.inputSchema.type, 'object');
      const messages = asObject(support.inputSchema.properties?.messages, 'messages schema');
      assert.equal(messages.type, 'array');
      assert.deepEqual(asObject(messages.items, 'messages items schema').required, ['role', 'content']);
      assert.ok(support.inputSchema.required?.includes('messages'));
      const sleep = tools.find((tool) => tool.name === 'sleep')!;
      assert.ok(sleep.inputSchema.properties?.delay_ms, 'a non-chat graph keeps its own input schema');

      const result = await callTool(mcp, {
        name: 'support_bot',
        arguments: { messages: [{ role: 'user', content: 'hello there' }] },
      });
      assert.notEqual(result.isError, true);
      assert.equal(result.content[0].type, 'text');
      assert.match(firstText(result), /hello there/);
      assert.equal(messagesOf(result.structuredContent).length, 2);
      // Threadless: nothing is left behind.
      assert.deepEqual(await server.client.threads.search({ metadata: { assistant_id: created.assistant_id } }), []);
    } finally {
      await mcp.close();
    }
  });

  it('reports a failing run as a tool error and an unknown tool as a protocol error', async () => {
    const mcp = await connect(server.url);
    try {
      const failed = await callTool(mcp, { name: 'error', arguments: { message: 'kaput' } });
      assert.equal(failed.isError, true);
      assert.match(firstText(failed), /CustomError: kaput/);
      await assert.rejects(mcp.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool: no_such_tool/);
    } finally {
      await mcp.close();
    }
  });

  it('is stateless: no session id, GET and DELETE are 405, notifications 202', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    assert.equal(init.status, 200);
    assert.equal(init.headers.get('mcp-session-id'), null);
    const initialized = rpcResultOf(asRpcAnswer<InitializeResult>(await init.json()));
    assert.equal(initialized.protocolVersion, '2025-06-18');
    assert.deepEqual(initialized.capabilities.tools, { listChanged: false });
    const note = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    assert.equal(note.status, 202);
    assert.equal((await fetch(`${server.url}/mcp`)).status, 405);
    assert.equal((await fetch(`${server.url}/mcp`, { method: 'DELETE' })).status, 405);
  });

  it('serves a client that accepts JSON alone, and answers HTTP mistakes as JSON-RPC errors', async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body,
      });
    const list = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
    // Replies are always JSON, so accepting JSON is enough (as on the platform); no Accept is anything.
    for (const accept of ['application/json', '*/*', 'application/*;q=0.5']) {
      const answer = await post(list, { accept });
      assert.equal(answer.status, 200, accept);
      assert.ok(rpcResultOf(asRpcAnswer<ListToolsResult>(await answer.json())).tools.length > 0, accept);
    }
    const sseOnly = await post(list, { accept: 'text/event-stream' });
    assert.equal(sseOnly.status, 406);
    assert.match(sseOnly.headers.get('content-type') ?? '', /application\/json/);
    const refused = asRpcAnswer(await sseOnly.json());
    assert.equal(refused.jsonrpc, '2.0');
    assert.match(rpcErrorOf(refused).message, /Not Acceptable.*application\/json/);
    assert.equal((await post(list, { accept: 'application/json;q=0' })).status, 406);

    const malformed = await post('{"jsonrpc": "2.0", "id": 1,');
    assert.equal(malformed.status, 400);
    assert.deepEqual(rpcErrorOf(asRpcAnswer(await malformed.json())).code, -32700);
    const notRpc = await post(JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'ping' }));
    assert.equal(notRpc.status, 400);
    assert.equal(rpcErrorOf(asRpcAnswer(await notRpc.json())).code, -32600);
    const ping = await post(JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' }), {
      'mcp-protocol-version': '2025-06-18',
    });
    assert.deepEqual(await ping.json(), { jsonrpc: '2.0', id: 'p', result: {} });
    const unknownMethod = asRpcAnswer(
      await (await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'resources/list' }))).json(),
    );
    assert.equal(rpcErrorOf(unknownMethod).code, -32601);

    // The protocol version header: a version the server does not speak is a 400.
    const badVersion = await post(list, { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(badVersion.status, 400);
    assert.match(rpcErrorOf(asRpcAnswer(await badVersion.json())).message, /Unsupported protocol version: 1999-01-01/);
    // Every method but POST is 405, with Allow.
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      const answer = await fetch(`${server.url}/mcp/`, {
        method,
        ...(method === 'PUT' || method === 'PATCH'
          ? { headers: { 'content-type': 'application/json' }, body: '{}' }
          : {}),
      });
      assert.equal(answer.status, 405, method);
      assert.equal(answer.headers.get('allow'), 'POST', method);
    }

    // The SDK's client negotiates an older version it asks for, and pings.
    const old = new McpClient({ name: 'old', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`));
    await old.connect(transport);
    try {
      assert.deepEqual(await old.ping(), {});
      assert.ok(transport.protocolVersion, 'the negotiated version is sent on later requests');
    } finally {
      await old.close();
    }
  });

  it('refuses a missing or wrong API key with 401 and a JSON body, through the SDK client too', async () => {
    const keyed = await startTestServer({ auth: { api_keys: ['k1'] } });
    try {
      for (const key of [undefined, 'wrong']) {
        const answer = await fetch(`${keyed.url}/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(key ? { 'x-api-key': key } : {}),
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        assert.equal(answer.status, 401);
        assert.match(answer.headers.get('content-type') ?? '', /application\/json/);
        assert.match(((await answer.json()) as ErrorBody).message, /X-Api-Key/);
      }
      const error = await connect(keyed.url, { 'x-api-key': 'wrong' }).then(
        () => assert.fail('connected with a wrong key'),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof StreamableHTTPError || /401/.test(String(error)), String(error));
      assert.match(String((error as Error).message), /401|Unauthorized/);
    } finally {
      await keyed.stop();
    }
  });

  it('is gone when langgraph.json says http.disable_mcp, whatever mcp.enabled says', async () => {
    const config = langgraphJson({ disable_mcp: true });
    const off = await startTestServer({ langgraph_config: config.file, mcp: { enabled: true } });
    try {
      const answer = await fetch(`${off.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      assert.equal(answer.status, 404);
      await assert.rejects(connect(off.url), /404|Not Found/);
      const flags = asObject(asObject(await (await fetch(`${off.url}/info`)).json(), 'info').flags, 'flags');
      assert.equal(flags.mcp, false);
      assert.equal(flags.a2a, true, 'A2A has its own switch');
    } finally {
      await off.stop();
      config.remove();
    }
    // `false` (or no key) keeps the route; a value that is not a boolean stops the start.
    const on = langgraphJson({ disable_mcp: false });
    const served = await startTestServer({ langgraph_config: on.file });
    try {
      const mcp = await connect(served.url);
      assert.deepEqual(
        (await mcp.listTools()).tools.map((tool) => tool.name),
        ['agent'],
      );
      await mcp.close();
      const info = asObject(await (await fetch(`${served.url}/info`)).json(), 'info');
      assert.equal(asObject(info.flags, 'flags').mcp, true);
    } finally {
      await served.stop();
      on.remove();
    }
    const bad = langgraphJson({ disable_mcp: 'yes' });
    try {
      await assert.rejects(startTestServer({ langgraph_config: bad.file }), /http\.disable_mcp: must be true or false/);
    } finally {
      bad.remove();
    }
  });

  it('needs the API key when keys are set, and is gone with mcp.enabled: false', async () => {
    const keyed = await startTestServer({ auth: { api_keys: ['k1'] } });
    try {
      await assert.rejects(connect(keyed.url), /401|Unauthorized/);
      const mcp = await connect(keyed.url, { 'x-api-key': 'k1' });
      assert.ok((await mcp.listTools()).tools.length > 0);
      await mcp.close();
    } finally {
      await keyed.stop();
    }
    const off = await startTestServer({ mcp: { enabled: false } });
    try {
      const answer = await fetch(`${off.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(answer.status, 404);
    } finally {
      await off.stop();
    }
  });

  it('lists and runs only what the custom auth handler lets the caller see', async () => {
    const authed = await startTestServer({ langgraph_config: CRONS_AUTH });
    try {
      const alice = await connect(authed.url, { authorization: 'Bearer alice' });
      const bob = await connect(authed.url, { authorization: 'Bearer bob' });
      const aliceSdk = new (await import('@langchain/langgraph-sdk')).Client({
        apiUrl: authed.url,
        apiKey: null,
        defaultHeaders: { Authorization: 'Bearer alice' },
      });
      await aliceSdk.assistants.create({ graphId: 'agent', name: 'alice-helper' });
      assert.deepEqual(
        (await alice.listTools()).tools.map((tool) => tool.name),
        ['alice-helper'],
      );
      assert.deepEqual((await bob.listTools()).tools, []);
      await assert.rejects(bob.callTool({ name: 'alice-helper', arguments: {} }), /Unknown tool/);
      const answer = await callTool(alice, {
        name: 'alice-helper',
        arguments: { messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.match(firstText(answer), /hi/);
      await alice.close();
      await bob.close();
      await assert.rejects(connect(authed.url), /401|Unauthorized|credentials/);
    } finally {
      await authed.stop();
    }
  });
});
