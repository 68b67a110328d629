// Token usage from each convention, as the backend's `usage_metadata`: input, output and total
// tokens (the total computed when not sent), plus cache and reasoning details when present.

import type { AttributeMap } from './attributes.ts';
import { KeyList, objectOf } from './attributes.ts';

const INPUT_KEYS = [
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.prompt_tokens',
  'llm.token_count.prompt',
  'llm.usage.prompt_tokens',
  'ai.usage.inputTokens',
  'ai.usage.promptTokens',
];
const OUTPUT_KEYS = [
  'gen_ai.usage.output_tokens',
  'gen_ai.usage.completion_tokens',
  'llm.token_count.completion',
  'llm.usage.completion_tokens',
  'ai.usage.outputTokens',
  'ai.usage.completionTokens',
];
const TOTAL_KEYS = [
  'gen_ai.usage.total_tokens',
  'llm.usage.total_tokens',
  'llm.token_count.total',
  'ai.usage.totalTokens',
];
const CACHE_READ_KEYS = [
  'gen_ai.usage.cache_read.input_tokens',
  'gen_ai.usage.cache_read_input_tokens',
  'llm.token_count.prompt_details.cache_read',
];
const CACHE_WRITE_KEYS = [
  'gen_ai.usage.cache_creation.input_tokens',
  'gen_ai.usage.cache_creation_input_tokens',
  'llm.token_count.prompt_details.cache_write',
];
const REASONING_KEYS = [
  'gen_ai.usage.reasoning.output_tokens',
  'llm.token_count.completion_details.reasoning',
  'ai.usage.reasoningTokens',
];

const INPUT = new KeyList(INPUT_KEYS);
const OUTPUT = new KeyList(OUTPUT_KEYS);
const TOTAL = new KeyList(TOTAL_KEYS);
const CACHE_READ = new KeyList(CACHE_READ_KEYS);
const CACHE_WRITE = new KeyList(CACHE_WRITE_KEYS);
const REASONING = new KeyList(REASONING_KEYS);

/** The span's usage, or undefined when it reports none. */
export function usageOf(attributes: AttributeMap): Record<string, unknown> | undefined {
  const explicit = objectOf(attributes.value('langsmith.usage_metadata'));
  if (explicit) return explicit;

  const input = attributes.firstNumber(INPUT);
  const output = attributes.firstNumber(OUTPUT);
  const total = attributes.firstNumber(TOTAL);
  if (input === undefined && output === undefined && total === undefined) return undefined;

  const usage: Record<string, unknown> = {
    input_tokens: input ?? 0,
    output_tokens: output ?? 0,
    total_tokens: total ?? (input ?? 0) + (output ?? 0),
  };
  const cacheRead = attributes.firstNumber(CACHE_READ);
  const cacheWrite = attributes.firstNumber(CACHE_WRITE);
  if (cacheRead !== undefined || cacheWrite !== undefined) {
    usage.input_token_details = {
      ...(cacheRead !== undefined ? { cache_read: cacheRead } : {}),
      ...(cacheWrite !== undefined ? { cache_creation: cacheWrite } : {}),
    };
  }
  const reasoning = attributes.firstNumber(REASONING);
  if (reasoning !== undefined) usage.output_token_details = { reasoning };
  return usage;
}

/** Attribute keys this module reads (so that `generic_otel` does not copy them again). */
export const USAGE_KEYS: readonly string[] = [
  'langsmith.usage_metadata',
  ...INPUT_KEYS,
  ...OUTPUT_KEYS,
  ...TOTAL_KEYS,
  ...CACHE_READ_KEYS,
  ...CACHE_WRITE_KEYS,
  ...REASONING_KEYS,
];
