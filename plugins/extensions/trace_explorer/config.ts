// Config of the `trace_explorer` extension.

import type { ConfigOf } from 'tracepipe/plugin';
import { filePathSchema } from 'tracepipe/exporterhelper';
import { allowedHostsSchema, listenerSchema, tlsSchema } from 'tracepipe/confighttp';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...listenerSchema(8124),
    path: filePathSchema(
      './data/traces.db',
      "The local trace store to show: the `local` exporter's `path` (relative to the config file). It may be written by this process or another one.",
    ),
    allowed_hosts: allowedHostsSchema(),
    tls: tlsSchema(),
    insecure: {
      type: 'boolean',
      default: false,
      description:
        'Serve every trace to anyone who can reach the listener. Without it, an explorer bound beyond loopback refuses to start unless an agent server in the same service protects it (its API keys or custom auth handler).',
    },
    prices: {
      type: 'object',
      default: {},
      description:
        'Prices per model name (`extra.metadata.ls_model_name`), in any currency per million tokens: `{gpt-4o-mini: {input: 0.15, output: 0.6, cache_read: 0.075}}`. They win over the bundled price table (`@pydantic/genai-prices`), which prices the models it knows; a cost the app reports (`usage_metadata.total_cost`) wins over both.',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['input', 'output'],
        properties: {
          input: { type: 'number', minimum: 0, description: 'Price of a million input tokens.' },
          output: { type: 'number', minimum: 0, description: 'Price of a million output tokens.' },
          cache_read: {
            type: 'number',
            minimum: 0,
            description: 'Price of a million input tokens read from the prompt cache (default: the input price).',
          },
        },
      },
    },
  },
} as const;

export type TraceExplorerConfig = ConfigOf<typeof configSchema>;
