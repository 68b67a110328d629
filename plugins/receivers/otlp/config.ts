// Config of the `otlp` receiver.

import type { ConfigOf } from 'tracepipe/plugin';

import { allowedHostsSchema, corsSchema, listenerSchema, tlsSchema } from 'tracepipe/confighttp';
import { journalSchema, memoryLimitSchema } from 'tracepipe/receiverhelper';

export const DEFAULT_MAX_BODY_BYTES = 209_715_200;
/**
 * 16 MiB: four times gRPC's own default of 4 MiB (the Collector's `max_recv_msg_size_mib`), which a
 * batch of 512 spans with long prompts and completions can pass.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 16_777_216;

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  'x-removed-keys': {
    metrics_path: 'replaced by metrics.enabled and metrics.path',
  },
  properties: {
    ...listenerSchema(4318),
    allowed_hosts: allowedHostsSchema(),
    tls: tlsSchema('Serve OTLP/HTTP over TLS (HTTPS); absent: plaintext HTTP.'),
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
        'Backend API key used when a request has no `X-API-Key` header (`SERVICE_API_KEY` in `configs/proxy.yaml`); empty means none.',
    },
    project: {
      type: 'string',
      minLength: 1,
      default: 'default',
      description:
        'Project used when a request has no `Service-Project` header (`SERVICE_PROJECT` in `configs/proxy.yaml`).',
    },
    require_api_key: {
      type: 'boolean',
      default: true,
      description: 'Answer 401 to requests that have no key, neither in `X-API-Key` nor in `api_key`.',
    },
    cors: corsSchema({ maxAge: 7200, description: 'Cross-origin access for browser OTLP exporters.' }),
    protocols: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description:
        "Other protocols besides OTLP/HTTP (which the keys above configure: they are the Collector's `protocols.http`).",
      properties: {
        grpc: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description:
            'OTLP/gRPC (`TraceService/Export`), through the same journal, memory limit, decoder and request context as HTTP.',
          properties: {
            enabled: { type: 'boolean', default: false, description: 'Listen for OTLP/gRPC.' },
            ...listenerSchema(4317),
            max_message_bytes: {
              type: 'integer',
              minimum: 1,
              default: DEFAULT_MAX_MESSAGE_BYTES,
              description:
                'Largest request message, in bytes, after decompression; larger ones get `RESOURCE_EXHAUSTED` (not retryable).',
            },
            tls: tlsSchema('Serve gRPC over TLS (absent: plaintext, as OTLP exporters with `insecure` expect).'),
          },
        },
      },
    },
    journal: journalSchema({ directory: 'data/journal' }),
    memory_limit_bytes: memoryLimitSchema,
    metrics: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: "The process's Prometheus metrics on this listener.",
      properties: {
        enabled: {
          type: 'boolean',
          default: true,
          description: 'Serve the metrics on this listener.',
        },
        path: {
          type: 'string',
          pattern: '^/',
          default: '/metrics',
          description: 'URL path of the metrics.',
        },
      },
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
  if (config.metrics.enabled && config.metrics.path === config.traces_path) {
    errors.push('metrics.path: must differ from traces_path');
  }
  if (config.metrics.enabled && reserved.includes(config.metrics.path)) {
    errors.push(`metrics.path: ${config.metrics.path} is reserved for health checks`);
  }
  return errors;
}
