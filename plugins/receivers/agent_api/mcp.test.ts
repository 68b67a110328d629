// `/mcp` through `@modelcontextprotocol/sdk`'s own client over Streamable HTTP: list the tools (one
// per assistant, schemas from the graphs), call one (final answer as text, final state as
// structured content), errors (a failing graph as a tool error, an unknown tool as a protocol
// error), the stateless HTTP rules, API keys and a custom auth handler, and `mcp.enabled: false`.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

const CRONS_AUTH = fileURLToPath(new URL('./testdata/auth/langgraph-crons.json', import.meta.url));

async function connect(url: string, headers: Record<string, string> = {}): Promise<McpClient> {
  const client = new McpClient({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
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
      const messages = (support.inputSchema.properties as any).messages;
      assert.equal(messages.type, 'array');
      assert.deepEqual(messages.items.required, ['role', 'content']);
      assert.ok(support.inputSchema.required?.includes('messages'));
      const sleep = tools.find((tool) => tool.name === 'sleep')!;
      assert.ok((sleep.inputSchema.properties as any).delay_ms, 'a non-chat graph keeps its own input schema');

      const result = (await mcp.callTool({
        name: 'support_bot',
        arguments: { messages: [{ role: 'user', content: 'hello there' }] },
      })) as any;
      assert.notEqual(result.isError, true);
      assert.equal(result.content[0].type, 'text');
      assert.match(result.content[0].text, /hello there/);
      assert.equal(result.structuredContent.messages.length, 2);
      // Threadless: nothing is left behind.
      assert.deepEqual(await server.client.threads.search({ metadata: { assistant_id: created.assistant_id } }), []);
    } finally {
      await mcp.close();
    }
  });

  it('reports a failing run as a tool error and an unknown tool as a protocol error', async () => {
    const mcp = await connect(server.url);
    try {
      const failed = (await mcp.callTool({ name: 'error', arguments: { message: 'kaput' } })) as any;
      assert.equal(failed.isError, true);
      assert.match(failed.content[0].text, /CustomError: kaput/);
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
    const body = (await init.json()) as any;
    assert.equal(body.result.protocolVersion, '2025-06-18');
    assert.deepEqual(body.result.capabilities.tools, { listChanged: false });
    const note = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    assert.equal(note.status, 202);
    assert.equal((await fetch(`${server.url}/mcp`)).status, 405);
    assert.equal((await fetch(`${server.url}/mcp`, { method: 'DELETE' })).status, 405);
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
      const answer = (await alice.callTool({
        name: 'alice-helper',
        arguments: { messages: [{ role: 'user', content: 'hi' }] },
      })) as any;
      assert.match(answer.content[0].text, /hi/);
      await alice.close();
      await bob.close();
      await assert.rejects(connect(authed.url), /401|Unauthorized|credentials/);
    } finally {
      await authed.stop();
    }
  });
});
