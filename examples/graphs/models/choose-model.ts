// Picks the chat model an example graph talks to from the assistant's `model_name`: the offline
// LocalChatModel for `local-*` names or when no OpenAI-compatible API key is set, an OpenAI chat
// model (any OpenAI-compatible endpoint via OPENAI_BASE_URL) otherwise.

import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatOpenAI } from '@langchain/openai';
import { LocalChatModel } from './local-chat-model.ts';
import type { ReplyScript } from './local-chat-model.ts';

/** The model used when the assistant's context names none. */
export function defaultModelName(): string {
  if (!process.env.OPENAI_API_KEY) return 'local-echo';
  return process.env.OPENAI_MODEL ?? 'gpt-4o-mini';
}

export function chooseChatModel(
  modelName: string,
  options: { script?: ReplyScript; tokenDelayMs?: number } = {},
): BaseChatModel {
  if (modelName.startsWith('local') || !process.env.OPENAI_API_KEY) {
    return new LocalChatModel({ model: modelName, script: options.script, tokenDelayMs: options.tokenDelayMs });
  }
  // Streaming so that the `messages` stream mode shows tokens as they arrive; usage in the stream
  // so that traces carry token counts.
  return new ChatOpenAI({ model: modelName, streaming: true, streamUsage: true });
}
