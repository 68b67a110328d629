// Config of the `backend` exporter. Retry defaults are the proxy spec's (MAX_RETRIES 3 after the
// first attempt, RETRY_BACKOFF_MS 100); the blocks are the shared exporter helper's.

import type { PersistentQueueConfig } from '../../../src/exporterhelper/persistent_queue.ts';
import type { RetryConfig } from '../../../src/exporterhelper/retry.ts';
import type { SendingQueueConfig } from '../../../src/exporterhelper/sending_queue.ts';
import {
  persistentQueueSchema,
  retryOnFailureSchema,
  sendingQueueSchema,
} from '../../../src/exporterhelper/schema.ts';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    endpoint: {
      type: 'string',
      format: 'uri',
      pattern: '^https?://',
      default: 'https://api.smith.langchain.com',
      description: 'Base address of the tracing backend; batches go to `<endpoint>/runs/multipart`.',
    },
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
    sending_queue: sendingQueueSchema({ queue_size: 64 }),
    retry_on_failure: retryOnFailureSchema({ max_retries: 3, initial_backoff_ms: 100, max_backoff_ms: 30000, multiplier: 2 }),
    persistent_queue: persistentQueueSchema({ enabled: true, directory: './data/backend' }),
  },
} as const;

export interface BackendExporterConfig {
  readonly endpoint: string;
  readonly api_key?: string;
  readonly timeout_ms: number;
  readonly compression_level: number;
  readonly max_concurrent_uploads: number;
  readonly sending_queue: SendingQueueConfig;
  readonly retry_on_failure: RetryConfig;
  readonly persistent_queue: PersistentQueueConfig;
}
