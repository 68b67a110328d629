// A graph with a subgraph: `research` is itself a compiled graph (make_plan → write) that shares the
// parent's `messages`, followed by the parent's `review` node. Streams with `stream_subgraphs`
// show the inner events under the `research:<task id>` namespace.

import { AIMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { Runtime } from '@langchain/langgraph';
import { z } from 'zod';
import { ChatContext, chatSettings } from './chat.ts';
import { chooseChatModel } from './models/choose-model.ts';
import { messageText } from './models/local-chat-model.ts';

const ResearchState = new StateSchema({
  messages: MessagesValue,
  plan: z.string().default(''),
});

async function plan(state: typeof ResearchState.State) {
  const question = messageText(state.messages[state.messages.length - 1]);
  return { plan: `look up: ${question}` };
}

async function write(state: typeof ResearchState.State, runtime: Runtime<ChatContext>) {
  const { modelName } = chatSettings(runtime);
  const model = chooseChatModel(modelName, { script: () => ({ content: `Findings for "${state.plan}".` }) });
  return { messages: [await model.invoke(state.messages, runtime)] };
}

// Compiled without a checkpointer: a subgraph inherits the parent's (the server's) checkpointer.
export const research = new StateGraph(ResearchState, ChatContext)
  .addNode('make_plan', plan)
  .addNode('write', write)
  .addEdge(START, 'make_plan')
  .addEdge('make_plan', 'write')
  .addEdge('write', END)
  .compile({ name: 'research' });

const ParentState = new StateSchema({ messages: MessagesValue });

async function review(state: typeof ParentState.State) {
  return { messages: [new AIMessage(`Reviewed ${state.messages.length} messages.`)] };
}

export const graph = new StateGraph(ParentState, ChatContext)
  .addNode('research', research)
  .addNode('review', review)
  .addEdge(START, 'research')
  .addEdge('research', 'review')
  .addEdge('review', END)
  .compile({ name: 'subgraph' });
