// What span events say about a run: OTel GenAI message events (the conversation history, which is
// input, whatever the speaker), `gen_ai.choice` events (the completion, every choice kept), the
// legacy `gen_ai.content.prompt`/`completion` events, and the first `exception` event.

import type { SpanEvent } from 'tracepipe/plugin';
import { AttributeMap, arrayOf, isPlainObject, objectOf, parseJson } from './attributes.ts';
import type { Message, ToolCall } from './messages.ts';

export interface EventFacts {
  /** Conversation history from the message events, in order. */
  inputMessages: Message[];
  /** One entry per `gen_ai.choice` event, OpenAI-style: `{index?, finish_reason?, message}`. */
  choices: Record<string, unknown>[];
  /** From `gen_ai.content.prompt`: an object, or `{input: text}`. */
  prompt?: Record<string, unknown>;
  /** From `gen_ai.content.completion`: an object, or `{output: text}`. */
  completion?: Record<string, unknown>;
  /** From the first `exception` event. */
  exception?: { message?: string; type?: string; stacktrace?: string };
}

const MESSAGE_ROLES: Readonly<Record<string, string>> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

// What a span without events says: most spans have none, and its two lists were two arrays and an
// object made per span. Frozen, since every span without events shares it.
const NO_EVENTS: EventFacts = Object.freeze({
  inputMessages: Object.freeze([]) as unknown as Message[],
  choices: Object.freeze([]) as unknown as Record<string, unknown>[],
});

export function readEvents(events: readonly SpanEvent[]): EventFacts {
  if (events.length === 0) return NO_EVENTS;
  const facts: EventFacts = { inputMessages: [], choices: [] };
  for (const event of events) {
    const attributes = new AttributeMap(event.attributes);
    const role = MESSAGE_ROLES[event.name];
    if (role !== undefined) {
      facts.inputMessages.push(messageFromEvent(attributes, role));
    } else if (event.name === 'gen_ai.choice') {
      facts.choices.push(choiceFromEvent(attributes));
    } else if (event.name === 'gen_ai.content.prompt') {
      const text = attributes.string('gen_ai.prompt');
      if (text !== undefined) facts.prompt = objectOf(attributes.value('gen_ai.prompt')) ?? { input: text };
    } else if (event.name === 'gen_ai.content.completion') {
      const text = attributes.string('gen_ai.completion');
      if (text !== undefined) facts.completion = objectOf(attributes.value('gen_ai.completion')) ?? { output: text };
    } else if (event.name === 'exception' && !facts.exception) {
      facts.exception = {
        message: attributes.string('exception.message'),
        type: attributes.string('exception.type'),
        stacktrace: attributes.string('exception.stacktrace'),
      };
    }
  }
  return facts;
}

/** The Semantic Kernel form: the whole message as JSON in `gen_ai.event.content`. */
function eventContent(attributes: AttributeMap): Record<string, unknown> | undefined {
  const text = attributes.string('gen_ai.event.content');
  if (text === undefined) return undefined;
  const parsed = parseJson(text);
  return isPlainObject(parsed) ? parsed : undefined;
}

function messageFromEvent(attributes: AttributeMap, role: string): Message {
  const whole = eventContent(attributes);
  if (whole) return { role, ...whole } as Message;
  const message: Message = { role: attributes.string('role') ?? role };
  const content = attributes.json('content');
  if (content !== undefined) message.content = content;
  const id = attributes.string('id');
  if (id !== undefined && role === 'tool') message.tool_call_id = id;
  // An array value, or JSON text: the span event APIs of OpenTelemetry JS and Python take only
  // primitive values and arrays of them, so instrumentations send structured values as JSON text.
  const toolCalls = arrayOf(attributes.value('tool_calls'));
  if (toolCalls !== undefined && toolCalls.length > 0) message.tool_calls = toolCalls as ToolCall[];
  return message;
}

function choiceFromEvent(attributes: AttributeMap): Record<string, unknown> {
  const whole = eventContent(attributes);
  if (whole && 'message' in whole) return whole;
  const choice: Record<string, unknown> = {};
  const index = attributes.number('index');
  if (index !== undefined) choice.index = index;
  const finishReason = attributes.string('finish_reason');
  if (finishReason !== undefined) choice.finish_reason = finishReason;
  // The current form carries the message as one structured `message` attribute (a map, or JSON
  // text where the event API takes no maps); the older one flattens it into `message.role`,
  // `message.content` and `tool_calls.N.*`.
  const structured = objectOf(attributes.value('message'));
  const message: Record<string, unknown> = structured ? { ...structured } : {};
  const role = attributes.string('message.role');
  if (role !== undefined) message.role = role;
  const content = attributes.json('message.content');
  if (content !== undefined) message.content = content;
  const toolCalls: ToolCall[] = [];
  for (let n = 0; attributes.has(`tool_calls.${n}.id`) || attributes.has(`tool_calls.${n}.function.name`); n++) {
    const call: ToolCall = { type: 'function', function: {} };
    const id = attributes.string(`tool_calls.${n}.id`);
    if (id !== undefined) call.id = id;
    const name = attributes.string(`tool_calls.${n}.function.name`);
    if (name !== undefined) call.function.name = name;
    const args = attributes.json(`tool_calls.${n}.function.arguments`);
    if (args !== undefined) call.function.arguments = typeof args === 'string' ? args : JSON.stringify(args);
    toolCalls.push(call);
  }
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  choice.message = message;
  return choice;
}
