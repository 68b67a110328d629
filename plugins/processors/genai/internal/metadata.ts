// A run's `extra.metadata` and `tags`. Metadata gathers the provider and model names the backend
// reads (`ls_provider`, `ls_model_name`), the thread and user keys it groups by, and each
// convention's free-form metadata; the OTel ids are written last so that no attribute can
// overwrite them.

import type { AttributeMap } from './attributes.ts';
import { arrayOf, objectOf } from './attributes.ts';
import { modelOf, providerOf } from './invocation.ts';

// Single attributes whose meaning has a metadata key the backend understands: `session_id`,
// `thread_id` and `conversation_id` group traces into threads.
const NAMED_METADATA: readonly (readonly [string, string])[] = [
  ['session.id', 'session_id'],
  ['user.id', 'user_id'],
  ['gen_ai.conversation.id', 'conversation_id'],
  ['gen_ai.agent.name', 'agent_name'],
  ['gen_ai.agent.id', 'agent_id'],
  // The Vercel AI SDK's response id first, so that an OTel GenAI one on the same span wins.
  ['ai.response.id', 'response_id'],
  ['gen_ai.response.id', 'response_id'],
  ['gen_ai.response.finish_reasons', 'finish_reasons'],
  ['ai.telemetry.functionId', 'function_id'],
];

// Free-form metadata namespaces, lowest priority first: a later one overwrites an earlier one.
const METADATA_PREFIXES = ['traceloop.association.properties.', 'ai.telemetry.metadata.', 'langsmith.metadata.'];

/** `traceId` and `spanId` are the span's ids as received (hex), written last. */
export function metadataOf(attributes: AttributeMap, traceId: string, spanId: string): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  const provider = providerOf(attributes);
  if (provider !== undefined) metadata.ls_provider = provider;
  const model = modelOf(attributes);
  if (model !== undefined) metadata.ls_model_name = model;
  for (const [key, name] of NAMED_METADATA) {
    if (attributes.has(key)) metadata[name] = attributes.json(key);
  }
  // OpenInference's JSON `metadata` attribute.
  const openInference = objectOf(attributes.value('metadata'));
  if (openInference) Object.assign(metadata, openInference);
  for (const prefix of METADATA_PREFIXES) {
    const { keys, names } = attributes.namespace(prefix);
    for (let i = 0; i < keys.length; i++) metadata[names[i]!] = attributes.json(keys[i]!);
  }
  metadata.OTEL_TRACE_ID = traceId;
  metadata.OTEL_SPAN_ID = spanId;
  return metadata;
}

/** `langsmith.span.tags` (comma-separated text or a list) and OpenInference `tag.tags`. */
export function tagsOf(attributes: AttributeMap): string[] | undefined {
  const tags: string[] = [];
  for (const key of ['langsmith.span.tags', 'tag.tags']) {
    const value = attributes.value(key);
    if (!value) continue;
    const list = arrayOf(value) ?? (value.type === 'string' ? value.value.split(',') : []);
    for (const tag of list) {
      const text = typeof tag === 'string' ? tag.trim() : String(tag);
      if (text !== '' && !tags.includes(text)) tags.push(text);
    }
  }
  return tags.length > 0 ? tags : undefined;
}
