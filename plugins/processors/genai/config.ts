// Config of the `genai` processor.

import type { ConfigOf } from 'tracepipe/plugin';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    filter_non_genai: {
      type: 'boolean',
      default: false,
      description:
        'Drop spans that carry no GenAI convention (judged by span name, attribute keys and event names); their children are re-parented to the nearest kept ancestor, or become roots when none is left.',
    },
    generic_otel: {
      type: 'boolean',
      default: false,
      description:
        'Copy every attribute outside the recognised conventions into `extra.metadata` (never overwriting a mapped key).',
    },
    root_cache_ttl_ms: {
      type: 'integer',
      minimum: 1000,
      default: 300000,
      description:
        'How long the ids of root spans and filtered spans are remembered, so that children arriving later still point at the right parent.',
    },
    root_cache_max_entries: {
      type: 'integer',
      minimum: 1,
      default: 100000,
      description: 'Upper bound on remembered root and filtered span ids; the oldest are forgotten first.',
    },
  },
} as const;

export type GenAiProcessorConfig = ConfigOf<typeof configSchema>;
