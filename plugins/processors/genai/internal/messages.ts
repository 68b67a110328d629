// Chat messages from each convention, normalised into the OpenAI-style shape the backend renders:
// `{role, content, tool_calls?, tool_call_id?, name?}`, where `content` is a string or a list of
// `{type: 'text', text}` / `{type: 'image_url', image_url: {url}}` parts and each tool call is
// `{id, type: 'function', function: {name, arguments}}` with `arguments` as JSON text.

import type { AttributeMap, IndexedGroup } from './attributes.ts';
import { isPlainObject, parseJson } from './attributes.ts';

export interface ToolCall {
  id?: string;
  type: 'function';
  function: { name?: string; arguments?: string };
}

export interface Message {
  role?: string;
  content?: unknown;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
  finish_reason?: string;
}

/** Indices N present under `prefix.N.`, ascending (an index list may start at 1 or have holes). */
function indicesUnder(attributes: AttributeMap, prefix: string): number[] {
  const found = new Set<number>();
  const dotted = `${prefix}.`;
  for (const key of attributes.keysWithPrefix(dotted)) {
    const rest = key.slice(dotted.length);
    const end = rest.indexOf('.');
    const index = Number(end < 0 ? rest : rest.slice(0, end));
    if (Number.isInteger(index) && index >= 0) found.add(index);
  }
  return [...found].sort((a, b) => a - b);
}

/** Text of a value that should be a string (JSON for structured values). */
function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// Returns a copy without the undefined values instead of deleting them in place: deleting a
// property other than the last one turns the object into a slow dictionary, which JSON.stringify
// (run sizing in the batcher, the upload body) then walks on its slow path. For a two-message OTel
// list, building it and serialising it twice went from 2.2 – 3.4 to 1.1 – 1.6 µs.
function compact<T extends object>(object: T): T {
  let clean = true;
  for (const key in object) {
    if (object[key] === undefined) {
      clean = false;
      break;
    }
  }
  if (clean) return object;
  const copy = {} as Record<string, unknown>;
  for (const key in object) {
    const value = object[key];
    if (value === undefined) continue;
    // A `__proto__` key from parsed JSON is data: assigning it would set the copy's prototype.
    if (key === '__proto__')
      Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
    else copy[key] = value;
  }
  return copy as T;
}

/**
 * Indexed messages: OpenLLMetry `gen_ai.prompt.N.{role,content,tool_calls.M.*}` and OpenInference
 * `llm.input_messages.N.message.{role,content,contents.M.message_content.*,tool_calls.M.tool_call.*}`.
 *
 * Where each message's fields are follows from the keys alone, so it is worked out once per
 * attribute layout (`AttributeMap.derived`): the keys under `prefix` grouped by index, each field
 * found among its group's keys, and kept as positions in the attribute list. A span then reads its
 * values at those positions. Grouping the keys and searching each group per span (2026-11-26) was
 * still the largest part of translating an OpenInference or Traceloop model call, and a span of
 * any other convention walked its keys for each of the four prefixes to find none. Keys whose
 * indices are not written plainly take the key-by-key path, which reads them as it always did.
 */
export function indexedMessages(attributes: AttributeMap, prefix: string): Message[] {
  // The prefix names the plan derived for it: it is one of the conventions' four constants.
  const plans = attributes.derived(prefix, planIndexedMessages);
  return plans === undefined ? indexedMessagesByKey(attributes, prefix) : messagesFromPlans(attributes, plans);
}

/** Where one indexed message's fields are in the attribute list (-1: absent). */
interface MessagePlan {
  readonly role: number;
  readonly content: number;
  /** `contents.M.message_content.*` in order, read when there is no `content`. */
  readonly contentParts: readonly ContentPartPlan[];
  readonly name: number;
  readonly toolCallId: number;
  readonly finishReason: number;
  readonly toolCalls: readonly ToolCallPlan[];
}
interface ContentPartPlan {
  readonly text: number;
  readonly url: number;
}
interface ToolCallPlan {
  readonly id: number;
  readonly functionName: number;
  readonly name: number;
  readonly functionArguments: number;
  readonly arguments: number;
}

/** Undefined when an index is not written plainly (see `IndexedGroup`). */
function planIndexedMessages(attributes: AttributeMap, prefix: string): MessagePlan[] | undefined {
  const groups = attributes.groupsByIndex(`${prefix}.`);
  if (groups === undefined) return undefined;
  const plans: MessagePlan[] = [];
  for (const fields of groups) {
    // OpenInference nests each field under `.message.`; OpenLLMetry does not.
    const names = fields.hasFieldWithPrefix('message.') ? NESTED_MESSAGE : MESSAGE;
    const content = fields.position(names.content);
    let contentParts: ContentPartPlan[] = [];
    if (content < 0) {
      const parts = fields.groupsByIndex(names.contents);
      if (parts === undefined) return undefined;
      contentParts = parts.map((part) => ({
        text: part.position('message_content.text'),
        url: part.position('message_content.image.image.url'),
      }));
    }
    const calls = fields.groupsByIndex(names.toolCalls);
    if (calls === undefined) return undefined;
    plans.push({
      role: fields.position(names.role),
      content,
      contentParts,
      name: fields.position(names.name),
      toolCallId: fields.position(names.toolCallId),
      finishReason: fields.position(names.finishReason),
      toolCalls: calls.map(planToolCall),
    });
  }
  return plans;
}

/** `tool_calls.M.{id,name,arguments}` or `tool_calls.M.tool_call.{id,function.*}` of one grouped message. */
function planToolCall(call: IndexedGroup): ToolCallPlan {
  const names = call.hasFieldWithPrefix('tool_call.') ? NESTED_TOOL_CALL : TOOL_CALL;
  return {
    id: call.position(names.id),
    functionName: call.position(names.functionName),
    name: call.position(names.name),
    functionArguments: call.position(names.functionArguments),
    arguments: call.position(names.arguments),
  };
}

/**
 * The messages of one span from its layout's plans: role, content, name, tool call id, finish
 * reason and tool calls, in that order, each only when present; a message with none is left out.
 */
function messagesFromPlans(attributes: AttributeMap, plans: readonly MessagePlan[]): Message[] {
  const messages: Message[] = [];
  for (const plan of plans) {
    const message: Message = {};
    let empty = true;
    const role = attributes.stringAt(plan.role);
    if (role !== undefined) {
      message.role = role;
      empty = false;
    }
    const content =
      plan.content >= 0 ? attributes.jsonAt(plan.content) : plannedContentParts(attributes, plan.contentParts);
    if (content !== undefined) {
      message.content = content;
      empty = false;
    }
    const name = attributes.stringAt(plan.name);
    if (name !== undefined) {
      message.name = name;
      empty = false;
    }
    const toolCallId = attributes.stringAt(plan.toolCallId);
    if (toolCallId !== undefined) {
      message.tool_call_id = toolCallId;
      empty = false;
    }
    const finishReason = attributes.stringAt(plan.finishReason);
    if (finishReason !== undefined) {
      message.finish_reason = finishReason;
      empty = false;
    }
    if (plan.toolCalls.length > 0) {
      const calls: ToolCall[] = [];
      for (const call of plan.toolCalls) {
        calls.push(
          toolCall(
            attributes.stringAt(call.id),
            attributes.stringAt(call.functionName) ?? attributes.stringAt(call.name),
            textOf(attributes.jsonAt(call.functionArguments) ?? attributes.jsonAt(call.arguments)),
          ),
        );
      }
      message.tool_calls = calls;
      empty = false;
    }
    if (!empty) messages.push(message);
  }
  return messages;
}

// The field names of one indexed message, without and with OpenInference's `message.` level.
const MESSAGE = {
  role: 'role',
  content: 'content',
  contents: 'contents.',
  name: 'name',
  toolCallId: 'tool_call_id',
  finishReason: 'finish_reason',
  toolCalls: 'tool_calls.',
};
const NESTED_MESSAGE = {
  role: 'message.role',
  content: 'message.content',
  contents: 'message.contents.',
  name: 'message.name',
  toolCallId: 'message.tool_call_id',
  finishReason: 'message.finish_reason',
  toolCalls: 'message.tool_calls.',
};

/** `contents.M.message_content.{text,image.image.url}` of one message: text and image parts. */
function plannedContentParts(attributes: AttributeMap, plans: readonly ContentPartPlan[]): unknown[] | undefined {
  let parts: unknown[] | undefined;
  for (const plan of plans) {
    const text = attributes.stringAt(plan.text);
    const url = attributes.stringAt(plan.url);
    if (text !== undefined) (parts ??= []).push({ type: 'text', text });
    else if (url !== undefined) (parts ??= []).push({ type: 'image_url', image_url: { url } });
  }
  return parts;
}

/**
 * A tool call without the fields it lacks, built member by member in the order the backend's
 * records have them (`id`, `type`, `function: {name, arguments}`). Spreading a compacted `{id}`
 * into a literal, as before, cost a copy and a spread per call (the Vercel shape's model calls
 * spent 6 % of their translation in it).
 */
function toolCall(id: string | undefined, name: string | undefined, args: string | undefined): ToolCall {
  const call: ToolCall['function'] = {};
  if (name !== undefined) call.name = name;
  if (args !== undefined) call.arguments = args;
  return id === undefined ? { type: 'function', function: call } : { id, type: 'function', function: call };
}

const TOOL_CALL = {
  id: 'id',
  functionName: 'function.name',
  name: 'name',
  functionArguments: 'function.arguments',
  arguments: 'arguments',
};
const NESTED_TOOL_CALL = {
  id: 'tool_call.id',
  functionName: 'tool_call.function.name',
  name: 'tool_call.name',
  functionArguments: 'tool_call.function.arguments',
  arguments: 'tool_call.arguments',
};

/** `indexedMessages` key by key: any index `Number` reads, its fields looked up by the index written plainly. */
export function indexedMessagesByKey(attributes: AttributeMap, prefix: string): Message[] {
  const messages: Message[] = [];
  for (const index of indicesUnder(attributes, prefix)) {
    const base =
      attributes.keysWithPrefix(`${prefix}.${index}.message.`).length > 0
        ? `${prefix}.${index}.message`
        : `${prefix}.${index}`;
    const message: Message = compact({
      role: attributes.string(`${base}.role`),
      content: attributes.value(`${base}.content`)
        ? attributes.json(`${base}.content`)
        : contentParts(attributes, `${base}.contents`),
      name: attributes.string(`${base}.name`),
      tool_call_id: attributes.string(`${base}.tool_call_id`),
      finish_reason: attributes.string(`${base}.finish_reason`),
    });
    const toolCalls = indexedToolCalls(attributes, `${base}.tool_calls`);
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (Object.keys(message).length > 0) messages.push(message);
  }
  return messages;
}

/** OpenInference multimodal `contents.M.message_content.{type,text,image.image.url}`. */
function contentParts(attributes: AttributeMap, prefix: string): unknown[] | undefined {
  const parts: unknown[] = [];
  for (const index of indicesUnder(attributes, prefix)) {
    const base = `${prefix}.${index}.message_content`;
    const text = attributes.string(`${base}.text`);
    const url = attributes.string(`${base}.image.image.url`);
    if (text !== undefined) parts.push({ type: 'text', text });
    else if (url !== undefined) parts.push({ type: 'image_url', image_url: { url } });
  }
  return parts.length > 0 ? parts : undefined;
}

/** `…tool_calls.M.{id,name,arguments}` (OpenLLMetry) or `…tool_calls.M.tool_call.{id,function.*}`. */
function indexedToolCalls(attributes: AttributeMap, prefix: string): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const index of indicesUnder(attributes, prefix)) {
    const nested = `${prefix}.${index}.tool_call`;
    const base = attributes.keysWithPrefix(`${nested}.`).length > 0 ? nested : `${prefix}.${index}`;
    calls.push(
      toolCall(
        attributes.string(`${base}.id`),
        attributes.string(`${base}.function.name`) ?? attributes.string(`${base}.name`),
        textOf(attributes.json(`${base}.function.arguments`) ?? attributes.json(`${base}.arguments`)),
      ),
    );
  }
  return calls;
}

/**
 * OTel GenAI `gen_ai.input.messages` / `gen_ai.output.messages` (JSON): `[{role, parts: [{type:
 * 'text', content} | {type: 'tool_call', id, name, arguments} | {type: 'tool_call_response', id,
 * response} | ...], finish_reason?}]`.
 */
export function otelMessages(value: unknown): Message[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const messages: Message[] = [];
  for (const item of value) {
    if (!isPlainObject(item)) continue;
    if (!Array.isArray(item.parts)) {
      messages.push(genericMessage(item));
      continue;
    }
    // Text parts are kept as their text (see `contentOf`).
    const texts: unknown[] = [];
    const toolCalls: ToolCall[] = [];
    let toolCallId: string | undefined;
    for (const part of item.parts) {
      if (!isPlainObject(part)) continue;
      switch (part.type) {
        case 'text':
          texts.push(textOf(part.content) ?? '');
          break;
        case 'tool_call':
          toolCalls.push(toolCall(textOf(part.id), textOf(part.name), textOf(part.arguments)));
          break;
        case 'tool_call_response':
          toolCallId = textOf(part.id);
          texts.push(textOf(part.response) ?? '');
          break;
        default:
          texts.push(part);
      }
    }
    messages.push(partsMessage(item, texts, toolCallId, toolCalls, OTEL_MEMBERS));
  }
  return messages;
}

/** Whether a convention's messages carry `name` and `finish_reason` beside their parts. */
interface PartsMessageMembers {
  readonly nameAndFinishReason: boolean;
}
const OTEL_MEMBERS: PartsMessageMembers = { nameAndFinishReason: true };
const VERCEL_MEMBERS: PartsMessageMembers = { nameAndFinishReason: false };

/**
 * The message made of a structured message's gathered parts: role, content, tool call id, (name,
 * finish reason,) tool calls, in that order, each only when present.
 */
function partsMessage(
  item: Record<string, unknown>,
  texts: unknown[],
  toolCallId: string | undefined,
  toolCalls: ToolCall[],
  members: PartsMessageMembers,
): Message {
  const message: Message = {};
  const role = textOf(item.role);
  if (role !== undefined) message.role = role;
  const content = contentOf(texts);
  if (content !== undefined) message.content = content;
  if (toolCallId !== undefined) message.tool_call_id = toolCallId;
  if (members.nameAndFinishReason) {
    const name = textOf(item.name);
    if (name !== undefined) message.name = name;
    const finishReason = textOf(item.finish_reason);
    if (finishReason !== undefined) message.finish_reason = finishReason;
  }
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}

/** `gen_ai.system_instructions` (JSON parts, or plain text) as one system message. */
export function systemInstructions(value: unknown): Message | undefined {
  if (typeof value === 'string' && value !== '') return { role: 'system', content: value };
  if (!Array.isArray(value)) return undefined;
  const parts = value.map((part) =>
    isPlainObject(part) && part.type === 'text' ? { type: 'text', text: textOf(part.content) ?? '' } : part,
  );
  const content = simplifyContent(parts);
  return content === undefined ? undefined : { role: 'system', content };
}

/**
 * `simplifyContent` of parts where a text part the translator makes is given as its text (a
 * string), since a message's parts are mostly text only and the part objects made for them were
 * dropped again at once: the texts joined when every part is text, the list of parts otherwise,
 * with a `{type: 'text', text}` part for each string.
 */
function contentOf(parts: unknown[]): unknown {
  if (parts.length === 0) return undefined;
  let allText = true;
  for (const part of parts) {
    if (typeof part !== 'string' && !isTextPart(part)) {
      allText = false;
      break;
    }
  }
  if (!allText) return parts.map((part) => (typeof part === 'string' ? { type: 'text', text: part } : part));
  if (parts.length === 1) return typeof parts[0] === 'string' ? parts[0] : (parts[0] as { text: string }).text;
  return parts.map((part) => (typeof part === 'string' ? part : (part as { text: string }).text)).join('');
}

function isTextPart(part: unknown): boolean {
  return isPlainObject(part) && part.type === 'text' && typeof part.text === 'string';
}

/** A list of only text parts becomes one string; anything else stays a list of parts. */
function simplifyContent(parts: unknown[]): unknown {
  if (parts.length === 0) return undefined;
  const allText = parts.every((part) => isPlainObject(part) && part.type === 'text' && typeof part.text === 'string');
  return allText ? parts.map((part) => (part as { text: string }).text).join('') : parts;
}

/**
 * Vercel AI SDK prompt messages (`ai.prompt.messages`): `{role, content}` where content is a string
 * or parts `{type: 'text', text}`, `{type: 'tool-call', toolCallId, toolName, args|input}`,
 * `{type: 'tool-result', toolCallId, result|output}`.
 */
export function vercelMessages(value: unknown): Message[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const messages: Message[] = [];
  for (const item of value) {
    if (!isPlainObject(item)) continue;
    if (!Array.isArray(item.content)) {
      messages.push(genericMessage(item));
      continue;
    }
    // Text parts are kept as their text (see `contentOf`).
    const texts: unknown[] = [];
    const toolCalls: ToolCall[] = [];
    let toolCallId: string | undefined;
    for (const part of item.content) {
      if (!isPlainObject(part)) continue;
      if (part.type === 'tool-call') {
        toolCalls.push(vercelToolCall(part));
      } else if (part.type === 'tool-result') {
        toolCallId = textOf(part.toolCallId);
        texts.push(textOf(part.result ?? part.output) ?? '');
      } else if (part.type === 'image' && typeof part.image === 'string') {
        texts.push({ type: 'image_url', image_url: { url: part.image } });
      } else {
        texts.push(part);
      }
    }
    messages.push(partsMessage(item, texts, toolCallId, toolCalls, VERCEL_MEMBERS));
  }
  return messages;
}

/** A Vercel tool call (`ai.response.toolCalls` entries and `tool-call` parts). */
export function vercelToolCall(part: Record<string, unknown>): ToolCall {
  return toolCall(textOf(part.toolCallId), textOf(part.toolName), textOf(part.args ?? part.input));
}

/** A message-like object already close to the target shape; structured content is kept. */
function genericMessage(item: Record<string, unknown>): Message {
  const { role, content, ...rest } = item;
  return compact({ role: textOf(role), content, ...rest }) as Message;
}

/** Whether a parsed JSON value looks like a list of chat messages (every item has a role). */
export function looksLikeMessages(value: unknown): value is Record<string, unknown>[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => isPlainObject(item) && typeof item.role === 'string')
  );
}

/** JSON text that is a list of messages, normalised; undefined otherwise. */
export function messagesFromJsonText(text: string): Message[] | undefined {
  const parsed = parseJson(text);
  return looksLikeMessages(parsed) ? vercelMessages(parsed) : undefined;
}
