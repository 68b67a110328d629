// Config of the `otlp` receiver.

import type { ConfigOf } from '../../../src/config/config-of.ts';

import { listenerSchema } from '../../../src/http/server.ts';
import { journalSchema, memoryLimitSchema } from '../../../src/journal/schema.ts';

export const DEFAULT_MAX_BODY_BYTES = 209_715_200;

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...listenerSchema(4318),
    traces_path: {
      type: 'string',
      pattern: '^/',
      default: '/v1/traces',
      description: 'Path that accepts `POST`ed OTLP trace export requests.',
    },
    max_body_bytes: {
      type: 'integer',
      minimum: 1,
      default: DEFAULT_MAX_BODY_BYTES,
      description: 'Largest request body, in bytes, both as sent and after decompression; larger requests get 413.',
    },
    api_key: {
      type: 'string',
      default: '',
      description:
        "Backend API key used when a request has no `X-API-Key` header (the spec's `SERVICE_API_KEY`); empty means none.",
    },
    project: {
      type: 'string',
      minLength: 1,
      default: 'default',
      description: "Project used when a request has no `Service-Project` header (the spec's `SERVICE_PROJECT`).",
    },
    require_api_key: {
      type: 'boolean',
      default: true,
      description: 'Answer 401 to requests that have no key, neither in `X-API-Key` nor in `api_key`.',
    },
    cors: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Cross-origin access for browser OTLP exporters.',
      properties: {
        allowed_origins: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          default: [],
          description:
            'Origins allowed to send traces (`https://app.example.com`, or `*` for any); empty disables CORS.',
        },
        max_age_s: {
          type: 'integer',
          minimum: 0,
          default: 7200,
          description: 'How long browsers may cache a preflight answer, in seconds.',
        },
      },
    },
    journal: journalSchema({ directory: 'data/journal' }),
    memory_limit_bytes: memoryLimitSchema,
    metrics_path: {
      type: ['string', 'boolean'],
      anyOf: [{ type: 'string', pattern: '^/' }, { const: false }],
      default: '/metrics',
      description: "Path serving the process's Prometheus metrics on this listener, or `false` for none.",
    },
  },
} as const;

export type OtlpReceiverConfig = ConfigOf<typeof configSchema>;

/** Cross-field checks the schema cannot express. */
export function validateConfig(config: OtlpReceiverConfig): string[] {
  const errors: string[] = [];
  const reserved = ['/live', '/ready'];
  if (reserved.includes(config.traces_path))
    errors.push(`traces_path: ${config.traces_path} is reserved for health checks`);
  if (config.metrics_path !== false && config.metrics_path === config.traces_path) {
    errors.push('metrics_path: must differ from traces_path');
  }
  if (config.metrics_path !== false && reserved.includes(config.metrics_path)) {
    errors.push(`metrics_path: ${config.metrics_path} is reserved for health checks`);
  }
  return errors;
}
