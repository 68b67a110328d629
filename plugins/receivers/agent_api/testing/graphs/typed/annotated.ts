// An `Annotation` graph (no runtime schema): its schemas come from its TypeScript types. Separate
// input and output, a config annotation, messages, and subgraphs two levels deep, each with a
// state of its own.

import type { BaseMessage } from '@langchain/core/messages';
import { Annotation, END, START, StateGraph, messagesStateReducer } from '@langchain/langgraph';

const Input = Annotation.Root({
  question: Annotation<string>,
  messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
});
const Output = Annotation.Root({
  answer: Annotation<string>,
  confidence: Annotation<number | null>,
});
const Settings = Annotation.Root({
  model_name: Annotation<string>,
  tone: Annotation<'plain' | 'formal'>,
});

const Polish = Annotation.Root({
  draft: Annotation<string>,
  level: Annotation<'light' | 'heavy'>,
});
const polish = new StateGraph(Polish)
  .addNode('rewrite', (state: typeof Polish.State) => ({ draft: `${state.draft}.` }))
  .addEdge(START, 'rewrite')
  .addEdge('rewrite', END);

const Review = Annotation.Root({
  draft: Annotation<string>,
  attempts: Annotation<number>,
});
const review = new StateGraph(Review)
  .addNode('polish', polish.compile())
  .addEdge(START, 'polish')
  .addEdge('polish', END);

const workflow = new StateGraph({ input: Input, output: Output }, Settings)
  .addNode('respond', () => ({ answer: 'forty-two', confidence: 0.5 }))
  .addNode('review', review.compile())
  .addEdge(START, 'respond')
  .addEdge('respond', 'review')
  .addEdge('review', END);

export const graph = workflow.compile();
