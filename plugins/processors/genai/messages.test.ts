// Tests of how normalised chat messages leave out absent fields (internal/messages.ts): they are
// copied without them rather than having them deleted, so the copy must keep every other field, in
// order, including one that parsed JSON names `__proto__`. And of indexed messages read from
// attributes grouped by index: they must be exactly what reading them key by key gives, whatever
// the keys (indices out of order, with holes, written as `Number` reads them but not plainly). And
// of attribute maps that share the layout of the lists with the same keys before them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { AnyValue } from 'tracepipe/plugin';
import { stringAttr } from 'tracepipe/testing';
import { AttributeMap, KeyList } from './internal/attributes.ts';
import { indexedMessages, indexedMessagesByKey, otelMessages, vercelMessages } from './internal/messages.ts';

describe('normalised messages', () => {
  it('leave out absent fields and keep the others in order', () => {
    const messages = otelMessages([
      { role: 'assistant', parts: [{ type: 'text', content: 'hi' }], finish_reason: 'stop' },
    ]);
    assert.deepEqual(messages, [{ role: 'assistant', content: 'hi', finish_reason: 'stop' }]);
    assert.deepEqual(Object.keys(messages![0]!), ['role', 'content', 'finish_reason']);
    assert.equal(JSON.stringify(messages), '[{"role":"assistant","content":"hi","finish_reason":"stop"}]');
  });

  it('keep a field named __proto__ from parsed JSON as data, without touching the prototype', () => {
    const parsed = JSON.parse('[{"role":"user","__proto__":{"polluted":true},"name":"n"}]') as unknown[];
    const messages = vercelMessages(parsed)!;
    // The message has no content, so it is rebuilt without that field.
    assert.equal(JSON.stringify(messages), '[{"role":"user","__proto__":{"polluted":true},"name":"n"}]');
    assert.equal(Object.getPrototypeOf(messages[0]), Object.prototype);
    assert.equal((messages[0] as Record<string, unknown>).polluted, undefined);
  });

  it('join text-only parts and keep mixed parts as parts, in order, with their own fields', () => {
    const otel = otelMessages([
      {
        role: 'tool',
        parts: [
          { type: 'text', content: 'a' },
          { type: 'tool_call_response', id: 'call_1', response: { hits: 2 } },
          { type: 'text', content: 'b' },
        ],
      },
      {
        role: 'user',
        parts: [
          { type: 'text', content: 'look' },
          { type: 'blob', mime_type: 'image/png', data: 'x' },
        ],
      },
      { role: 'assistant', parts: [{ type: 'tool_call', name: 'search', arguments: { q: 1 } }] },
    ]);
    assert.equal(
      JSON.stringify(otel),
      '[{"role":"tool","content":"a{\\"hits\\":2}b","tool_call_id":"call_1"},' +
        '{"role":"user","content":[{"type":"text","text":"look"},{"type":"blob","mime_type":"image/png","data":"x"}]},' +
        '{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"search","arguments":"{\\"q\\":1}"}}]}]',
    );
    const vercel = vercelMessages([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a', providerOptions: { x: 1 } },
          { type: 'text', text: 'b' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a', providerOptions: { x: 1 } },
          { type: 'image', image: 'https://x/y.png' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_1', output: 'done' },
          { type: 'file', data: 'z' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'search', args: {} }] },
    ]);
    assert.equal(
      JSON.stringify(vercel),
      '[{"role":"user","content":"ab"},' +
        '{"role":"user","content":[{"type":"text","text":"a","providerOptions":{"x":1}},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},' +
        '{"role":"tool","content":[{"type":"text","text":"done"},{"type":"file","data":"z"}],"tool_call_id":"call_1"},' +
        '{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{}"}}]}]',
    );
  });

  it('read from indexed attributes grouped by index, the same as read key by key', () => {
    const prefixes = ['gen_ai.prompt', 'gen_ai.completion', 'llm.input_messages', 'llm.output_messages'];
    const segment = fc.constantFrom(
      ...['0', '1', '2', '10', '01', '00', '', '-0', ' 1', '1e0', '0x1', '1a', 'x'],
      ...['message', 'role', 'content', 'contents', 'message_content', 'text', 'image', 'url', 'name'],
      ...['tool_call_id', 'finish_reason', 'tool_calls', 'tool_call', 'id', 'function', 'arguments'],
    );
    const key = fc
      .tuple(fc.constantFrom(...prefixes), fc.array(segment, { minLength: 1, maxLength: 7 }))
      .map(([prefix, segments]) => [prefix, ...segments].join('.'));
    const value = fc.oneof(
      fc.constantFrom('', 'user', 'hello', '{"a":1}').map((text): AnyValue => ({ type: 'string', value: text })),
      fc.integer().map((n): AnyValue => ({ type: 'int', value: BigInt(n) })),
      fc.constant<AnyValue>({ type: 'empty' }),
    );
    // Plain message fields, so that most cases have messages to compare, and anything else besides.
    const plain = fc
      .tuple(
        fc.constantFrom(...prefixes),
        fc.nat(3),
        fc.constantFrom('role', 'content', 'message.role', 'message.content', 'tool_calls.0.id', 'tool_calls.1.name'),
      )
      .map(([prefix, index, field]) => `${prefix}.${index}.${field}`);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(plain, key), value), { maxLength: 14 }), (entries) => {
        const attributes = new AttributeMap(entries.map(([name, v]) => ({ key: name, value: v })));
        for (const prefix of prefixes) {
          const grouped = indexedMessages(attributes, prefix);
          assert.deepEqual(grouped, indexedMessagesByKey(attributes, prefix));
          assert.equal(JSON.stringify(grouped), JSON.stringify(indexedMessagesByKey(attributes, prefix)));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('read by the index a key names, in order, OpenInference and Traceloop alike', () => {
    const attributes = new AttributeMap([
      stringAttr('llm.input_messages.1.message.role', 'user'),
      stringAttr('llm.input_messages.1.message.contents.0.message_content.text', 'look'),
      stringAttr('llm.input_messages.1.message.contents.1.message_content.image.image.url', 'https://x/y.png'),
      stringAttr('llm.input_messages.0.message.role', 'system'),
      stringAttr('llm.input_messages.0.message.content', 'Be brief.'),
      stringAttr('gen_ai.completion.0.role', 'assistant'),
      stringAttr('gen_ai.completion.0.tool_calls.0.name', 'search'),
      stringAttr('gen_ai.completion.0.tool_calls.0.arguments', '{"q":"x"}'),
      stringAttr('gen_ai.completion.0.tool_calls.0.id', 'call_1'),
    ]);
    assert.deepEqual(indexedMessages(attributes, 'llm.input_messages'), [
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
        ],
      },
    ]);
    assert.deepEqual(indexedMessages(attributes, 'gen_ai.completion'), [
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }],
      },
    ]);
  });
});

describe('attribute keys by prefix', () => {
  it('name each key once, where it first came, with the value it last had', () => {
    const attributes = new AttributeMap([
      stringAttr('gen_ai.prompt.1.role', 'user'),
      stringAttr('ai.settings.a', 'x'),
      stringAttr('gen_ai.prompt.0.role', 'system'),
      stringAttr('gen_ai.prompt.1.role', 'assistant'),
      stringAttr('gen_ai.prompt.1.content', 'hi'),
    ]);
    assert.deepEqual(attributes.keysWithPrefix('gen_ai.prompt.'), [
      'gen_ai.prompt.1.role',
      'gen_ai.prompt.0.role',
      'gen_ai.prompt.1.content',
    ]);
    assert.equal(attributes.hasKeyWithPrefix('ai.settings.'), true);
    assert.equal(attributes.hasKeyWithPrefix('ai.telemetry.'), false);
    assert.deepEqual(indexedMessages(attributes, 'gen_ai.prompt'), [
      { role: 'system' },
      { role: 'assistant', content: 'hi' },
    ]);
  });
});

describe('attribute maps of lists with the same keys', () => {
  const PREFERENCE = new KeyList(['c', 'd', 'a', 'ai.settings.x']);
  // Lists of one key sequence share a layout (internal/attributes.ts): each must still read its own
  // values, the last of a duplicate key, whatever lists came before it.
  it('read each list as a Map of it would, whichever layout it shares', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'gen_ai.prompt.0.role', 'gen_ai.prompt.1.role', 'ai.settings.x');
    const value = fc.string({ maxLength: 3 }).map((text): AnyValue => ({ type: 'string', value: text }));
    const list = fc.array(fc.record({ key, value }), { maxLength: 6 });
    fc.assert(
      fc.property(fc.array(list, { minLength: 1, maxLength: 8 }), (lists) => {
        const maps = lists.map((attributes) => new AttributeMap(attributes));
        lists.forEach((attributes, i) => {
          const expected = new Map<string, AnyValue>(attributes.map((attribute) => [attribute.key, attribute.value]));
          const map = maps[i]!;
          assert.deepEqual(map.keys, [...expected.keys()]);
          for (const name of ['a', 'b', 'c', 'gen_ai.prompt.0.role', 'gen_ai.prompt.1.role', 'ai.settings.x', 'd']) {
            assert.equal(map.has(name), expected.has(name));
            assert.equal(map.value(name), expected.get(name));
          }
          const first = PREFERENCE.keys
            .map((name) => expected.get(name))
            .map((found) => (found?.type === 'string' && found.value !== '' ? found.value : undefined))
            .find((text) => text !== undefined);
          assert.equal(map.firstString(PREFERENCE), first);
          assert.equal(
            map.hasAny(PREFERENCE),
            PREFERENCE.keys.some((name) => expected.has(name)),
          );
        });
      }),
      { numRuns: 2000 },
    );
  });

  it('name the keys under a namespace and what follows it, for each layout its own', () => {
    const call = (model: string) =>
      new AttributeMap([
        stringAttr('gen_ai.request.model', model),
        stringAttr('ai.settings.maxRetries', '2'),
        stringAttr('gen_ai.request.temperature', '0.2'),
      ]);
    const first = call('a').namespace('gen_ai.request.');
    assert.deepEqual(first, {
      keys: ['gen_ai.request.model', 'gen_ai.request.temperature'],
      names: ['model', 'temperature'],
    });
    assert.equal(call('b').namespace('gen_ai.request.'), first);
    const other = new AttributeMap([stringAttr('gen_ai.request.top_p', '1')]).namespace('gen_ai.request.');
    assert.deepEqual(other, { keys: ['gen_ai.request.top_p'], names: ['top_p'] });
    assert.deepEqual(call('c').namespace('langsmith.metadata.'), { keys: [], names: [] });
  });

  it('read indexed messages from their own values where the lists share a layout', () => {
    // Where each message's fields are is worked out once per layout; the values are each list's own.
    const call = (role: string, text: string, args?: string) =>
      new AttributeMap([
        stringAttr('gen_ai.prompt.0.role', role),
        stringAttr('gen_ai.prompt.0.content', text),
        stringAttr('gen_ai.prompt.0.tool_calls.0.arguments', args ?? ''),
      ]);
    assert.deepEqual(indexedMessages(call('user', 'a', '{"q":1}'), 'gen_ai.prompt'), [
      { role: 'user', content: 'a', tool_calls: [{ type: 'function', function: { arguments: '{"q":1}' } }] },
    ]);
    assert.deepEqual(indexedMessages(call('assistant', 'b'), 'gen_ai.prompt'), [
      { role: 'assistant', content: 'b', tool_calls: [{ type: 'function', function: { arguments: '' } }] },
    ]);
    assert.deepEqual(indexedMessages(call('', 'c'), 'gen_ai.prompt'), [
      { content: 'c', tool_calls: [{ type: 'function', function: { arguments: '' } }] },
    ]);
  });

  it('read lists of new strings with the same keys as the lists before them', () => {
    // Keys that are equal strings but not the same string (a decoder that made them anew).
    const first = new AttributeMap([stringAttr(['gen', 'ai'].join('_'), 'one'), stringAttr('x', '1')]);
    const second = new AttributeMap([stringAttr(['gen', 'ai'].join('_'), 'two'), stringAttr('x', '2')]);
    assert.equal(first.string('gen_ai'), 'one');
    assert.equal(second.string('gen_ai'), 'two');
    assert.equal(second.string('x'), '2');
  });
});
