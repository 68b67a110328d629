// LangGraph's own RemoteGraph client (which speaks this API through the SDK) against the server:
// invoke and stream a deployed graph, threadless and on a thread. (RemoteGraph brings its own SDK
// version, so it gets the URL rather than the test's client.)

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RemoteGraph } from '@langchain/langgraph/remote';
import { useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';
import type { MessagesValues } from './testing/types.ts';

describe('agent_api with RemoteGraph', () => {
  let server: TestServer;
  useTestServer((started) => {
    server = started;
  });

  it('invokes and streams a deployed graph', async () => {
    const remote = new RemoteGraph({ graphId: 'agent', url: server.url });
    const result = (await remote.invoke({ messages: [{ role: 'user', content: 'remote' }] })) as MessagesValues;
    assert.equal(result.messages.at(-1)!.content, 'You said: remote');
    const thread = await server.client.threads.create();
    const updates: unknown[] = [];
    for await (const chunk of await remote.stream(
      { messages: [{ role: 'user', content: 'streamed' }] },
      { configurable: { thread_id: thread.thread_id }, streamMode: 'updates' },
    )) {
      updates.push(chunk);
    }
    assert.deepEqual(
      updates.map((u) => Object.keys(u as object)[0]),
      ['call_model'],
    );
    const state = await remote.getState({ configurable: { thread_id: thread.thread_id } });
    assert.equal((state.values as MessagesValues).messages.length, 2);
  });
});
