// Human in the loop: `write_draft` proposes an answer, `review` pauses the run with `interrupt()` (the
// thread becomes `interrupted`) until it is resumed with `Command({resume: ...})`.
//
// The interrupt is a review request in the schema of LangChain's human-in-the-loop middleware
// (`HITLRequest`), which LangChain's Agent Chat UI and Agent Inbox render and answer: one action
// request, `send_reply` with the draft as its argument, and the decisions a reviewer may take. The
// resume value may be what any of those clients sends back:
//   - `{decisions: [{type: "approve"}]}`, `{type: "edit", edited_action: {name, args: {reply}}}`,
//     `{type: "reject", message?}` or `{type: "respond", message}` (Agent Chat UI, the middleware);
//   - `[{type: "accept" | "edit" | "response" | "ignore", args}]` (Agent Inbox's `HumanResponse`);
//   - `true` / `"approve"` (keep the draft) or any other string (the reply instead of the draft).
// Approving sends the draft, editing sends the edited reply, a response sends its text, rejecting
// answers "Draft rejected: <reason>", and ignoring ends the run without a reply.

import { AIMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema, interrupt } from '@langchain/langgraph';
import { z } from 'zod';
import { messageText } from './models/local-chat-model.ts';

const ReviewState = new StateSchema({
  messages: MessagesValue,
  draft: z.string().default(''),
});

/** The name of the action the reviewer decides on. */
export const REVIEW_ACTION = 'send_reply';
export const REVIEW_DESCRIPTION = 'Approve this draft?';

/**
 * The interrupt value: an `HITLRequest`. Each action request carries its arguments as `args` and,
 * for Agent Inbox (which reads the pre-release key), as `arguments` too.
 */
export function reviewRequest(draft: string) {
  const args = { reply: draft };
  return {
    action_requests: [{ name: REVIEW_ACTION, args, arguments: args, description: REVIEW_DESCRIPTION }],
    review_configs: [{ action_name: REVIEW_ACTION, allowed_decisions: ['approve', 'edit', 'reject'] }],
  };
}

type Outcome = { kind: 'send'; text: string } | { kind: 'drop' };

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** The reply an edited action carries (`{name, args: {reply}}`, or Agent Inbox's `{action, args}`). */
function editedReply(action: unknown, draft: string): string {
  const args = record(record(action).args ?? record(action).arguments);
  return typeof args.reply === 'string' ? args.reply : draft;
}

/** What the reviewer decided, from any of the resume shapes above. */
export function decide(decision: unknown, draft: string): Outcome {
  if (decision === true || decision === 'approve') return { kind: 'send', text: draft };
  if (typeof decision === 'string') return { kind: 'send', text: decision };
  // `{decisions: [...]}` (HITLResponse) or a list of HumanResponse: the first one is the answer,
  // since the request holds one action.
  const first: unknown = Array.isArray(decision) ? decision[0] : record(decision).decisions;
  const answer = record(Array.isArray(first) ? first[0] : first);
  const message = typeof answer.message === 'string' ? answer.message : undefined;
  switch (answer.type) {
    case 'approve':
    case 'accept':
      return { kind: 'send', text: draft };
    case 'edit':
      return {
        kind: 'send',
        text: editedReply(answer.edited_action ?? answer.editedAction ?? answer.args, draft),
      };
    case 'reject':
      return { kind: 'send', text: message ? `Draft rejected: ${message}` : 'Draft rejected.' };
    case 'respond':
      return { kind: 'send', text: message ?? draft };
    case 'response':
      return { kind: 'send', text: typeof answer.args === 'string' ? answer.args : draft };
    case 'ignore':
      return { kind: 'drop' };
    default:
      return { kind: 'send', text: JSON.stringify(decision) };
  }
}

async function draft(state: typeof ReviewState.State) {
  return { draft: `Draft answer to: ${messageText(state.messages[state.messages.length - 1])}` };
}

async function review(state: typeof ReviewState.State) {
  const outcome = decide(interrupt(reviewRequest(state.draft)), state.draft);
  return outcome.kind === 'send' ? { messages: [new AIMessage(outcome.text)] } : {};
}

export const graph = new StateGraph(ReviewState)
  .addNode('write_draft', draft)
  .addNode('review', review)
  .addEdge(START, 'write_draft')
  .addEdge('write_draft', 'review')
  .addEdge('review', END)
  .compile({ name: 'interrupt' });
