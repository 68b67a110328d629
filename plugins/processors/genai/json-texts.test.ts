// Tests of the cache of repeated JSON texts (internal/json-texts.ts): a text seen before gives the
// same shared value, texts of one length are told apart, and its bounds hold.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonWithShared } from 'tracepipe/plugin';
import { JsonTextCache } from './internal/json-texts.ts';

const parse = (text: string) => {
  const parsed = JSON.parse(text) as unknown;
  return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
};

describe('JsonTextCache', () => {
  it('gives a repeated text the value parsed the first time, frozen and with its JSON text', () => {
    const cache = new JsonTextCache(8, 1000);
    let parses = 0;
    const counting = (text: string) => (parses++, parse(text));
    const first = cache.get('[{"type":"text","content":"hi"}]', counting);
    // A new string of the same text, as a span decoded from another request brings it.
    const again = cache.get(Buffer.from('[{"type":"text","content":"hi"}]').toString('latin1'), counting);
    assert.equal(again, first);
    assert.equal(parses, 1);
    assert.ok(Object.isFrozen(first) && Object.isFrozen((first as object[])[0]));
    assert.equal(jsonWithShared({ value: first }, 1), '{"value":[{"type":"text","content":"hi"}]}');
  });

  it('tells apart texts of the same length, and remembers what is no value', () => {
    const cache = new JsonTextCache(8, 1000);
    assert.deepEqual(cache.get('{"a":1}', parse), { a: 1 });
    assert.deepEqual(cache.get('{"b":2}', parse), { b: 2 });
    assert.deepEqual(cache.get('{"a":1}', parse), { a: 1 });
    let parses = 0;
    const nothing = () => (parses++, undefined);
    assert.equal(cache.get('"text"', nothing), undefined);
    assert.equal(cache.get('"text"', nothing), undefined);
    assert.equal(parses, 1);
  });

  it('keeps four texts of one length, the latest ones, and starts over when full', () => {
    const cache = new JsonTextCache(6, 1000);
    let parses = 0;
    const counting = (text: string) => (parses++, parse(text));
    for (const n of [1, 2, 3, 4, 5]) cache.get(`{"n":${n}}`, counting);
    assert.equal(parses, 5);
    cache.get('{"n":5}', counting);
    cache.get('{"n":2}', counting);
    assert.equal(parses, 5, 'the four latest texts of the length are kept');
    cache.get('{"n":1}', counting);
    assert.equal(parses, 6, 'the oldest was dropped');
    // Two more lengths: the sixth entry fills the cache, the seventh starts it over.
    cache.get('{"nn":1}', counting);
    cache.get('{"nnn":1}', counting);
    cache.get('{"nnnn":1}', counting);
    parses = 0;
    cache.get('{"n":5}', counting);
    assert.equal(parses, 1);
  });

  it('parses a text longer than its bound every time, and does not share the value', () => {
    const cache = new JsonTextCache(8, 10);
    const long = '{"text":"a long text"}';
    const first = cache.get(long, parse);
    const again = cache.get(long, parse);
    assert.notEqual(first, again);
    assert.ok(!Object.isFrozen(first));
  });
});
