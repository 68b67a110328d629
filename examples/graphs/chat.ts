// A chat agent configured by its assistant: the model and the system prompt come from the
// assistant's `context` (`model_name`, `system_prompt`), with defaults when a key is absent. Runs
// offline with the deterministic local model unless an OpenAI-compatible API key is set.

import { SystemMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { Runtime } from '@langchain/langgraph';
import { z } from 'zod';
import { chooseChatModel, defaultModelName } from './models/choose-model.ts';
import { echoScript } from './models/local-chat-model.ts';

export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant.';

export const ChatContext = z.object({
  model_name: z.string().optional().describe('The chat model to use; `local-*` names run the offline model.'),
  system_prompt: z.string().optional().describe('The system prompt placed before the conversation.'),
});
export type ChatContext = z.infer<typeof ChatContext>;

export const ChatState = new StateSchema({ messages: MessagesValue });

/**
 * The assistant's settings for this run: `runtime.context` (what the server passes from the
 * assistant's `context`), then `configurable` (older clients and LangGraph < 0.6 style), then the
 * defaults.
 */
export function chatSettings(runtime: Runtime<ChatContext>): { modelName: string; systemPrompt: string } {
  const context = runtime.context ?? {};
  const configurable = (runtime.configurable ?? {}) as ChatContext;
  return {
    modelName: context.model_name ?? configurable.model_name ?? defaultModelName(),
    systemPrompt: context.system_prompt ?? configurable.system_prompt ?? DEFAULT_SYSTEM_PROMPT,
  };
}

async function callModel(state: typeof ChatState.State, runtime: Runtime<ChatContext>) {
  const { modelName, systemPrompt } = chatSettings(runtime);
  // Offline, the echo shows a non-default system prompt, so an assistant's context is visible in
  // its answers without a real model.
  const model = chooseChatModel(modelName, {
    script: (messages, tools) => {
      const reply = echoScript(messages, tools);
      return systemPrompt === DEFAULT_SYSTEM_PROMPT
        ? reply
        : { ...reply, content: `(${systemPrompt}) ${reply.content}` };
    },
  });
  const response = await model.invoke([new SystemMessage(systemPrompt), ...state.messages], runtime);
  return { messages: [response] };
}

export const graph = new StateGraph(ChatState, ChatContext)
  .addNode('call_model', callModel)
  .addEdge(START, 'call_model')
  .addEdge('call_model', END)
  .compile({ name: 'chat' });
