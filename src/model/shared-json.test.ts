// Tests of shared JSON values: frozen, their text copied in exactly where JSON.stringify would write
// them, sized by that text, and the cache of parsed texts bounded.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { estimateJsonBytes } from './json-size.ts';
import { SharedJsonCache, jsonWithShared, shareJson, sharedJsonText } from './shared-json.ts';

describe('shareJson', () => {
  it('freezes the value all the way down and records its JSON text', () => {
    const tools = shareJson([{ name: 'search', parameters: { required: ['q'] } }]);
    assert.ok(Object.isFrozen(tools) && Object.isFrozen(tools[0]) && Object.isFrozen(tools[0]!.parameters.required));
    assert.equal(sharedJsonText(tools), JSON.stringify(tools));
    assert.throws(() => (tools[0]!.parameters.required as string[]).push('x'), TypeError);
    assert.equal(sharedJsonText({ name: 'search' }), undefined);
  });

  it('sizes a shared value by its text', () => {
    const resource = shareJson({ 'service.name': 'sales-assistant', 'service.version': '2.14.1' });
    const run = { id: 'a', extra: { resource } };
    assert.equal(estimateJsonBytes(run), JSON.stringify(run).length);
  });
});

describe('jsonWithShared', () => {
  const plainJson = fc.jsonValue();
  const sharedValue = fc.oneof(fc.array(plainJson), fc.dictionary(fc.string(), plainJson));

  it('writes what JSON.stringify writes, for any JSON value and depth', () => {
    fc.assert(
      fc.property(plainJson, fc.integer({ min: 0, max: 4 }), (value, depth) => {
        assert.equal(jsonWithShared(value, depth), JSON.stringify(value));
      }),
    );
  });

  it('copies shared values in as text, at any depth it walks', () => {
    fc.assert(
      fc.property(sharedValue, fc.dictionary(fc.string(), plainJson), (shared, rest) => {
        const value = { ...rest, extra: { metadata: { a: 1 }, params: { tools: shareJson(structuredClone(shared)) } } };
        assert.equal(jsonWithShared(value, 3), JSON.stringify(value));
      }),
    );
  });

  it('leaves out, and fails on, what JSON.stringify leaves out and fails on', () => {
    const value = {
      gone: undefined,
      fn: () => 1,
      kept: [undefined, () => 1],
      date: new Date(0),
      map: new Map([[1, 2]]),
    };
    assert.equal(jsonWithShared(value, 2), JSON.stringify(value));
    assert.equal(jsonWithShared(undefined, 2), undefined);
    assert.equal(jsonWithShared({}, 2), '{}');
    assert.throws(() => jsonWithShared({ big: 1n }, 2), TypeError);
    const cycle: Record<string, unknown> = {};
    cycle.self = { again: cycle };
    assert.throws(() => jsonWithShared(cycle, 2), TypeError);
  });
});

describe('SharedJsonCache', () => {
  const parseArray = (text: string) => {
    const parsed = JSON.parse(text) as unknown;
    return Array.isArray(parsed) ? parsed : undefined;
  };

  it('gives one shared value for a repeated text, and parses a new text anew', () => {
    const cache = new SharedJsonCache(4, 1000);
    const first = cache.get('[{"name":"search"}]', parseArray);
    assert.equal(cache.get('[{"name":"search"}]', parseArray), first);
    assert.equal(sharedJsonText(first!), '[{"name":"search"}]');
    assert.notEqual(cache.get('[{"name":"lookup"}]', parseArray), first);
    assert.equal(cache.get('{"not":"an array"}', parseArray), undefined);
    assert.equal(cache.get('{"not":"an array"}', parseArray), undefined);
  });

  it('stays within its bounds: too long a text is parsed every time, and a full cache starts over', () => {
    let parses = 0;
    const counting = (text: string) => {
      parses++;
      return parseArray(text);
    };
    const cache = new SharedJsonCache(2, 10);
    cache.get('[1,2,3,4,5,6]', counting);
    cache.get('[1,2,3,4,5,6]', counting);
    assert.equal(parses, 2);
    for (const text of ['[1]', '[2]', '[3]', '[1]']) cache.get(text, counting);
    assert.equal(parses, 6); // [1] was dropped when [3] found the cache full
  });
});

const parseObject = (text: string) => {
  const parsed = JSON.parse(text) as unknown;
  return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
};

describe('SharedJsonCache, found by length', () => {
  it('gives a repeated text the value parsed the first time, frozen and with its JSON text', () => {
    const cache = new SharedJsonCache(8, 1000);
    let parses = 0;
    const counting = (text: string) => (parses++, parseObject(text));
    const first = cache.get('[{"type":"text","content":"hi"}]', counting);
    // A new string of the same text, as a span decoded from another request brings it.
    const again = cache.get(Buffer.from('[{"type":"text","content":"hi"}]').toString('latin1'), counting);
    assert.equal(again, first);
    assert.equal(parses, 1);
    assert.ok(Object.isFrozen(first) && Object.isFrozen((first as object[])[0]));
    assert.equal(jsonWithShared({ value: first }, 1), '{"value":[{"type":"text","content":"hi"}]}');
  });

  it('tells apart texts of the same length, and remembers what is no value', () => {
    const cache = new SharedJsonCache(8, 1000);
    assert.deepEqual(cache.get('{"a":1}', parseObject), { a: 1 });
    assert.deepEqual(cache.get('{"b":2}', parseObject), { b: 2 });
    assert.deepEqual(cache.get('{"a":1}', parseObject), { a: 1 });
    let parses = 0;
    const nothing = () => (parses++, undefined);
    assert.equal(cache.get('"text"', nothing), undefined);
    assert.equal(cache.get('"text"', nothing), undefined);
    assert.equal(parses, 1);
  });

  it('keeps four texts of one length, the latest ones, and starts over when full', () => {
    const cache = new SharedJsonCache(6, 1000);
    let parses = 0;
    const counting = (text: string) => (parses++, parseObject(text));
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
    const cache = new SharedJsonCache(8, 10);
    const long = '{"text":"a long text"}';
    const first = cache.get(long, parseObject);
    const again = cache.get(long, parseObject);
    assert.notEqual(first, again);
    assert.ok(!Object.isFrozen(first));
  });
});
