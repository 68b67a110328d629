// Config of the `backend` exporter. Retry defaults are the proxy's environment defaults
// (MAX_RETRIES 3 after the first attempt, RETRY_BACKOFF_MS 100, see configs/proxy.yaml); the blocks are the shared exporter helper's.

import type { ConfigOf } from 'tracepipe/plugin';
import { httpEndpointSchema, queuedExporterBlocks } from 'tracepipe/exporterhelper';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    endpoint: httpEndpointSchema(
      'https://api.smith.langchain.com',
      'Base address of the tracing backend; batches go to `<endpoint>/runs/multipart`.',
    ),
    api_key: {
      type: 'string',
      description: 'Key sent as `X-API-Key` when a batch carries no tenant key of its own.',
    },
    timeout_ms: {
      type: 'integer',
      minimum: 1,
      default: 30000,
      description: 'Time limit of one upload attempt.',
    },
    compression_level: {
      type: 'integer',
      minimum: -7,
      maximum: 22,
      default: 3,
      description: 'zstd level of the upload body (higher compresses more, slower).',
    },
    max_concurrent_uploads: {
      type: 'integer',
      minimum: 1,
      default: 8,
      description: 'Uploads in flight at once.',
    },
    ...queuedExporterBlocks({
      queue_size: 64,
      retry: { max_retries: 3, initial_backoff_ms: 100, max_backoff_ms: 30000, multiplier: 2 },
      persistent_queue: { enabled: true, directory: './data/backend' },
    }),
  },
} as const;

export type BackendExporterConfig = ConfigOf<typeof configSchema>;
