// A deterministic chat model that runs offline: it answers from a script (by default it echoes the
// last user message), streams its answer word by word through LangChain's callbacks (so the
// `messages` stream mode yields one chunk per token), can emit tool calls when tools are bound,
// and reports `usage_metadata` (words counted as tokens). The example graphs use it whenever no
// OpenAI-compatible API key is configured, and the tests and benchmarks always do.

import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type {
  BaseChatModelCallOptions,
  BaseChatModelParams,
  BindToolsInput,
} from '@langchain/core/language_models/chat_models';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { AIMessage, AIMessageChunk } from '@langchain/core/messages';
import type { BaseMessage, ToolCall, UsageMetadata } from '@langchain/core/messages';
import { ChatGenerationChunk } from '@langchain/core/outputs';
import type { ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';

/** What the model says next: text, and optionally tool calls. */
export interface ScriptedReply {
  readonly content: string;
  readonly toolCalls?: readonly ToolCall[];
}

/** Decides the reply from the conversation and the names of the bound tools. */
export type ReplyScript = (messages: readonly BaseMessage[], toolNames: readonly string[]) => ScriptedReply;

export interface LocalChatModelParams extends BaseChatModelParams {
  /** Reported as the model name (`ls_model_name`, `response_metadata.model_name`). */
  readonly model?: string;
  readonly script?: ReplyScript;
  /** Pause between streamed tokens, to make runs observably long (cancel/interrupt tests). */
  readonly tokenDelayMs?: number;
}

export function messageText(message: BaseMessage | undefined): string {
  if (!message) return '';
  const content = message.content;
  if (typeof content === 'string') return content;
  return content
    .map((part) =>
      typeof part === 'string' ? part : part.type === 'text' ? String((part as { text?: unknown }).text ?? '') : '',
    )
    .join('');
}

/** The default script: echo the last human message. */
export const echoScript: ReplyScript = (messages) => {
  const lastHuman = [...messages].reverse().find((message) => message.getType() === 'human');
  const text = messageText(lastHuman).trim();
  return { content: text === '' ? 'Hello! Send me a message and I will echo it.' : `You said: ${text}` };
};

// Whitespace-preserving split, so that the concatenated chunks equal the full message exactly.
function tokenize(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function countTokens(messages: readonly BaseMessage[]): number {
  return messages.reduce((total, message) => total + tokenize(messageText(message)).length, 0);
}

export class LocalChatModel extends BaseChatModel<BaseChatModelCallOptions, AIMessageChunk> {
  readonly model: string;
  readonly script: ReplyScript;
  readonly tokenDelayMs: number;
  boundToolNames: readonly string[] = [];

  static override lc_name(): string {
    return 'LocalChatModel';
  }

  constructor(params: LocalChatModelParams = {}) {
    super(params);
    this.model = params.model ?? 'local-echo';
    this.script = params.script ?? echoScript;
    this.tokenDelayMs = params.tokenDelayMs ?? 0;
  }

  _llmType(): string {
    return 'local';
  }

  override getLsParams(options: this['ParsedCallOptions']) {
    return {
      ...super.getLsParams(options),
      ls_provider: 'local',
      ls_model_name: this.model,
      ls_model_type: 'chat' as const,
    };
  }

  override invocationParams(): Record<string, unknown> {
    return { model: this.model };
  }

  override bindTools(
    tools: BindToolsInput[],
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, BaseChatModelCallOptions> {
    const bound = new LocalChatModel({ model: this.model, script: this.script, tokenDelayMs: this.tokenDelayMs });
    bound.boundToolNames = tools.map((tool) => String((tool as { name?: unknown }).name ?? ''));
    return bound;
  }

  private reply(messages: BaseMessage[]): { reply: ScriptedReply; usage: UsageMetadata } {
    const reply = this.script(messages, this.boundToolNames);
    const input_tokens = countTokens(messages);
    const output_tokens = tokenize(reply.content).length + (reply.toolCalls?.length ?? 0);
    return { reply, usage: { input_tokens, output_tokens, total_tokens: input_tokens + output_tokens } };
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const { reply, usage } = this.reply(messages);
    const message = new AIMessage({
      content: reply.content,
      tool_calls: reply.toolCalls ? [...reply.toolCalls] : [],
      usage_metadata: usage,
      response_metadata: { model_name: this.model, finish_reason: reply.toolCalls?.length ? 'tool_calls' : 'stop' },
    });
    return { generations: [{ text: reply.content, message }], llmOutput: { tokenUsage: usage } };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const { reply, usage } = this.reply(messages);
    for (const token of tokenize(reply.content)) {
      if (options.signal?.aborted) throw new Error('the model call was aborted');
      if (this.tokenDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.tokenDelayMs));
      const chunk = new ChatGenerationChunk({ text: token, message: new AIMessageChunk({ content: token }) });
      yield chunk;
      await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk });
    }
    // The last chunk carries the tool calls, the usage and the finish reason, as OpenAI's stream does.
    const final = new ChatGenerationChunk({
      text: '',
      message: new AIMessageChunk({
        content: '',
        tool_call_chunks: (reply.toolCalls ?? []).map((call, index) => ({
          type: 'tool_call_chunk' as const,
          id: call.id,
          name: call.name,
          args: JSON.stringify(call.args),
          index,
        })),
        usage_metadata: usage,
        response_metadata: { model_name: this.model, finish_reason: reply.toolCalls?.length ? 'tool_calls' : 'stop' },
      }),
    });
    yield final;
    await runManager?.handleLLMNewToken('', undefined, undefined, undefined, undefined, { chunk: final });
  }
}
