// Tests of the example graphs, run directly with an in-memory checkpointer and the offline model:
// what the agent server's users and tests rely on them doing.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AIMessageChunk, HumanMessage } from '@langchain/core/messages';
import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import { Command, MemorySaver } from '@langchain/langgraph';
import { graph as chatGraph } from './chat.ts';
import { graph as errorGraph } from './error.ts';
import { decide, graph as interruptGraph } from './interrupt.ts';
import { ChatOpenAI } from '@langchain/openai';
import { chooseChatModel, defaultModelName } from './models/choose-model.ts';
import { LocalChatModel, echoScript } from './models/local-chat-model.ts';
import { graph as sleepGraph } from './sleep.ts';
import { graph as subgraphGraph } from './subgraph.ts';
import { graph as toolsGraph, toolScript } from './tools.ts';

// The examples are compiled without persistence, as a deployment's are; the tests bind their own.
function withSaver<G extends { withConfig(config: Record<string, unknown>): G; checkpointer?: unknown }>(graph: G): G {
  const copy = graph.withConfig({});
  copy.checkpointer = new MemorySaver();
  return copy;
}

// The example graphs switch to a real OpenAI model when a key is set; these tests always run offline.
delete process.env.OPENAI_API_KEY;

let threadCounter = 0;
const thread = () => ({ configurable: { thread_id: `t${++threadCounter}` } });

describe('LocalChatModel', () => {
  it('streams token chunks that add up to the whole answer, with usage on the last chunk', async () => {
    const model = new LocalChatModel({ model: 'local-test' });
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await model.stream([new HumanMessage('one two three')])) chunks.push(chunk);
    assert.ok(chunks.length >= 4, `expected several chunks, got ${chunks.length}`);
    assert.equal(chunks.map((chunk) => chunk.content).join(''), 'You said: one two three');
    assert.deepEqual(chunks.at(-1)!.usage_metadata, { input_tokens: 3, output_tokens: 5, total_tokens: 8 });
    const whole = await model.invoke([new HumanMessage('one two three')]);
    assert.equal(whole.content, 'You said: one two three');
    assert.equal(whole.response_metadata.model_name, 'local-test');
  });

  it('emits tool calls from its script once tools are bound', async () => {
    const model = new LocalChatModel({ script: toolScript });
    const tool = { name: 'add', description: 'adds', schema: {} };
    const reply = await model.bindTools([tool]).invoke([new HumanMessage('what is 2 + 40?')]);
    assert.deepEqual(
      reply.tool_calls?.map((call) => [call.name, call.args]),
      [['add', { a: 2, b: 40 }]],
    );
  });

  it('greets when there is nothing to echo', () => {
    assert.match(echoScript([], []).content, /Hello/);
  });
});

describe('chooseChatModel', () => {
  it('uses the offline model without an API key, and for local-* names always', () => {
    const saved = process.env.OPENAI_API_KEY;
    try {
      delete process.env.OPENAI_API_KEY;
      assert.equal(defaultModelName(), 'local-echo');
      assert.ok(chooseChatModel('gpt-4o-mini') instanceof LocalChatModel);
      process.env.OPENAI_API_KEY = 'sk-test-not-used';
      assert.ok(chooseChatModel('local-echo') instanceof LocalChatModel);
      const remote = chooseChatModel('gpt-4o-mini');
      assert.ok(remote instanceof ChatOpenAI);
      assert.equal(remote.model, 'gpt-4o-mini');
      assert.notEqual(defaultModelName(), 'local-echo');
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });
});

describe('chat graph', () => {
  it('answers with the default prompt and model when the context is empty', async () => {
    const result = await withSaver(chatGraph).invoke({ messages: [{ role: 'user', content: 'hi there' }] }, thread());
    const answer = result.messages.at(-1) as BaseMessage;
    assert.equal(answer.content, 'You said: hi there');
    assert.equal((answer.response_metadata as { model_name?: string }).model_name, 'local-echo');
  });

  it('reads model_name and system_prompt from the run context', async () => {
    const result = await withSaver(chatGraph).invoke(
      { messages: [{ role: 'user', content: 'hello' }] },
      { ...thread(), context: { model_name: 'local-large', system_prompt: 'Answer like a pirate.' } },
    );
    const answer = result.messages.at(-1) as BaseMessage;
    assert.equal(answer.content, '(Answer like a pirate.) You said: hello');
    assert.equal((answer.response_metadata as { model_name?: string }).model_name, 'local-large');
  });

  it('falls back to configurable when the context lacks a key', async () => {
    const result = await withSaver(chatGraph).invoke(
      { messages: [{ role: 'user', content: 'hello' }] },
      { configurable: { ...thread().configurable, system_prompt: 'Be terse.' } },
    );
    assert.equal((result.messages.at(-1) as BaseMessage).content, '(Be terse.) You said: hello');
  });

  it('keeps the conversation on the thread and streams tokens in messages mode', async () => {
    const graph = withSaver(chatGraph);
    const config = thread();
    await graph.invoke({ messages: [{ role: 'user', content: 'first' }] }, config);
    const tokens: string[] = [];
    for await (const [message] of await graph.stream(
      { messages: [{ role: 'user', content: 'second message' }] },
      { ...config, streamMode: 'messages' },
    )) {
      tokens.push(String((message as BaseMessage).content));
    }
    assert.ok(tokens.filter((token) => token !== '').length >= 3, `tokens: ${JSON.stringify(tokens)}`);
    assert.equal(tokens.join(''), 'You said: second message');
    const state = await graph.getState(config);
    assert.equal(state.values.messages.length, 4);
  });
});

describe('tools graph', () => {
  it('calls a tool and answers from its result', async () => {
    const result = await withSaver(toolsGraph).invoke(
      { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] },
      thread(),
    );
    const types = (result.messages as BaseMessage[]).map((message) => message.getType());
    assert.deepEqual(types, ['human', 'ai', 'tool', 'ai']);
    assert.equal((result.messages[2] as BaseMessage).content, "It's always sunny in Paris.");
    assert.equal((result.messages[3] as BaseMessage).content, "The tool says: It's always sunny in Paris.");
  });

  it('calls the arithmetic tool of the question’s operator, so that its answer is right', async () => {
    for (const [question, tool, answer] of [
      ['What is 17 * 23', 'multiply', '391'],
      ['What is 17 times 23?', 'multiply', '391'],
      ['What is 6 × 7?', 'multiply', '42'],
      ['What is 2 plus 3?', 'add', '5'],
      ['What is 2 + 40?', 'add', '42'],
      ['What is 17 - 5?', 'add', '12'],
    ] as const) {
      const result = await withSaver(toolsGraph).invoke({ messages: [{ role: 'user', content: question }] }, thread());
      const messages = result.messages as AIMessage[];
      assert.equal(messages[1]!.tool_calls?.[0]?.name, tool, question);
      assert.equal(messages.at(-1)!.content, `The tool says: ${answer}`, question);
    }
    const declined = await withSaver(toolsGraph).invoke(
      { messages: [{ role: 'user', content: 'What is 10 / 4?' }] },
      thread(),
    );
    assert.equal(declined.messages.length, 2);
    assert.match(String((declined.messages[1] as BaseMessage).content), /but not that/);
  });

  it('streams updates from the agent, tools and agent nodes', async () => {
    const nodes: string[] = [];
    for await (const update of await withSaver(toolsGraph).stream(
      { messages: [{ role: 'user', content: 'add 2 and 3' }] },
      { ...thread(), streamMode: 'updates' },
    )) {
      nodes.push(...Object.keys(update));
    }
    assert.deepEqual(nodes, ['agent', 'tools', 'agent']);
  });
});

describe('subgraph graph', () => {
  it('namespaces the subgraph events when streaming subgraphs', async () => {
    const seen: string[] = [];
    for await (const [namespace, update] of await withSaver(subgraphGraph).stream(
      { messages: [{ role: 'user', content: 'research this' }] },
      { ...thread(), streamMode: 'updates', subgraphs: true },
    )) {
      seen.push(
        `${namespace.map((ns: string) => ns.split(':')[0]).join('|') || 'root'}:${Object.keys(update).join(',')}`,
      );
    }
    assert.deepEqual(seen, ['research:make_plan', 'research:write', 'root:research', 'root:review']);
  });
});

describe('interrupt graph', () => {
  it('pauses in review and resumes with the decision', async () => {
    const graph = withSaver(interruptGraph);
    const config = thread();
    await graph.invoke({ messages: [{ role: 'user', content: 'write a haiku' }] }, config);
    const paused = await graph.getState(config);
    assert.deepEqual(paused.next, ['review']);
    const args = { reply: 'Draft answer to: write a haiku' };
    assert.deepEqual(paused.tasks[0]!.interrupts[0]!.value, {
      action_requests: [{ name: 'send_reply', args, arguments: args, description: 'Approve this draft?' }],
      review_configs: [{ action_name: 'send_reply', allowed_decisions: ['approve', 'edit', 'reject'] }],
    });
    const resumed = await graph.invoke(new Command({ resume: 'A better haiku.' }), config);
    assert.equal((resumed.messages.at(-1) as BaseMessage).content, 'A better haiku.');
    assert.deepEqual((await graph.getState(config)).next, []);
  });

  it('reads the decisions of the middleware, Agent Chat UI and Agent Inbox', () => {
    const draft = 'the draft';
    const edited = { name: 'send_reply', args: { reply: 'edited' } };
    const cases: Array<[unknown, ReturnType<typeof decide>]> = [
      [true, { kind: 'send', text: draft }],
      ['approve', { kind: 'send', text: draft }],
      ['my words', { kind: 'send', text: 'my words' }],
      [{ decisions: [{ type: 'approve' }] }, { kind: 'send', text: draft }],
      [{ decisions: [{ type: 'edit', edited_action: edited }] }, { kind: 'send', text: 'edited' }],
      [{ decisions: [{ type: 'edit', editedAction: edited }] }, { kind: 'send', text: 'edited' }],
      [{ decisions: [{ type: 'reject', message: 'too long' }] }, { kind: 'send', text: 'Draft rejected: too long' }],
      [{ decisions: [{ type: 'reject' }] }, { kind: 'send', text: 'Draft rejected.' }],
      [{ decisions: [{ type: 'respond', message: 'hi' }] }, { kind: 'send', text: 'hi' }],
      [[{ type: 'accept', args: null }], { kind: 'send', text: draft }],
      [
        [{ type: 'edit', args: { action: 'send_reply', args: { reply: 'inbox edit' } } }],
        { kind: 'send', text: 'inbox edit' },
      ],
      [[{ type: 'response', args: 'inbox words' }], { kind: 'send', text: 'inbox words' }],
      [[{ type: 'ignore', args: null }], { kind: 'drop' }],
    ];
    for (const [resume, outcome] of cases) assert.deepEqual(decide(resume, draft), outcome, JSON.stringify(resume));
  });
});

describe('sleep graph', () => {
  it('emits a custom event per step and finishes', async () => {
    const events: unknown[] = [];
    for await (const [mode, chunk] of await withSaver(sleepGraph).stream(
      { delay_ms: 20, steps: 2 },
      { ...thread(), streamMode: ['custom', 'values'] },
    )) {
      if (mode === 'custom') events.push(chunk);
      else if ((chunk as { messages: BaseMessage[] }).messages.length > 0)
        events.push((chunk as { messages: BaseMessage[] }).messages.at(-1)!.content);
    }
    assert.deepEqual(events, [{ step: 1, of: 2 }, { step: 2, of: 2 }, 'finished after 20 ms']);
  });

  it('stops when the run is aborted', async () => {
    const controller = new AbortController();
    const run = withSaver(sleepGraph).invoke({ delay_ms: 60_000 }, { ...thread(), signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await assert.rejects(run, (error: Error) => /abort/i.test(`${error.name} ${error.message}`));
  });
});

describe('error graph', () => {
  it('fails with CustomError("Boo!")', async () => {
    await assert.rejects(withSaver(errorGraph).invoke({}, thread()), (error: Error) => {
      assert.equal(error.name, 'CustomError');
      assert.equal(error.message, 'Boo!');
      return true;
    });
  });

  it('takes its message and delay from the input', async () => {
    await assert.rejects(
      withSaver(errorGraph).invoke({ message: 'custom failure', delay_ms: 5 }, thread()),
      /custom failure/,
    );
  });
});
