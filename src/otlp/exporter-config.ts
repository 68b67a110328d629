// Config of the OTLP/HTTP exporter (the `otlp` exporter's, and each endpoint's of the
// `loadbalancing` exporter). Retry defaults follow the OpenTelemetry Collector's (5 s growing by
// 1.5 up to 30 s); the blocks are the shared exporter helper's.

import type { ConfigOf } from '../config/config-of.ts';
import { httpEndpointSchema, queuedExporterBlocks } from '../exporterhelper/schema.ts';

export const otlpExporterConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    endpoint: httpEndpointSchema(
      'http://localhost:4318',
      'Base address of the receiving OTLP/HTTP endpoint; spans go to `<endpoint><traces_path>`.',
    ),
    traces_path: {
      type: 'string',
      pattern: '^/',
      default: '/v1/traces',
      description: 'Path of the traces endpoint.',
    },
    encoding: {
      enum: ['protobuf', 'json'],
      default: 'protobuf',
      description: 'Body encoding: `protobuf` (application/x-protobuf) or `json` (OTLP/HTTP JSON).',
    },
    compression: {
      enum: ['gzip', 'none'],
      default: 'gzip',
      description: 'Body compression.',
    },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      default: {},
      description: 'Extra request headers (for example an authorization header).',
    },
    forward_tenant: {
      type: 'boolean',
      default: false,
      description:
        "Send each batch's API key and project as `X-API-Key` and `Service-Project` (for a chain of tracepipe proxies).",
    },
    timeout_ms: {
      type: 'integer',
      minimum: 1,
      default: 10000,
      description: 'Time limit of one send attempt.',
    },
    max_concurrent_uploads: {
      type: 'integer',
      minimum: 1,
      default: 4,
      description: 'Requests in flight at once.',
    },
    ...queuedExporterBlocks({
      queue_size: 100,
      retry: { max_retries: 5, initial_backoff_ms: 5000, max_backoff_ms: 30000, multiplier: 1.5 },
      persistent_queue: { enabled: false, directory: './data/otlp' },
    }),
  },
} as const;

export type OtlpExporterConfig = ConfigOf<typeof otlpExporterConfigSchema>;
