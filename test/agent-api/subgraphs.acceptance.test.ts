// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// the Agent Deployment API as plugins/receivers/agent_api/README.md describes it and the reference
// server's (LangGraph.js's `langgraph-api`) wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).
//
// Subgraphs: human in the loop and checkpoints on the weather fixture graph.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Client, ThreadState } from '@langchain/langgraph-sdk';
import { collect } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import { startTestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import { asObject } from '../../plugins/receivers/agent_api/testing/types.ts';
import { anyObject, anyString, assertMatches, matching } from '../support/match-object.ts';
import type { Json } from './support.ts';

/** What a debug `checkpoint` event and a history entry both carry, compared between the two. */
type CheckpointView = Pick<ThreadState, 'metadata' | 'checkpoint' | 'parent_checkpoint'>;
const pick = (item: CheckpointView) => ({
  step: item.metadata?.step,
  checkpoint: item.checkpoint,
  parent_checkpoint: item.parent_checkpoint,
});

const WEATHER_LANGGRAPH_JSON = fileURLToPath(new URL('../fixtures/graphs/langgraph.json', import.meta.url));

describe('subgraphs: human in the loop and checkpoints (weather fixture graph)', () => {
  let weather: TestServer;
  let sdk: Client;
  const human = { content: 'SF', additional_kwargs: {}, response_metadata: {}, type: 'human', id: 'initial-message' };
  const input = { messages: [{ role: 'human', content: 'SF', id: 'initial-message' }] };

  before(async () => {
    weather = await startTestServer({ langgraph_config: WEATHER_LANGGRAPH_JSON } as Parameters<
      typeof startTestServer
    >[0]);
    sdk = weather.client;
  });
  after(async () => {
    await weather.stop();
  });

  const subgraphTask = {
    id: anyString,
    name: 'weather_graph',
    path: ['__pregel_pull', 'weather_graph'],
    error: null,
    interrupts: [],
    checkpoint: { checkpoint_ns: matching(/^weather_graph:/), thread_id: anyString },
    state: null,
    result: null,
  };

  test('no modification: pause inside the subgraph, nested state, resume with namespaced events', async () => {
    const thread = await sdk.threads.create();
    const chunks = await collect(sdk.runs.stream(thread.thread_id, 'weather', { input }));
    assertMatches(chunks, [
      { event: 'metadata', data: { run_id: anyString, attempt: 1 } },
      { event: 'values', data: { messages: [human] } },
      { event: 'values', data: { messages: [human], route: 'weather' } },
      { event: 'values', data: { __interrupt__: [] } },
    ]);
    // The LangGraph.js server's message shape, exactly: the fields a message lacks are left out.
    assert.deepEqual(asObject(chunks[1]?.data).messages, [human]);
    const state = await sdk.threads.getState(thread.thread_id);
    assert.deepEqual(state.next, ['weather_graph']);
    assertMatches(state.tasks, [subgraphTask]);
    assert.deepEqual(Object.keys(state.tasks[0]?.checkpoint ?? {}).sort(), ['checkpoint_ns', 'thread_id']);

    const recursive = await sdk.threads.getState(thread.thread_id, undefined, { subgraphs: true });
    assert.deepEqual(recursive.next, ['weather_graph']);
    assertMatches(recursive.tasks, [
      {
        ...subgraphTask,
        checkpoint: null,
        state: {
          values: { city: 'San Francisco', messages: [human] },
          next: ['weather_node'],
          tasks: [
            {
              id: anyString,
              name: 'weather_node',
              path: ['__pregel_pull', 'weather_node'],
              error: null,
              interrupts: [],
              checkpoint: null,
              state: null,
              result: null,
            },
          ],
          metadata: anyObject,
          created_at: anyString,
          checkpoint: anyObject,
          parent_checkpoint: anyObject,
        },
      },
    ]);
    // A nested state has the fields of the reference's, no more: the top level's `interrupts`,
    // `checkpoint_id` and `parent_checkpoint_id` are not repeated inside tasks.
    assert.deepEqual(Object.keys(asObject(recursive.tasks[0]?.state)).sort(), [
      'checkpoint',
      'created_at',
      'metadata',
      'next',
      'parent_checkpoint',
      'tasks',
      'values',
    ]);
    assert.equal((await sdk.threads.get(thread.thread_id)).status, 'interrupted');

    const resumed = await collect(
      sdk.runs.stream(thread.thread_id, 'weather', {
        input: null,
        streamMode: ['values', 'updates'],
        streamSubgraphs: true,
      }),
    );
    const ai = {
      content: "It's sunny in San Francisco!",
      additional_kwargs: {},
      response_metadata: {},
      type: 'ai',
      id: anyString,
      tool_calls: [],
      invalid_tool_calls: [],
    };
    assertMatches(
      resumed.filter((chunk) => !chunk.event.startsWith('checkpoints')),
      [
        { event: 'metadata', data: { run_id: anyString, attempt: 1 } },
        { event: 'values', data: { messages: [human], route: 'weather' } },
        { event: matching(/^values\|weather_graph:/), data: { messages: [human], city: 'San Francisco' } },
        { event: matching(/^updates\|weather_graph:/), data: { weather_node: { messages: [ai] } } },
        { event: matching(/^values\|weather_graph:/), data: { messages: [human, ai], city: 'San Francisco' } },
        { event: 'updates', data: { weather_graph: { messages: [human, ai] } } },
        { event: 'values', data: { messages: [human, ai], route: 'weather' } },
      ],
    );
    assert.equal((await sdk.threads.get(thread.thread_id)).status, 'idle');
  });

  test('modification: update the subgraph state through the task checkpoint, read it, resume with it', async () => {
    const thread = await sdk.threads.create();
    const chunks = await collect(sdk.runs.stream(thread.thread_id, 'weather', { input }));
    assert.deepEqual(
      chunks.filter((c) => c.event === 'error'),
      [],
    );
    const state = await sdk.threads.getState(thread.thread_id);
    assertMatches(state.tasks, [subgraphTask]);
    const taskCheckpoint = state.tasks[0]?.checkpoint ?? undefined;
    assert.ok(taskCheckpoint, 'the subgraph task has a checkpoint');

    await sdk.threads.updateState(thread.thread_id, { values: { city: 'LA' }, checkpoint: taskCheckpoint });
    const inner = await sdk.threads.getState<Json>(thread.thread_id, taskCheckpoint);
    assert.equal(inner.values.city, 'LA');
    assert.deepEqual(inner.next, ['weather_node']);
    assertMatches(inner.tasks, [
      {
        id: anyString,
        name: 'weather_node',
        path: ['__pregel_pull', 'weather_node'],
        error: null,
        interrupts: [],
        checkpoint: null,
        state: null,
        result: null,
      },
    ]);

    const resumed = await collect(sdk.runs.stream(thread.thread_id, 'weather', { input: null }));
    assert.deepEqual(
      resumed.filter((c) => c.event === 'error'),
      [],
    );
    assert.equal(resumed[resumed.length - 1]!.event, 'values');
    const messages = (resumed.filter((c) => c.event === 'values').pop()!.data as Json).messages as Json[];
    assert.deepEqual(
      messages.map((m) => m.content),
      ['SF', "It's sunny in LA!"],
    );

    const history = await sdk.threads.getHistory<Json>(thread.thread_id);
    assert.equal(history.length, 4);
    assert.equal(history[0]!.next.length, 0);
    assert.equal((history[0]!.values.messages as Json[]).length, 2);
    assert.deepEqual(history[history.length - 1]!.next, ['__start__']);
    const innerHistory = await sdk.threads.getHistory<Json>(thread.thread_id, { checkpoint: taskCheckpoint });
    assert.equal(innerHistory.length, 5);
    assert.equal(innerHistory[0]!.next.length, 0);
    assert.equal((innerHistory[0]!.values.messages as Json[]).length, 2);
    assert.deepEqual(innerHistory[innerHistory.length - 1]!.next, ['__start__']);
  });

  test('debug checkpoints line up with history', async () => {
    const thread = await sdk.threads.create();
    const payloads: CheckpointView[] = [];
    for await (const chunk of sdk.runs.stream(thread.thread_id, 'weather', {
      input: { messages: [{ role: 'human', content: "What's the weather in SF?" }] },
      streamMode: 'debug',
    })) {
      if (chunk.event === 'debug' && asObject(chunk.data).type === 'checkpoint')
        payloads.push(asObject(chunk.data).payload as CheckpointView);
    }
    const history = (await sdk.threads.getHistory(thread.thread_id, { limit: payloads.length })).reverse();
    assert.deepEqual(payloads.map(pick), history.map(pick));
  });

  test('a run can continue from a checkpoint taken from history', async () => {
    const thread = await sdk.threads.create();
    const first = await collect(
      sdk.runs.stream(thread.thread_id, 'weather', {
        input: { messages: [{ role: 'human', content: "What's weather in SF?" }] },
        streamMode: 'debug',
        interruptBefore: ['router_node'],
      }),
    );
    const initial = first
      .filter((c) => c.event === 'debug' && asObject(c.data).type === 'checkpoint')
      .map((c) => asObject(c.data).payload as CheckpointView);
    const history = (await sdk.threads.getHistory(thread.thread_id)).reverse();
    const checkpoint = history[history.length - 1]!.checkpoint;
    const second = await collect(sdk.runs.stream(thread.thread_id, 'weather', { streamMode: 'debug', checkpoint }));
    const continued = second
      .filter((c) => c.event === 'debug' && asObject(c.data).type === 'checkpoint')
      .map((c) => asObject(c.data).payload as CheckpointView);
    const after = (await sdk.threads.getHistory(thread.thread_id)).reverse();
    assert.deepEqual([...initial, ...continued.slice(1)].map(pick), after.map(pick));
  });
});
