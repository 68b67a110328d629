// A graph that acts for the authenticated user, as the reference server's `agent_simple` test
// graph does: it writes the last message's text to the store under the user's own namespace
// (`[identity]`, key `key_one`), taking the identity the server stamps into `configurable`.

import { AIMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';

const State = new StateSchema({ messages: MessagesValue });

async function remember(state: typeof State.State, config: LangGraphRunnableConfig) {
  const identity = config.configurable?.langgraph_auth_user_id as string | undefined;
  const text = String(state.messages.at(-1)?.content ?? '');
  if (identity && config.store) await config.store.put([identity], 'key_one', { text });
  return { messages: [new AIMessage(`remembered for ${identity ?? 'nobody'}`)] };
}

export const graph = new StateGraph(State).addNode('remember', remember).addEdge(START, 'remember').addEdge('remember', END).compile({ name: 'agent_simple' });
