// For tests: the store's comparison operators through the SDK's `store.searchItems` and real HTTP,
// on whichever backend the server runs (store.test.ts: SQLite, postgres.test.ts: PostgreSQL).

import assert from 'node:assert/strict';
import type { Client } from '@langchain/langgraph-sdk';
import type { ErrorBody } from './types.ts';

export async function checkStoreOperators(client: Client, url: string): Promise<void> {
  for (const [key, a] of [
    ['one', 1],
    ['two', 2],
    ['three', 3],
    ['text', '2'],
  ] as const)
    await client.store.putItem(['ops'], key, { a, kind: key === 'three' ? 'x' : 'y' });
  const keys = async (filter: Record<string, unknown>) =>
    (await client.store.searchItems(['ops'], { filter })).items.map((item) => item.key).sort();
  assert.deepEqual(await keys({ a: { $gt: 1 } }), ['three', 'two']);
  assert.deepEqual(await keys({ a: { $gte: 2 } }), ['three', 'two']);
  assert.deepEqual(await keys({ a: { $lt: 2 } }), ['one']);
  assert.deepEqual(await keys({ a: { $lte: 2 } }), ['one', 'two']);
  assert.deepEqual(await keys({ a: { $eq: 2 } }), ['two']);
  assert.deepEqual(await keys({ a: { $ne: 2 } }), ['one', 'text', 'three']);
  assert.deepEqual(await keys({ a: { $gt: '1' } }), ['text'], 'a string compares with strings');
  assert.deepEqual(await keys({ a: { $gt: 1, $lt: 3 } }), ['two']);
  assert.deepEqual(await keys({ a: { $gt: 1 }, kind: 'y' }), ['two']);
  assert.deepEqual(await keys({ a: { $in: [1, 3] } }), ['one', 'three']);
  const inOrder = async (page: { limit?: number; offset?: number }) =>
    (await client.store.searchItems(['ops'], { filter: { a: { $gte: 1 } }, ...page })).items.map((item) => item.key);
  const whole = await inOrder({});
  assert.equal(whole.length, 3);
  assert.deepEqual(await inOrder({ limit: 2, offset: 1 }), whole.slice(1), 'a page of the filtered items');
  assert.deepEqual(await keys({ a: 2 }), ['two'], 'equality as before');

  const refused = async (filter: unknown, message: RegExp) => {
    const response = await fetch(`${url}/store/items/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ namespace_prefix: ['ops'], filter }),
    });
    assert.equal(response.status, 422, JSON.stringify(filter));
    assert.match(((await response.json()) as ErrorBody).message, message);
  };
  await refused({ a: { $regex: '^t' } }, /body\.filter\.a: unknown operator "\$regex"/);
  await refused({ score: { $gt: true } }, /body\.filter\.score: \$gt needs a number or a string/);
  await refused({ tags: { $in: 'x' } }, /body\.filter\.tags: \$in needs an array/);
  await assert.rejects(client.store.searchItems(['ops'], { filter: { a: { $regex: 'x' } } }), /HTTP 422/);
}
