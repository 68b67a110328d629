// Assistants through the real SDK: create with context, versions (update makes a new active
// version; fields it does not send keep their value, sent metadata is merged; set latest brings
// an older one back), search and count
// with `select`, delete, and the exact error bodies. System assistants, if_exists and the graph
// and schemas are in test/agent-api/assistants.acceptance.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Assistant, Client } from '@langchain/langgraph-sdk';
import { useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import type { ErrorBody } from './testing/types.ts';
import { asObjects, messagesOf } from './testing/types.ts';

const ask = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('agent_api assistants', () => {
  let server: TestServer;
  let client: Client;
  useTestServer((started) => {
    server = started;
    client = started.client;
  });

  it('an update keeps every field it does not send, and merges the metadata it sends', async () => {
    const created = await client.assistants.create({
      graphId: 'chat',
      name: 'Keeper',
      description: 'kept',
      config: { configurable: { model_name: 'gpt' } },
      context: { system_prompt: 'Stay.' },
      metadata: { team: 'a', tier: 1 },
    });
    const kept = {
      name: 'Keeper',
      description: 'kept',
      config: { configurable: { model_name: 'gpt' } },
      context: { system_prompt: 'Stay.' },
    };
    const renamed = await client.assistants.update(created.assistant_id, { name: 'Renamed' });
    assert.deepEqual(
      { name: renamed.name, description: renamed.description, config: renamed.config, context: renamed.context },
      { ...kept, name: 'Renamed' },
    );
    assert.deepEqual(renamed.metadata, { team: 'a', tier: 1 });
    const tagged = await client.assistants.update(created.assistant_id, { metadata: { tier: 2, region: 'eu' } });
    assert.deepEqual(tagged.metadata, { team: 'a', tier: 2, region: 'eu' });
    const reconfigured = await client.assistants.update(created.assistant_id, { config: { tags: ['x'] } });
    assert.deepEqual(reconfigured.config, { tags: ['x'] });
    assert.deepEqual(reconfigured.context, kept.context);
    assert.equal(reconfigured.description, 'kept');
    const read = await client.assistants.get(created.assistant_id);
    assert.equal(read.version, 4);
    assert.deepEqual(read.config, { tags: ['x'] });
    assert.equal(read.name, 'Renamed');
  });

  it('an assistant with context, updated to version 2, set back to version 1, then deleted', async () => {
    const created = await client.assistants.create({
      graphId: 'chat',
      name: 'Pirate',
      context: { model_name: 'local-echo', system_prompt: 'Talk like a pirate.' },
      metadata: { team: 'a' },
    });
    assert.equal(created.version, 1);
    assert.equal(created.name, 'Pirate');
    assert.deepEqual(created.context, { model_name: 'local-echo', system_prompt: 'Talk like a pirate.' });
    assert.match(created.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00$/);
    let reply = await client.runs.wait(null, created.assistant_id, { input: ask('hi') });
    assert.equal(messagesOf(reply).at(-1)?.content, '(Talk like a pirate.) You said: hi');

    // Update: a new version, made active; what it sends replaces (metadata: merges), the rest stays.
    const updated = await client.assistants.update(created.assistant_id, {
      context: { system_prompt: 'Be brief.' },
      metadata: { team: 'b' },
    });
    assert.equal(updated.version, 2);
    assert.deepEqual(updated.context, { system_prompt: 'Be brief.' });
    assert.deepEqual(updated.metadata, { team: 'b' });
    assert.equal(updated.name, 'Pirate');
    assert.equal((await client.assistants.get(created.assistant_id)).version, 2);
    reply = await client.runs.wait(null, created.assistant_id, { input: ask('hi') });
    assert.equal(messagesOf(reply).at(-1)?.content, '(Be brief.) You said: hi');

    const versions = await client.assistants.getVersions(created.assistant_id);
    assert.deepEqual(
      versions.map((v) => v.version),
      [2, 1],
    );
    assert.deepEqual(versions[1].context, created.context);
    assert.deepEqual(
      (await client.assistants.getVersions(created.assistant_id, { metadata: { team: 'a' } })).map((v) => v.version),
      [1],
    );
    assert.deepEqual(await client.assistants.getVersions(created.assistant_id, { offset: 5 }), []);

    // Set latest: version 1, with everything it was written with, is active again.
    const restored = await client.assistants.setLatest(created.assistant_id, 1);
    assert.equal(restored.version, 1);
    assert.deepEqual(restored.context, created.context);
    assert.deepEqual(restored.metadata, { team: 'a' });
    reply = await client.runs.wait(null, created.assistant_id, { input: ask('hi') });
    assert.equal(messagesOf(reply).at(-1)?.content, '(Talk like a pirate.) You said: hi');
    // Later updates continue the numbering.
    assert.equal((await client.assistants.update(created.assistant_id, { metadata: { team: 'b' } })).version, 3);
    await assert.rejects(client.assistants.setLatest(created.assistant_id, 9), /HTTP 404: .*no version 9/);

    // Delete removes the assistant and every version together.
    assert.deepEqual(await client.assistants.delete(created.assistant_id), [created.assistant_id] as never);
    await assert.rejects(client.assistants.get(created.assistant_id), /HTTP 404: .*not found/);
    await assert.rejects(client.assistants.getVersions(created.assistant_id), /HTTP 404/);
  });

  it('searches by graph, name and metadata with limit, offset and sort, and counts', async () => {
    const ids: string[] = [];
    for (const name of ['alpha one', 'beta two', 'Alpha three']) {
      ids.push(
        (await client.assistants.create({ graphId: 'sleep', name, metadata: { suite: 'search' } })).assistant_id,
      );
    }
    const all = await client.assistants.search({ metadata: { suite: 'search' } });
    assert.deepEqual(
      all.map((a) => a.assistant_id),
      [...ids].reverse(),
      'newest first by default',
    );
    const byName = await client.assistants.search({ metadata: { suite: 'search' }, sortBy: 'name', sortOrder: 'asc' });
    assert.deepEqual(
      byName.map((a) => a.name),
      ['Alpha three', 'alpha one', 'beta two'],
    );
    assert.deepEqual((await client.assistants.search({ name: 'ALPHA', metadata: { suite: 'search' } })).length, 2);
    const page = await client.assistants.search({
      metadata: { suite: 'search' },
      limit: 2,
      offset: 0,
      includePagination: true,
    });
    assert.equal(page.next, '2');
    assert.equal(await client.assistants.count({ metadata: { suite: 'search' } }), 3);
    assert.equal(await client.assistants.count({ graphId: 'sleep', metadata: { suite: 'search' } }), 3);
    const response = await fetch(`${server.url}/assistants/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { suite: 'search' }, limit: 1, offset: 1, select: ['assistant_id', 'name'] }),
    });
    assert.equal(response.headers.get('x-pagination-total'), '3');
    assert.equal(response.headers.get('x-pagination-next'), '2');
    const selected = asObjects(await response.json());
    assert.deepEqual(Object.keys(selected[0]!).sort(), ['assistant_id', 'name']);
  });

  it('rejects invalid bodies with 422 naming the field, and unknown graphs', async () => {
    await assert.rejects(
      client.assistants.create({ graphId: 'no_such_graph' }),
      /HTTP 422: .*graph_id.*no graph named 'no_such_graph'/,
    );
    const missing = await fetch(`${server.url}/assistants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    assert.equal(missing.status, 422);
    const body = (await missing.json()) as ErrorBody;
    assert.deepEqual(body, {
      statusCode: 422,
      error: 'Unprocessable Entity',
      code: 'TP_ERR_API_INVALID',
      message: 'body.graph_id: is required',
    });
    const badType = await fetch(`${server.url}/assistants/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ limit: 'many' }),
    });
    assert.equal(badType.status, 422);
    assert.match(((await badType.json()) as ErrorBody).message, /body\.limit: must be integer/);
    const badLatest = await fetch(`${server.url}/assistants/agent/latest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(badLatest.status, 422);
    assert.match(((await badLatest.json()) as ErrorBody).message, /body\.version: is required/);
    const malformed = await fetch(`${server.url}/assistants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"graph_id":',
    });
    assert.equal(malformed.status, 400);
    assert.match(((await malformed.json()) as ErrorBody).message, /not valid JSON/);
    // Unknown fields are ignored (the SDKs send some).
    const extra = await fetch(`${server.url}/assistants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ graph_id: 'chat', some_future_field: 1, name: null, config: null }),
    });
    assert.equal(extra.status, 200);
    assert.equal(((await extra.json()) as Assistant).name, 'Untitled');
    await assert.rejects(
      client.assistants.update('00000000-0000-4000-8000-000000000000', { context: {} }),
      /HTTP 404: Assistant not found$/,
    );
    await assert.rejects(client.assistants.delete('00000000-0000-4000-8000-000000000000'), /HTTP 404/);
  });
});
