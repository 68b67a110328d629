import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { v7 as langchainUuidV7 } from '@langchain/core/utils/uuid';
import { v7 as uuidV7 } from 'uuid';
import { installRandomPool } from './random-pool.ts';

const nodeGetRandomValues = globalThis.crypto.getRandomValues;
installRandomPool();
installRandomPool();

describe('installRandomPool', () => {
  it('replaces the global crypto.getRandomValues once', () => {
    assert.notEqual(globalThis.crypto.getRandomValues, nodeGetRandomValues);
    assert.equal(Object.keys(globalThis.crypto).includes('getRandomValues'), false);
  });

  it('fills the array it is given and returns it, never handing out the same bytes twice', () => {
    const seen = new Set<string>();
    // Several refills of the pool, with sizes that do not divide it.
    for (let index = 0; index < 2000; index++) {
      const array = new Uint8Array(index % 3 === 0 ? 16 : 13);
      assert.equal(crypto.getRandomValues(array), array);
      const hex = Buffer.from(array).toString('hex');
      assert.equal(seen.has(hex), false, `bytes repeated: ${hex}`);
      seen.add(hex);
    }
  });

  it('fills a view at an offset in a larger buffer, and nothing around it', () => {
    const buffer = new Uint8Array(48);
    const view = new Uint8Array(buffer.buffer, 16, 16);
    crypto.getRandomValues(view);
    assert.deepEqual([...buffer.subarray(0, 16)], new Array(16).fill(0));
    assert.deepEqual([...buffer.subarray(32)], new Array(16).fill(0));
    assert.notDeepEqual([...view], new Array(16).fill(0));
  });

  it('gives the bytes an even spread', () => {
    const counts = new Array<number>(256).fill(0);
    const array = new Uint8Array(16);
    for (let index = 0; index < 16_000; index++) for (const byte of crypto.getRandomValues(array)) counts[byte]!++;
    // 1,000 expected per value; a fixed or stuck pool would put most of them on few values.
    assert.ok(
      Math.min(...counts) > 700 && Math.max(...counts) < 1300,
      `counts ${Math.min(...counts)}..${Math.max(...counts)}`,
    );
  });

  it('leaves every other call to Node, with its checks', () => {
    const large = new Uint8Array(4096);
    crypto.getRandomValues(large);
    assert.ok(large.some((byte) => byte !== 0));
    const words = crypto.getRandomValues(new Uint32Array(8));
    assert.ok(words.some((word) => word !== 0));
    // Not an integer array: refused by Node (the types forbid it too).
    const floats = new Float32Array(4) as unknown as Uint8Array;
    assert.throws(() => crypto.getRandomValues(floats), { name: 'TypeMismatchError' });
    assert.throws(() => crypto.getRandomValues(new Uint8Array(65_537)), { name: 'QuotaExceededError' });
    const detached = crypto.getRandomValues;
    assert.throws(() => detached(new Uint8Array(16)), { code: 'ERR_INVALID_THIS' });
  });

  it('serves the ids LangChain draws (uuid v7, whose random bits come from getRandomValues)', () => {
    const ids = new Set<string>();
    for (let index = 0; index < 1000; index++) ids.add(langchainUuidV7()).add(uuidV7());
    assert.equal(ids.size, 2000);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
