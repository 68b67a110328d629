// Human in the loop: `write_draft` proposes an answer, `review` pauses the run with `interrupt()` (the
// thread becomes `interrupted`) until it is resumed with `Command({resume: ...})`: `true` or
// `"approve"` keeps the draft, a string replaces it.

import { AIMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema, interrupt } from '@langchain/langgraph';
import { z } from 'zod';
import { messageText } from './models/local-chat-model.ts';

const ReviewState = new StateSchema({
  messages: MessagesValue,
  draft: z.string().default(''),
});

async function draft(state: typeof ReviewState.State) {
  return { draft: `Draft answer to: ${messageText(state.messages[state.messages.length - 1])}` };
}

async function review(state: typeof ReviewState.State) {
  const decision = interrupt({ question: 'Approve this draft?', draft: state.draft });
  const approved = decision === true || decision === 'approve';
  const text = approved ? state.draft : typeof decision === 'string' ? decision : JSON.stringify(decision);
  return { messages: [new AIMessage(text)] };
}

export const graph = new StateGraph(ReviewState)
  .addNode('write_draft', draft)
  .addNode('review', review)
  .addEdge(START, 'write_draft')
  .addEdge('write_draft', 'review')
  .addEdge('review', END)
  .compile({ name: 'interrupt' });
