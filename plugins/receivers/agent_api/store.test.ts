// The store routes through the SDK's store client, the store as graphs see it, and persistence.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkStoreOperators } from './testing/store-operators.ts';
import { startTestServer } from './testing/test-server.ts';
import type { ErrorBody } from './testing/types.ts';

describe('agent_api store', () => {
  it('puts, gets, searches, lists, deletes, and keeps items across a restart', async () => {
    const first = await startTestServer();
    const { client } = first;
    assert.deepEqual((await client.store.searchItems(['users'])).items, []);
    await client.store.putItem(['users', 'alice'], 'profile', { name: 'Alice', plan: 'pro' });
    await client.store.putItem(['users', 'bob'], 'profile', { name: 'Bob', plan: 'free' });
    await client.store.putItem(['docs'], 'readme', { text: 'hi' });
    const item = await client.store.getItem(['users', 'alice'], 'profile');
    assert.deepEqual(item?.value, { name: 'Alice', plan: 'pro' });
    assert.deepEqual(item?.namespace, ['users', 'alice']);
    assert.ok(item?.createdAt);
    const all = await client.store.searchItems(['users']);
    assert.deepEqual(all.items.map((i) => i.namespace[1]).sort(), ['alice', 'bob']);
    const pro = await client.store.searchItems(['users'], { filter: { plan: 'pro' } });
    assert.deepEqual(
      pro.items.map((i) => i.value.name),
      ['Alice'],
    );
    const namespaces = await client.store.listNamespaces({ prefix: ['users'] });
    assert.deepEqual(namespaces.namespaces, [
      ['users', 'alice'],
      ['users', 'bob'],
    ]);
    assert.deepEqual((await client.store.listNamespaces({ maxDepth: 1 })).namespaces, [['docs'], ['users']]);
    await client.store.putItem(['users', 'alice'], 'profile', { name: 'Alice', plan: 'team' });
    const updated = await client.store.getItem(['users', 'alice'], 'profile');
    assert.equal(updated?.value.plan, 'team');
    await client.store.deleteItem(['users', 'bob'], 'profile');
    assert.equal(await client.store.getItem(['users', 'bob'], 'profile'), null);
    const bad = await fetch(`${first.url}/store/items`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ namespace: ['a.b'], key: 'k', value: {} }),
    });
    assert.equal(bad.status, 422);
    assert.match(
      ((await bad.json()) as ErrorBody).message,
      /body\.namespace: namespace labels cannot be empty or contain periods/,
    );
    await first.stop({ keepData: true });

    const second = await startTestServer({ dataDir: first.dataDir });
    try {
      assert.equal((await second.client.store.getItem(['users', 'alice'], 'profile'))?.value.plan, 'team');
    } finally {
      await second.stop();
    }
  });

  it('searches with comparison operators, and refuses an unknown operator with a 422 naming the key', async () => {
    const server = await startTestServer();
    try {
      await checkStoreOperators(server.client, server.url);
    } finally {
      await server.stop();
    }
  });
});
