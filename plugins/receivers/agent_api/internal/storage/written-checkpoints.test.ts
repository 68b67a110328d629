// The state after a run prepared from the checkpoint tuple the run wrote (`stateAfterRun`) against
// LangGraph's own read of the thread from the SQLite file: the same snapshot, field for field, for
// plain runs, tool calls, subgraphs, interrupts and their `Command` resumes, failures and state
// updates between runs; the library's read wherever what was kept is not the thread's latest or is
// not plain data; and LangGraph's `getState` taking the tuple from the checkpointer its config lends.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HumanMessage } from '@langchain/core/messages';
import { Command, END, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';
import { z } from 'zod';
import { tempDir } from 'tracepipe/testing';
import { graph as chatGraph } from '../../../../../examples/graphs/chat.ts';
import { graph as errorGraph } from '../../../../../examples/graphs/error.ts';
import { graph as interruptGraph } from '../../../../../examples/graphs/interrupt.ts';
import { graph as subgraphGraph } from '../../../../../examples/graphs/subgraph.ts';
import { graph as toolsGraph } from '../../../../../examples/graphs/tools.ts';
import { toWire } from '../graphs/serialize.ts';
import { LENT_CHECKPOINTER, SqliteCheckpointDatabase } from './checkpoints.ts';
import { SPECIAL_WRITE_INDEX, isPlain } from './written-checkpoints.ts';

// The example graphs switch to a real model when a key is set; these run offline.
delete process.env.OPENAI_API_KEY;

interface Bindable {
  withConfig(config: Record<string, unknown>): Bound;
}
interface Bound {
  checkpointer?: unknown;
  stream(input: unknown, options: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  getState(config: object): Promise<unknown>;
  updateState(config: Record<string, unknown>, values: unknown, asNode?: string): Promise<unknown>;
}

const DatedState = new StateSchema({ at: z.date().optional(), count: z.number().default(0) });
const datedGraph = new StateGraph(DatedState)
  .addNode('stamp', (state: typeof DatedState.State) => ({ at: new Date(0), count: state.count + 1 }))
  .addEdge(START, 'stamp')
  .addEdge('stamp', END)
  .compile({ name: 'dated' });

const message = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('the state after a run from the checkpoint it wrote', () => {
  let dir: string;
  let db: SqliteCheckpointDatabase;
  before(() => {
    dir = tempDir('agent-api-written-');
    db = new SqliteCheckpointDatabase(join(dir, 'checkpoints.sqlite'));
  });
  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const bind = (graph: unknown): Bound => {
    const bound = (graph as Bindable).withConfig({});
    bound.checkpointer = db.saver;
    return bound;
  };

  /** Runs `input` on the thread as the graph runner does (its run id in the metadata); true if it failed. */
  async function run(graph: Bound, threadId: string, runId: string, input: unknown): Promise<boolean> {
    try {
      const options = {
        configurable: { thread_id: threadId },
        metadata: { run_id: runId, thread_id: threadId },
        runId,
        streamMode: ['values', 'updates'],
      };
      for await (const chunk of await graph.stream(input, options)) void chunk;
      return false;
    } catch {
      return true;
    }
  }

  /** The state from the run's tuple and the library's read, as the API would send them. */
  async function bothStates(graph: Bound, threadId: string, runId: string) {
    const lent = db.stateAfterRun(threadId, runId);
    const fromTuple = await graph.getState(lent);
    const read = await graph.getState({ configurable: { thread_id: threadId, checkpoint_ns: '' } });
    return { lent: LENT_CHECKPOINTER in (lent.configurable ?? {}), fromTuple: toWire(fromTuple), read: toWire(read) };
  }

  async function assertSameStateAfter(graph: Bound, threadId: string, input: unknown, failed = false) {
    const runId = randomUUID();
    assert.equal(await run(graph, threadId, runId, input), failed);
    const { lent, fromTuple, read } = await bothStates(graph, threadId, runId);
    assert.ok(lent, 'the tuple the run wrote is handed to getState');
    assert.deepEqual(fromTuple, read);
    return read as { values: Record<string, unknown>; next: string[]; tasks: { interrupts: unknown[] }[] };
  }

  it('is the state LangGraph reads back, for chat and tool-calling runs, again on a thread with history', async () => {
    const chat = bind(chatGraph);
    const threadId = randomUUID();
    await assertSameStateAfter(chat, threadId, message('Hello!'));
    const second = await assertSameStateAfter(chat, threadId, message('And again?'));
    assert.equal((second.values.messages as unknown[]).length, 4);
    const tools = bind(toolsGraph);
    const toolsThread = randomUUID();
    const state = await assertSameStateAfter(tools, toolsThread, message('What is 6 times 7?'));
    assert.ok((state.values.messages as { type: string }[]).some((item) => item.type === 'tool'));
    await assertSameStateAfter(tools, toolsThread, message('What is the weather in Paris?'));
  });

  it('is the state LangGraph reads back for a graph with a subgraph', async () => {
    await assertSameStateAfter(bind(subgraphGraph), randomUUID(), message('Plan a trip'));
  });

  it('is the state LangGraph reads back at an interrupt, and after the run that resumes it with a Command', async () => {
    const graph = bind(interruptGraph);
    const threadId = randomUUID();
    const paused = await assertSameStateAfter(graph, threadId, message('Draft me a reply'));
    assert.deepEqual(paused.next, ['review']);
    assert.equal(paused.tasks[0]?.interrupts.length, 1);
    const resumed = await assertSameStateAfter(graph, threadId, new Command({ resume: 'approve' }));
    assert.deepEqual(resumed.next, []);
    // And an interrupt again, resumed with an edit.
    await assertSameStateAfter(graph, threadId, message('Another one'));
    const edited = { decisions: [{ type: 'edit', edited_action: { name: 'send_reply', args: { reply: 'Edited' } } }] };
    await assertSameStateAfter(graph, threadId, new Command({ resume: edited }));
  });

  it('is the state LangGraph reads back after the graph failed', async () => {
    const state = await assertSameStateAfter(bind(errorGraph), randomUUID(), { message: 'Boo!' }, true);
    assert.deepEqual(state.next, ['fail']);
  });

  it('is the state LangGraph reads back after a state update, and a run, on the thread', async () => {
    const graph = bind(chatGraph);
    const threadId = randomUUID();
    await assertSameStateAfter(graph, threadId, message('Hello!'));
    await graph.updateState({ configurable: { thread_id: threadId } }, message('Added by hand'), 'call_model');
    await assertSameStateAfter(graph, threadId, message('And now?'));
  });

  it("is read from the file when the thread changed after the run's last write, or holds more than plain data", async () => {
    const graph = bind(chatGraph);
    const threadId = randomUUID();
    const runId = randomUUID();
    await run(graph, threadId, runId, message('Hello!'));
    await graph.updateState({ configurable: { thread_id: threadId } }, message('Added by hand'), 'call_model');
    assert.deepEqual(db.stateAfterRun(threadId, runId), { configurable: { thread_id: threadId, checkpoint_ns: '' } });

    const patched = randomUUID();
    await run(graph, threadId, patched, message('Again'));
    assert.equal(await db.patchLatestMetadata(threadId, { reviewed: true }), true);
    assert.equal(LENT_CHECKPOINTER in (db.stateAfterRun(threadId, patched).configurable ?? {}), false);

    const dated = bind(datedGraph);
    const datedThread = randomUUID();
    const datedRun = randomUUID();
    await run(dated, datedThread, datedRun, { count: 1 });
    assert.equal(LENT_CHECKPOINTER in (db.stateAfterRun(datedThread, datedRun).configurable ?? {}), false);

    // Taken once: nothing stays kept for a run whose state was read.
    const once = randomUUID();
    await run(graph, randomUUID(), once, message('Hi'));
    assert.equal(db.saver.written.size, 1);
    db.stateAfterRun(randomUUID(), once);
    assert.equal(db.saver.written.size, 0);
  });

  it("is what LangGraph's getState prepares the state from: it asks the checkpointer its config lends", async () => {
    const graph = bind(chatGraph);
    const threadId = randomUUID();
    const runId = randomUUID();
    await run(graph, threadId, runId, message('Hello!'));
    const lent = db.stateAfterRun(threadId, runId);
    // Gone from the file: only the lent tuple can still answer with the run's messages.
    await db.deleteThread(threadId);
    const fromTuple = (await graph.getState(lent)) as { values: { messages?: unknown[] } };
    assert.equal(fromTuple.values.messages?.length, 2);
    const read = (await graph.getState({ configurable: { thread_id: threadId, checkpoint_ns: '' } })) as {
      values: Record<string, unknown>;
    };
    assert.deepEqual(read.values, {});
  });

  it("gives writes on special channels the checkpointer's indexes", () => {
    assert.deepEqual(SPECIAL_WRITE_INDEX, { ...WRITES_IDX_MAP });
  });

  it('takes JSON values, plain objects and messages of such as plain data, nothing else', () => {
    assert.equal(isPlain({ a: [1, 'b', null, true, { c: undefined }] }), true);
    assert.equal(isPlain({ at: new Date(0) }), false);
    assert.equal(isPlain([new Map()]), false);
    assert.equal(isPlain({ n: Number.NaN }), false);
    assert.equal(isPlain({ n: 1n }), false);
    assert.equal(isPlain({ lc: 1, type: 'constructor', id: ['x'], kwargs: {} }), false);
    assert.equal(isPlain([new HumanMessage({ content: 'hi', id: 'm1' })]), true);
    // Fields as they are now, not as constructed; an id set on the message alone does not serialise.
    const replaced = new HumanMessage({ content: 'hi' });
    (replaced as unknown as { content: unknown }).content = [{ type: 'text', text: 'hi', at: new Date(0) }];
    assert.equal(isPlain(replaced), false);
    const idOnObject = new HumanMessage({ content: 'hi' });
    idOnObject.id = 'set later';
    assert.equal(isPlain(idOnObject), false);
  });
});
