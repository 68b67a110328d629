// A run's `inputs` and `outputs`: the first convention that says something wins, structured
// messages before free text. See the README's mapping tables for the full precedence.

import type { RunType } from 'tracepipe/plugin';
import { SharedJsonCache } from 'tracepipe/plugin';
import type { AttributeMap } from './attributes.ts';
import { isPlainObject, objectOf, parseJson } from './attributes.ts';
import type { EventFacts } from './events.ts';
import type { Message } from './messages.ts';
import {
  indexedMessages,
  looksLikeMessages,
  otelMessages,
  systemInstructions,
  vercelMessages,
  vercelToolCall,
} from './messages.ts';

type Io = Record<string, unknown>;

const INPUT_TEXT_KEYS = [
  'input.value',
  'traceloop.entity.input',
  'gen_ai.prompt',
  'prompt',
  'ai.toolCall.args',
  'ai.toolCall.input',
];
const OUTPUT_TEXT_KEYS = [
  'output.value',
  'traceloop.entity.output',
  'gen_ai.completion',
  'all_messages_events',
  'ai.response.object',
  'ai.toolCall.result',
  'ai.toolCall.output',
  'ai.result.text',
  'ai.result.object',
];

export function inputsOf(attributes: AttributeMap, events: EventFacts, runType: RunType): Io | undefined {
  if (runType === 'prompt') {
    const variables = objectOf(attributes.value('llm.prompt_template.variables'));
    if (variables) return variables;
  }
  if (runType === 'retriever') {
    const query = attributes.string('input.value');
    if (query !== undefined) return { query };
  }
  const messages = inputMessagesOf(attributes, events);
  if (messages) return { messages };
  if (events.prompt) return events.prompt;
  const vercelPrompt = vercelPromptOf(attributes);
  if (vercelPrompt) return vercelPrompt;
  const key = INPUT_TEXT_KEYS.find((candidate) => attributes.string(candidate) !== undefined);
  if (key !== undefined) {
    const plainText = key === 'input.value' && attributes.string('input.mime_type') === 'text/plain';
    return textToIo(attributes.string(key)!, 'input', plainText);
  }
  return logfireEvents(attributes).inputs;
}

function inputMessagesOf(attributes: AttributeMap, events: EventFacts): Message[] | undefined {
  const system = systemInstructions(systemInstructionsJson(attributes));
  const found = firstInputMessages(attributes, events);
  if (system) return [system, ...(found ?? [])];
  return found;
}

// Each convention's input messages, in order of precedence; the first non-empty list wins. Read one
// after the other rather than all first: a span that carries more than one convention (the Vercel
// AI SDK's provider calls with `gen_ai.*` as well) had every one of them parsed and built.
function firstInputMessages(attributes: AttributeMap, events: EventFacts): Message[] | undefined {
  const otel = otelMessages(parseMaybeJson(attributes.json('gen_ai.input.messages')));
  if (otel !== undefined && otel.length > 0) return otel;
  if (events.inputMessages.length > 0) return events.inputMessages;
  const traceloop = indexedMessages(attributes, 'gen_ai.prompt');
  if (traceloop.length > 0) return traceloop;
  const openInference = indexedMessages(attributes, 'llm.input_messages');
  if (openInference.length > 0) return openInference;
  const vercel = vercelMessages(parseMaybeJson(attributes.json('ai.prompt.messages')));
  return vercel !== undefined && vercel.length > 0 ? vercel : undefined;
}

// An application sends the same system instructions with every model call: parsed once per text
// and shared (src/model/shared-json.ts), as tool definitions are.
const systemInstructionTexts = new SharedJsonCache(256, 65_536);
const parseList = (text: string) => {
  const parsed = parseJson(text);
  return Array.isArray(parsed) ? parsed : undefined;
};

/** `gen_ai.system_instructions` as parsed JSON (a list of parts), or its value as it is. */
function systemInstructionsJson(attributes: AttributeMap): unknown {
  const value = attributes.value('gen_ai.system_instructions');
  if (value?.type === 'string') {
    const parts = systemInstructionTexts.get(value.value, parseList);
    if (parts !== undefined) return parts;
  }
  return parseMaybeJson(attributes.json('gen_ai.system_instructions'));
}

/** Vercel AI SDK `ai.prompt`: JSON `{system?, prompt?, messages?}`. */
function vercelPromptOf(attributes: AttributeMap): Io | undefined {
  const prompt = objectOf(attributes.value('ai.prompt'));
  if (!prompt) return undefined;
  const messages: Message[] = [];
  if (typeof prompt.system === 'string') messages.push({ role: 'system', content: prompt.system });
  if (Array.isArray(prompt.messages)) messages.push(...(vercelMessages(prompt.messages) ?? []));
  if (typeof prompt.prompt === 'string') messages.push({ role: 'user', content: prompt.prompt });
  return messages.length > 0 ? { messages } : prompt;
}

export function outputsOf(attributes: AttributeMap, events: EventFacts, runType: RunType): Io | undefined {
  if (runType === 'retriever') {
    const documents = documentsOf(attributes);
    if (documents.length > 0) return { documents };
  }
  const otel = otelMessages(parseMaybeJson(attributes.json('gen_ai.output.messages')));
  if (otel && otel.length > 0) return { messages: otel };
  if (events.choices.length > 0) return { choices: events.choices };
  if (events.completion) return events.completion;
  for (const prefix of ['gen_ai.completion', 'llm.output_messages']) {
    const messages = indexedMessages(attributes, prefix);
    if (messages.length > 0) return { messages };
  }
  const vercel = vercelResponseOf(attributes);
  if (vercel) return vercel;
  const key = OUTPUT_TEXT_KEYS.find((candidate) => attributes.string(candidate) !== undefined);
  if (key !== undefined) {
    const plainText = key === 'output.value' && attributes.string('output.mime_type') === 'text/plain';
    return textToIo(attributes.string(key)!, 'text', plainText);
  }
  return logfireEvents(attributes).outputs;
}

/** Vercel AI SDK `ai.response.text` and `ai.response.toolCalls` as one assistant message. */
function vercelResponseOf(attributes: AttributeMap): Io | undefined {
  const text = attributes.string('ai.response.text');
  const toolCalls = parseMaybeJson(attributes.json('ai.response.toolCalls'));
  if (text === undefined && !Array.isArray(toolCalls)) return undefined;
  const message: Message = { role: 'assistant', content: text ?? '' };
  if (Array.isArray(toolCalls) && toolCalls.length > 0) {
    message.tool_calls = toolCalls.filter(isPlainObject).map(vercelToolCall);
  }
  const finishReason = attributes.string('ai.response.finishReason');
  if (finishReason !== undefined) message.finish_reason = finishReason;
  return { messages: [message] };
}

/**
 * Free text as inputs or outputs: a JSON object is used as it is, a JSON list of messages becomes
 * `{messages}`, anything else is wrapped as `{[wrapKey]: text}` (`input` for inputs, `text` for
 * outputs, as the reference names them).
 */
export function textToIo(text: string, wrapKey: 'input' | 'text', plainText = false): Io {
  if (!plainText) {
    const parsed = parseJson(text);
    if (isPlainObject(parsed)) return parsed;
    if (looksLikeMessages(parsed)) return { messages: vercelMessages(parsed) };
  }
  return { [wrapKey]: text };
}

/** Attribute values that may hold JSON text or already-structured values. */
function parseMaybeJson(value: unknown): unknown {
  return typeof value === 'string' ? (parseJson(value) ?? value) : value;
}

/** OpenInference `retrieval.documents.N.document.{content,metadata,id,score}`, every index kept. */
function documentsOf(attributes: AttributeMap): Record<string, unknown>[] {
  const indices = new Set<number>();
  for (const key of attributes.keysWithPrefix('retrieval.documents.')) {
    const index = Number(key.slice('retrieval.documents.'.length).split('.')[0]);
    if (Number.isInteger(index) && index >= 0) indices.add(index);
  }
  const documents: Record<string, unknown>[] = [];
  for (const index of [...indices].sort((a, b) => a - b)) {
    const base = `retrieval.documents.${index}.document`;
    const content = attributes.string(`${base}.content`);
    if (content === undefined) continue;
    const metadata: Record<string, unknown> = { ...(objectOf(attributes.value(`${base}.metadata`)) ?? {}) };
    const score = attributes.number(`${base}.score`);
    if (score !== undefined) metadata.score = score;
    const document: Record<string, unknown> = { page_content: content, metadata, type: 'Document' };
    const id =
      attributes.string(`${base}.id`) ??
      (attributes.has(`${base}.id`) ? String(attributes.json(`${base}.id`)) : undefined);
    if (id !== undefined) document.id = id;
    documents.push(document);
  }
  return documents;
}

/**
 * Logfire's `events` attribute: a list (JSON text or an OTLP array) of event objects named by
 * `event.name`; choices are the output, the rest the input.
 */
function logfireEvents(attributes: AttributeMap): { inputs?: Io; outputs?: Io } {
  const raw = parseMaybeJson(attributes.json('events'));
  if (!Array.isArray(raw)) return {};
  const parsed = raw.map((item) => parseMaybeJson(item)).filter(isPlainObject);
  const choices = parsed.filter((event) => event['event.name'] === 'gen_ai.choice');
  const others = parsed.filter((event) => event['event.name'] !== 'gen_ai.choice');
  return {
    inputs: others.length > 0 ? { input: others } : undefined,
    outputs: choices.length > 0 ? choices[choices.length - 1] : undefined,
  };
}
