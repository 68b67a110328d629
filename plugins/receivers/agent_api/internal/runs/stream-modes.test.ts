import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AIMessageChunk, isBaseMessage, isBaseMessageChunk } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import type { StreamEvent as LangChainEvent } from '@langchain/core/tracers/log_stream';
import { StreamModeMapper } from './stream-modes.ts';

/**
 * A chunk as a graph that brings its own copy of `@langchain/core` streams it: the same fields and
 * methods, on a prototype chain that does not lead to this server's `BaseMessageChunk`.
 */
function fromAnotherCopy(chunk: AIMessageChunk): BaseMessage {
  const prototype: object = {};
  for (let link = Object.getPrototypeOf(chunk) as object | null; link && link !== Object.prototype;) {
    for (const key of Reflect.ownKeys(link))
      if (key !== 'constructor' && !Reflect.has(prototype, key))
        Object.defineProperty(prototype, key, Object.getOwnPropertyDescriptor(link, key)!);
    link = Object.getPrototypeOf(link) as object | null;
  }
  // What it concatenates is of its own copy's classes too.
  const concat = AIMessageChunk.prototype.concat;
  Object.defineProperty(prototype, 'concat', {
    value(this: AIMessageChunk, other: AIMessageChunk) {
      return fromAnotherCopy(concat.call(this, other));
    },
  });
  return Object.assign(Object.create(prototype) as BaseMessage, chunk);
}

function streamed(chunk: BaseMessage): LangChainEvent {
  return { event: 'on_chat_model_stream', name: 'model', run_id: 'model-run', tags: [], metadata: {}, data: { chunk } };
}

describe('StreamModeMapper messages', () => {
  for (const [label, make] of [
    ['this server’s classes', (chunk: AIMessageChunk): BaseMessage => chunk],
    ['another copy of @langchain/core', fromAnotherCopy],
  ] as const) {
    it(`accumulates a model's chunks into each messages/partial (${label})`, () => {
      const mapper = new StreamModeMapper(['messages'], 'root-run', false);
      const contents: unknown[] = [];
      for (const text of ['be', 'gi', 'n']) {
        const chunk = make(new AIMessageChunk({ content: text, id: 'message-1' }));
        assert.equal(isBaseMessage(chunk), true);
        for (const out of mapper.map(streamed(chunk)))
          if (out.event === 'messages/partial') contents.push((out.data as { content: unknown }[])[0]!.content);
      }
      assert.deepEqual(contents, ['be', 'begi', 'begin']);
    });
  }

  it('the stand-in for another copy is not a chunk to isBaseMessageChunk (what the test relies on)', () => {
    assert.equal(isBaseMessageChunk(fromAnotherCopy(new AIMessageChunk({ content: 'x' }))), false);
  });
});
