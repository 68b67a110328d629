// The call's parameters (`extra.invocation_params`) and the provider and model names the backend
// reads from `extra.metadata` (`ls_provider`, `ls_model_name`).

import type { AnyValue } from 'tracepipe/plugin';
import type { AttributeMap } from './attributes.ts';
import { SharedJsonCache } from 'tracepipe/plugin';
import { arrayOf, KeyList, objectOf, parseJson, toJson } from './attributes.ts';

const PROVIDER_KEYS = new KeyList([
  'gen_ai.provider.name',
  'gen_ai.system',
  'llm.provider',
  'llm.system',
  'ai.model.provider',
]);
const MODEL_KEYS = new KeyList([
  'gen_ai.request.model',
  'gen_ai.response.model',
  'model',
  'llm.model_name',
  'ai.model.id',
  'ai.response.model',
]);
// The model actually used (response) is what the call ran with; the request model is the fallback.
const CALLED_MODEL_KEYS = new KeyList([
  'gen_ai.response.model',
  'gen_ai.request.model',
  'llm.model_name',
  'ai.model.id',
]);
const TOOL_NAME_KEYS = new KeyList(['gen_ai.tool.name', 'ai.toolCall.name']);
const TOOL_CALL_ID_KEYS = new KeyList(['gen_ai.tool.call.id', 'ai.toolCall.id']);

// Vercel AI SDK settings (`ai.settings.*`) under their OpenAI-style names.
const VERCEL_SETTINGS: Readonly<Record<string, string>> = {
  maxOutputTokens: 'max_tokens',
  maxTokens: 'max_tokens',
  temperature: 'temperature',
  topP: 'top_p',
  topK: 'top_k',
  presencePenalty: 'presence_penalty',
  frequencyPenalty: 'frequency_penalty',
  seed: 'seed',
  stopSequences: 'stop_sequences',
  maxRetries: 'max_retries',
};

export function providerOf(attributes: AttributeMap): string | undefined {
  return attributes.firstString(PROVIDER_KEYS);
}

export function modelOf(attributes: AttributeMap): string | undefined {
  return attributes.firstString(MODEL_KEYS);
}

/** `extra.invocation_params`, or undefined when the span carries none. */
export function invocationParamsOf(attributes: AttributeMap): Record<string, unknown> | undefined {
  const params: Record<string, unknown> = {};
  const model = attributes.firstString(CALLED_MODEL_KEYS);
  if (model !== undefined) params.model = model;
  const request = attributes.namespace('gen_ai.request.');
  for (let i = 0; i < request.keys.length; i++) {
    const name = request.names[i]!;
    if (name === 'model') continue;
    params[name] = attributes.json(request.keys[i]!);
  }
  const settings = attributes.namespace('ai.settings.');
  for (let i = 0; i < settings.keys.length; i++) {
    const name = settings.names[i]!;
    params[VERCEL_SETTINGS[name] ?? name] = attributes.json(settings.keys[i]!);
  }
  for (const key of ['llm.presence_penalty', 'llm.frequency_penalty', 'llm.top_p', 'llm.temperature']) {
    if (attributes.has(key)) params[key.slice('llm.'.length)] = attributes.json(key);
  }
  const functions = functionsOf(attributes);
  if (functions !== undefined) params.functions = functions;
  const tools = toolsOf(attributes);
  if (tools !== undefined) params.tools = tools;
  if (attributes.has('ai.prompt.toolChoice')) {
    params.tool_choice = objectOf(attributes.value('ai.prompt.toolChoice')) ?? attributes.json('ai.prompt.toolChoice');
  }
  const toolName = attributes.firstString(TOOL_NAME_KEYS);
  if (toolName !== undefined) params.tool_name = toolName;
  const toolCallId = attributes.firstString(TOOL_CALL_ID_KEYS);
  if (toolCallId !== undefined) params.tool_call_id = toolCallId;
  if (attributes.has('tool_arguments')) {
    params.tool_arguments = objectOf(attributes.value('tool_arguments')) ?? attributes.json('tool_arguments');
  }
  // OpenInference's JSON invocation parameters are the most complete record; they win.
  const openInference = objectOf(attributes.value('llm.invocation_parameters'));
  if (openInference) Object.assign(params, openInference);
  return Object.keys(params).length > 0 ? params : undefined;
}

// An application sends the same tool definitions with every model call: parsed once, and shared by
// the runs (src/model/shared-json.ts). 256 texts of up to 64 KiB: a few MB at worst.
const toolDefinitions = new SharedJsonCache(256, 65_536);
const parseArray = (text: string) => arrayOf({ type: 'string', value: text });
// OpenInference sends each tool's schema as JSON text of its own, as often as the definitions.
const parseObject = (text: string) => {
  const parsed = parseJson(text);
  return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
};

/**
 * Tool definitions: `gen_ai.tool.definitions`, OpenInference `llm.tools.N.tool.json_schema`, the
 * Vercel AI SDK's `ai.prompt.tools`, `tools`.
 */
function toolsOf(attributes: AttributeMap): readonly unknown[] | undefined {
  const value = attributes.value('gen_ai.tool.definitions');
  const definitions = value?.type === 'string' ? toolDefinitions.get(value.value, parseArray) : arrayOf(value);
  if (definitions) return definitions;
  const indexed: unknown[] = [];
  // The first key is a constant, so that a span without tools does not make (and hash) a new string.
  for (
    let n = 0;
    n === 0 ? attributes.has('llm.tools.0.tool.json_schema') : attributes.has(`llm.tools.${n}.tool.json_schema`);
    n++
  ) {
    const schema = attributes.string(`llm.tools.${n}.tool.json_schema`);
    if (schema === undefined) indexed.push(attributes.json(`llm.tools.${n}.tool.json_schema`));
    else indexed.push(toolDefinitions.get(schema, parseObject) ?? parseJson(schema) ?? schema);
  }
  if (indexed.length > 0) return indexed;
  const vercel = attributes.value('ai.prompt.tools');
  if (vercel !== undefined) return vercelToolsOf(vercel);
  if (!attributes.has('tools')) return undefined;
  const tools = attributes.value('tools')!;
  if (tools.type === 'string') return arrayOf(tools) ?? [tools.value];
  return arrayOf(tools) ?? [attributes.json('tools')];
}

/**
 * The Vercel AI SDK sends its tools as a list of JSON texts, one per tool (`{type: "function", name,
 * description, parameters}`), the same with every call: each is parsed once and shared. A text
 * that is not a JSON object is kept as it came, as OpenInference's are.
 */
function vercelToolsOf(value: AnyValue): readonly unknown[] {
  if (value.type !== 'array') return arrayOf(value) ?? [toJson(value)];
  return value.value.map(sharedToolJson);
}

/** A tool's JSON object text parsed once and shared (other text kept as it came); any other value as JSON. */
function sharedToolJson(value: AnyValue): unknown {
  return value.type === 'string' ? (toolDefinitions.get(value.value, parseObject) ?? value.value) : toJson(value);
}

/**
 * `llm.request.functions` as sent, else Traceloop's numbered form (OpenLLMetry records each tool of a
 * call as `llm.request.functions.N.name`, `.description` and `.parameters`, the JSON schema as text)
 * as a list of `{name, description, parameters}`.
 */
function functionsOf(attributes: AttributeMap): unknown {
  if (attributes.has('llm.request.functions')) return attributes.json('llm.request.functions');
  // The first key is a constant, so that a span without functions does not make (and hash) a new string.
  if (!attributes.has('llm.request.functions.0.name')) return undefined;
  const functions: unknown[] = [];
  for (let n = 0; n === 0 || attributes.has(`llm.request.functions.${n}.name`); n++) {
    const fn: Record<string, unknown> = { name: attributes.json(`llm.request.functions.${n}.name`) };
    const description = attributes.json(`llm.request.functions.${n}.description`);
    if (description !== undefined) fn.description = description;
    const parameters = attributes.value(`llm.request.functions.${n}.parameters`);
    if (parameters !== undefined) fn.parameters = sharedToolJson(parameters);
    functions.push(fn);
  }
  return functions;
}
