// Tests of how normalised chat messages leave out absent fields (internal/messages.ts): they are
// copied without them rather than having them deleted, so the copy must keep every other field, in
// order, including one that parsed JSON names `__proto__`.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { otelMessages, vercelMessages } from './internal/messages.ts';

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
});
