// Bad input that only the graph library can judge — an unknown checkpoint namespace, an unknown
// checkpoint id, an update as a node the graph does not have — answers a 4xx with a JSON body
// naming the problem, on every state route, never a 500.

import assert from 'node:assert/strict';
import { fetchAcceptingJson } from './testing/agent-wire.ts';
import { describe, it } from 'node:test';
import { Annotation, MemorySaver, StateGraph } from '@langchain/langgraph';
import { classifyGraphInputError } from './internal/graphs/input-errors.ts';
import type { ErrorBody } from './testing/types.ts';
import { useTestServer } from './testing/test-server.ts';
import type { TestServer } from './testing/test-server.ts';

const UNKNOWN_CHECKPOINT = '1ef00000-0000-6000-8000-000000000000';

async function send(server: TestServer, method: string, path: string, body?: unknown) {
  const response = await fetchAcceptingJson(`${server.url}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as ErrorBody };
}

describe('agent_api: graph-library errors for bad input', () => {
  let server: TestServer;
  useTestServer((started) => {
    server = started;
  });

  async function threadWithState(): Promise<string> {
    const thread = await server.client.threads.create({ graphId: 'agent' });
    await server.client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'hi' }] },
    });
    return thread.thread_id;
  }

  it('answers 404 for an unknown checkpoint namespace on a state update (was a 500)', async () => {
    const threadId = await threadWithState();
    const update = await send(server, 'POST', `/threads/${threadId}/state`, {
      values: { messages: [] },
      checkpoint: { checkpoint_ns: 'nope' },
    });
    assert.equal(update.status, 404, JSON.stringify(update.body));
    assert.equal(update.body.code, 'TP_ERR_API_NOT_FOUND');
    assert.match(update.body.message, /Subgraph "nope" not found/);
    // The thread's state is untouched and the server goes on answering.
    const state = await server.client.threads.getState(threadId);
    assert.equal((state.values as { messages: unknown[] }).messages.length, 2);
  });

  it('answers 422 for an update as a node the graph does not have, on the thread and in supersteps', async () => {
    const threadId = await threadWithState();
    const asUnknownNode = await send(server, 'POST', `/threads/${threadId}/state`, {
      values: { messages: [] },
      as_node: 'no_such_node',
    });
    assert.equal(asUnknownNode.status, 422, JSON.stringify(asUnknownNode.body));
    assert.match(asUnknownNode.body.message, /as_node/);
    const supersteps = await send(server, 'POST', '/threads', {
      metadata: { graph_id: 'agent' },
      supersteps: [{ updates: [{ values: { messages: [] }, as_node: 'no_such_node' }] }],
    });
    assert.equal(supersteps.status, 422, JSON.stringify(supersteps.body));
  });

  it('answers 404 for an unknown checkpoint id, with or without checkpoints', async () => {
    const bare = await server.client.threads.create();
    const withoutGraph = await send(server, 'GET', `/threads/${bare.thread_id}/state/${UNKNOWN_CHECKPOINT}`);
    assert.equal(withoutGraph.status, 404, JSON.stringify(withoutGraph.body));
    assert.match(withoutGraph.body.message, new RegExp(`Checkpoint ${UNKNOWN_CHECKPOINT} not found`));
    const atCheckpoint = await send(server, 'POST', `/threads/${bare.thread_id}/state/checkpoint`, {
      checkpoint: { checkpoint_id: UNKNOWN_CHECKPOINT },
    });
    assert.equal(atCheckpoint.status, 404, JSON.stringify(atCheckpoint.body));

    const graphThread = await server.client.threads.create({ graphId: 'agent' });
    const noCheckpoints = await send(server, 'GET', `/threads/${graphThread.thread_id}/state/${UNKNOWN_CHECKPOINT}`);
    assert.equal(noCheckpoints.status, 404, JSON.stringify(noCheckpoints.body));
    const threadId = await threadWithState();
    const withCheckpoints = await send(server, 'GET', `/threads/${threadId}/state/${UNKNOWN_CHECKPOINT}`);
    assert.equal(withCheckpoints.status, 404, JSON.stringify(withCheckpoints.body));
  });
});

describe('classifyGraphInputError, against the installed graph library', () => {
  const State = Annotation.Root({ n: Annotation<number> });
  const graph = new StateGraph(State)
    .addNode('step', () => ({ n: 1 }))
    .addEdge('__start__', 'step')
    .compile({ checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: 't' } };

  async function thrownBy(action: () => Promise<unknown>): Promise<unknown> {
    try {
      await action();
    } catch (error) {
      return error;
    }
    assert.fail('expected the library to throw');
  }

  it('recognises each error the library throws for bad input', async () => {
    await graph.invoke({ n: 0 }, config);
    const cases: [() => Promise<unknown>, number][] = [
      [() => graph.updateState({ configurable: { thread_id: 't', checkpoint_ns: 'nope' } }, { n: 2 }), 404],
      [() => graph.bulkUpdateState(config, []), 422],
      [() => graph.bulkUpdateState(config, [{ updates: [] }]), 422],
      [() => graph.updateState(config, { n: 2 }, 'no_such_node'), 422],
    ];
    for (const [action, statusCode] of cases) {
      const error = await thrownBy(action);
      assert.equal(classifyGraphInputError(error)?.statusCode, statusCode, String(error));
    }
  });

  it('leaves every other error to the server (500)', () => {
    assert.equal(classifyGraphInputError(new Error('database is locked')), undefined);
    assert.equal(classifyGraphInputError(new TypeError('Subgraph "x" not found')), undefined);
    assert.equal(classifyGraphInputError('Subgraph "x" not found'), undefined);
  });
});
