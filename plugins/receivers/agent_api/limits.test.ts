// Bad input is a client error, never a 500: bodies over max_body_bytes (413) or nested deeper
// than max_json_depth (422) with a readable JSON message and no ERROR log; every store namespace
// rule (422 naming the field); a body value of the wrong JSON type (422 naming the field, never
// converted), while query strings are still converted. Cancelling a run that has already ended
// changes nothing (202).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { jsonDepthExceeds } from './internal/http/json-body.ts';
import { startTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import type { LogRecord } from './testing/types.ts';

const ask = (content: string) => ({ messages: [{ role: 'user', content }] });
const nested = (depth: number, open = '{"a":', close = '}') => `${open.repeat(depth)}1${close.repeat(depth)}`;

async function send(server: TestServer, method: string, path: string, body?: string) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    text,
    json: text ? (JSON.parse(text) as { code?: string; message?: string }) : undefined,
  };
}

describe('jsonDepthExceeds', () => {
  it('counts objects and arrays, not brackets inside strings', () => {
    assert.equal(jsonDepthExceeds('{"a":[1,{"b":2}]}', 3), false);
    assert.equal(jsonDepthExceeds('{"a":[1,{"b":2}]}', 2), true);
    assert.equal(jsonDepthExceeds(JSON.stringify({ text: '[[[[[[{{{{{{ \\" [[[[' }), 1), false);
    assert.equal(jsonDepthExceeds(nested(100_000), 100), true);
    assert.equal(jsonDepthExceeds(nested(100), 100), false);
  });
});

describe('agent_api body limits', () => {
  let server: TestServer;
  const records: LogRecord[] = [];
  before(async () => {
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) },
    );
    server = await startTestServer({ max_body_bytes: 64 * 1024, max_json_depth: 100, logger } as never);
  });
  after(async () => {
    await server.stop();
  });

  it('answers 422 with a clear message for JSON nested deeper than max_json_depth, wherever it is', async () => {
    const thread = await server.client.threads.create();
    const cases: [string, string, string][] = [
      ['POST', '/threads', `{"metadata":${nested(10_000)}}`],
      ['POST', '/threads', `{"metadata":${nested(101)}}`],
      ['PATCH', `/threads/${thread.thread_id}`, `{"metadata":${nested(10_000, '[', ']')}}`],
      ['POST', `/threads/${thread.thread_id}/runs`, `{"assistant_id":"agent","input":${nested(5000)}}`],
      ['POST', '/assistants', `{"graph_id":"agent","context":${nested(5000)}}`],
      ['PUT', '/store/items', `{"namespace":["a"],"key":"k","value":${nested(5000)}}`],
      ['POST', '/threads/search', `{"metadata":${nested(5000)}}`],
    ];
    for (const [method, path, body] of cases) {
      const response = await send(server, method, path, body);
      assert.equal(response.status, 422, `${method} ${path}: ${response.text.slice(0, 200)}`);
      assert.equal(response.json!.code, 'TP_ERR_API_INVALID');
      assert.equal(
        response.json!.message,
        'body: JSON nested deeper than 100 levels of objects and arrays (max_json_depth)',
      );
    }
    // Right at the limit is fine.
    const deepest = await send(server, 'POST', '/threads', `{"metadata":${nested(99)}}`);
    assert.equal(deepest.status, 200, deepest.text.slice(0, 200));
    assert.equal(await server.client.runs.list(thread.thread_id).then((runs) => runs.length), 0);
    // The SDK shows the message.
    const deep: Record<string, unknown> = {};
    let cursor = deep;
    for (let level = 0; level < 200; level++) cursor = (cursor.a = {}) as Record<string, unknown>;
    await assert.rejects(server.client.threads.create({ metadata: deep }), /HTTP 422: .*nested deeper than 100 levels/);
  });

  it('answers 413 with a clear message for a body over max_body_bytes', async () => {
    const big = JSON.stringify({ metadata: { padding: 'x'.repeat(70 * 1024) } });
    const response = await send(server, 'POST', '/threads', big);
    assert.equal(response.status, 413);
    assert.equal(response.json!.code, 'FST_ERR_CTP_BODY_TOO_LARGE');
    assert.equal(response.json!.message, 'Request body is larger than the limit of 65536 bytes (max_body_bytes)');
    // Sent chunked, without a content-length, the limit still holds.
    const chunked = await fetch(`${server.url}/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          for (let part = 0; part < 20; part++)
            controller.enqueue(new TextEncoder().encode(part === 0 ? '{"metadata":{"p":"' : 'y'.repeat(8192)));
          controller.enqueue(new TextEncoder().encode('"}}'));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    assert.equal(chunked.status, 413);
    await chunked.body?.cancel();
  });

  it('answers 422 for every store namespace rule, naming the field', async () => {
    const cases: [string, string, unknown, RegExp][] = [
      ['PUT', '/store/items', { namespace: [], key: 'k', value: {} }, /^body\.namespace: must not be empty$/],
      [
        'PUT',
        '/store/items',
        { namespace: ['a', ''], key: 'k', value: {} },
        /^body\.namespace: namespace labels cannot be empty or contain periods, colons or NUL characters \(got ""\)$/,
      ],
      [
        'PUT',
        '/store/items',
        { namespace: ['a.b'], key: 'k', value: {} },
        /^body\.namespace: namespace labels cannot be empty or contain periods.*\(got "a\.b"\)$/,
      ],
      [
        'PUT',
        '/store/items',
        { namespace: ['a:b'], key: 'k', value: {} },
        /^body\.namespace: .*colons.*\(got "a:b"\)$/,
      ],
      [
        'PUT',
        '/store/items',
        { namespace: ['a\u0000b'], key: 'k', value: {} },
        /^body\.namespace: .*NUL characters \(got "a\\u0000b"\)$/,
      ],
      [
        'PUT',
        '/store/items',
        { namespace: [1], key: 'k', value: {} },
        /^body\.namespace: namespace labels must be strings \(got 1\)$/,
      ],
      [
        'PUT',
        '/store/items',
        { namespace: ['a', true], key: 'k', value: {} },
        /^body\.namespace: namespace labels must be strings \(got true\)$/,
      ],
      [
        'PUT',
        '/store/items',
        { namespace: [null], key: 'k', value: {} },
        /^body\.namespace: namespace labels must be strings \(got null\)$/,
      ],
      [
        'PUT',
        '/store/items',
        { namespace: [{}], key: 'k', value: {} },
        /^body\.namespace: namespace labels must be strings/,
      ],
      [
        'PUT',
        '/store/items',
        { namespace: ['langgraph', 'x'], key: 'k', value: {} },
        /^body\.namespace: the first label cannot be "langgraph" \(reserved by LangGraph\)$/,
      ],
      ['DELETE', '/store/items', { namespace: ['a.b'], key: 'k' }, /^body\.namespace: /],
      ['DELETE', '/store/items', { namespace: ['a\u0000'], key: 'k' }, /^body\.namespace: /],
      ['POST', '/store/items/search', { namespace_prefix: ['a.b'] }, /^body\.namespace_prefix: .*\(got "a\.b"\)$/],
      ['POST', '/store/items/search', { namespace_prefix: ['a\u0000b'] }, /^body\.namespace_prefix: /],
      ['POST', '/store/items/search', { namespace_prefix: [''] }, /^body\.namespace_prefix: /],
      [
        'POST',
        '/store/items/search',
        { namespace_prefix: [2] },
        /^body\.namespace_prefix: namespace labels must be strings/,
      ],
      ['POST', '/store/namespaces', { prefix: ['a.b'] }, /^body\.prefix: /],
      ['POST', '/store/namespaces', { suffix: ['a:b'] }, /^body\.suffix: /],
    ];
    for (const [method, path, body, message] of cases) {
      const response = await send(server, method, path, JSON.stringify(body));
      assert.equal(response.status, 422, `${method} ${path} ${JSON.stringify(body)}: ${response.text}`);
      assert.match(response.json!.message!, message, JSON.stringify(body));
    }
    for (const query of [
      'namespace=a..b&key=k',
      'namespace=a%00b&key=k',
      'namespace=a:b&key=k',
      'namespace=.a&key=k',
    ]) {
      const response = await send(server, 'GET', `/store/items?${query}`);
      assert.equal(response.status, 422, query);
      assert.match(response.json!.message!, /^querystring\.namespace: /);
    }
    // What the rules allow still works: reading under the reserved root, wildcards when listing.
    assert.equal(
      (
        await send(
          server,
          'PUT',
          '/store/items',
          JSON.stringify({ namespace: ['users', 'u1'], key: 'k', value: { v: 1 } }),
        )
      ).status,
      204,
    );
    assert.equal((await send(server, 'GET', '/store/items?namespace=langgraph&key=k')).status, 200);
    const listed = await send(server, 'POST', '/store/namespaces', JSON.stringify({ prefix: ['users', '*'] }));
    assert.deepEqual(listed.json, { namespaces: [['users', 'u1']] });
    const found = await server.client.store.searchItems(['users']);
    assert.equal(found.items.length, 1);
  });

  it('answers 422 naming the field for a body value of the wrong JSON type, and converts query strings', async () => {
    const thread = await server.client.threads.create();
    const runs = `/threads/${thread.thread_id}/runs`;
    const history = `/threads/${thread.thread_id}/history`;
    const cases: [string, unknown, RegExp][] = [
      [
        `${runs}/wait`,
        { assistant_id: 'agent', input: ask('x'), config: { tags: 'x' } },
        /^body\.config\.tags: must be /,
      ],
      [runs, { assistant_id: 'agent', input: ask('x'), config: { tags: 'x' } }, /^body\.config\.tags: must be /],
      [`${runs}/wait`, { assistant_id: 1, input: ask('x') }, /^body\.assistant_id: must be string$/],
      [runs, { assistant_id: 1, input: ask('x') }, /^body\.assistant_id: must be string$/],
      ['/threads/search', { limit: '2' }, /^body\.limit: must be integer/],
      [history, { limit: '2' }, /^body\.limit: must be integer/],
    ];
    for (const [path, body, message] of cases) {
      const response = await send(server, 'POST', path, JSON.stringify(body));
      assert.equal(response.status, 422, `POST ${path} ${JSON.stringify(body)}: ${response.text}`);
      assert.equal(response.json!.code, 'TP_ERR_API_INVALID');
      assert.match(response.json!.message!, message, `POST ${path} ${JSON.stringify(body)}`);
    }
    // The SDK shows the message.
    await assert.rejects(
      server.client.runs.wait(thread.thread_id, 'agent', { input: ask('x'), config: { tags: 'x' as never } }),
      /HTTP 422: .*body\.config\.tags: must be array/,
    );
    assert.equal((await server.client.runs.list(thread.thread_id)).length, 0, 'no run was created');

    // The same fields with their types are accepted, and a query string's numbers (text) are converted.
    await server.client.runs.wait(thread.thread_id, 'agent', { input: ask('one'), config: { tags: ['x'] } });
    await server.client.runs.wait(thread.thread_id, 'agent', { input: ask('two') });
    const checkpoints = (await send(server, 'GET', history)).json as unknown as unknown[];
    assert.ok(checkpoints.length > 2, `${checkpoints.length} checkpoints`);
    for (const [method, path, body, length] of [
      ['GET', `${history}?limit=2`, undefined, 2],
      ['POST', history, JSON.stringify({ limit: 2 }), 2],
      ['GET', `${runs}?limit=1&offset=1`, undefined, 1],
      ['POST', '/threads/search', JSON.stringify({ limit: 1 }), 1],
    ] as const) {
      const response = await send(server, method, path, body);
      assert.equal(response.status, 200, `${method} ${path}: ${response.text.slice(0, 200)}`);
      assert.equal((response.json as unknown as unknown[]).length, length, `${method} ${path}`);
    }
  });

  it('answers 202 to a cancel of a run that has already ended and leaves it as it was, as to one still pending', async () => {
    const thread = await server.client.threads.create();
    const finished = await server.client.runs.create(thread.thread_id, 'agent', { input: ask('done') });
    await server.client.runs.join(thread.thread_id, finished.run_id);
    const before = await server.client.runs.get(thread.thread_id, finished.run_id);
    const stateBefore = await server.client.threads.getState(thread.thread_id);
    for (const [query, status] of [
      ['', 202],
      ['?wait=1', 204],
      ['?wait=0&action=rollback', 202],
    ] as const) {
      const response = await send(
        server,
        'POST',
        `/threads/${thread.thread_id}/runs/${finished.run_id}/cancel${query}`,
      );
      assert.equal(response.status, status, query);
    }
    await server.client.runs.cancel(thread.thread_id, finished.run_id, true);
    assert.deepEqual(await server.client.runs.get(thread.thread_id, finished.run_id), before, 'the run is unchanged');
    assert.deepEqual(await server.client.threads.getState(thread.thread_id), stateBefore, 'and so is its thread');
    const pending = await server.client.runs.create(thread.thread_id, 'agent', {
      input: ask('later'),
      afterSeconds: 60,
    });
    assert.equal(
      (await send(server, 'POST', `/threads/${thread.thread_id}/runs/${pending.run_id}/cancel`)).status,
      202,
    );
    assert.equal((await server.client.runs.get(thread.thread_id, pending.run_id)).status, 'interrupted');
    assert.equal(
      (await send(server, 'POST', `/threads/${thread.thread_id}/runs/${pending.run_id}/cancel`)).status,
      202,
      'and once cancelled, a second cancel changes nothing',
    );
    assert.equal((await server.client.runs.get(thread.thread_id, pending.run_id)).status, 'interrupted');
  });

  it('logged no ERROR and no stack for any of these requests', () => {
    const errors = records.filter((record) => record.level >= 50);
    assert.deepEqual(errors, []);
    assert.ok(!records.some((record) => typeof record.err?.stack === 'string'), 'no stack traces in the log');
  });
});
