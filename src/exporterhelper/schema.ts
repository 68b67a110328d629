// JSON Schema fragments of the standard exporter blocks (`sending_queue`, `retry_on_failure`,
// `persistent_queue`) and of the keys several exporters share (`endpoint`, `path`), so that every
// exporter spells and validates them the same way. Each takes the exporter's defaults: the schema
// stays the single source of defaults.

import type { ConfigOf } from '../config/config-of.ts';

export interface RetryDefaults {
  readonly max_retries: number;
  readonly initial_backoff_ms: number;
  readonly max_backoff_ms: number;
  readonly multiplier: number;
  /** Default 30 s: the OpenTelemetry Collector's default longest wait between retries. */
  readonly max_retry_after_ms?: number;
}

export function retryOnFailureSchema(defaults: RetryDefaults) {
  return {
    type: 'object',
    additionalProperties: false,
    default: {},
    description: 'How failed sends are retried (see src/exporterhelper/README.md).',
    properties: {
      max_retries: {
        type: 'integer',
        minimum: 0,
        default: defaults.max_retries,
        description: 'Retries after the first attempt; 0 disables retrying.',
      },
      initial_backoff_ms: {
        type: 'integer',
        minimum: 0,
        default: defaults.initial_backoff_ms,
        description: 'Upper bound of the first backoff (full jitter draws uniformly below it); 0 retries at once.',
      },
      max_backoff_ms: {
        type: 'integer',
        minimum: 1,
        default: defaults.max_backoff_ms,
        description:
          'Cap on the backoff bound; a server `Retry-After` may still ask for longer, up to `max_retry_after_ms`.',
      },
      multiplier: {
        type: 'number',
        minimum: 1,
        default: defaults.multiplier,
        description: 'Factor by which the backoff bound grows after each retry.',
      },
      max_retry_after_ms: {
        type: 'integer',
        minimum: 0,
        default: defaults.max_retry_after_ms ?? 30000,
        description:
          'Longest server `Retry-After` honoured: a longer one is waited only this long (0 ignores `Retry-After`).',
      },
    },
  } as const;
}

export function sendingQueueSchema(defaults: { queue_size: number; overflow_to_disk?: boolean }) {
  return {
    type: 'object',
    additionalProperties: false,
    default: {},
    description: 'The bounded in-memory queue in front of the senders.',
    properties: {
      queue_size: {
        type: 'integer',
        minimum: 1,
        default: defaults.queue_size,
        description: 'Batches held in memory while waiting for a sender.',
      },
      max_bytes: {
        type: 'integer',
        minimum: 1,
        default: 67108864,
        description:
          'Bytes of the batches held in memory while waiting for a sender (their encoded bodies); one larger batch is still taken into an empty queue.',
      },
      block_on_overflow: {
        type: 'boolean',
        default: false,
        description:
          'When the queue is full, make the caller wait instead of refusing the batch (refusals reach clients as a retryable 429/503).',
      },
      overflow_to_disk: {
        type: 'boolean',
        default: defaults.overflow_to_disk ?? false,
        description:
          'When the queue is full and `persistent_queue` is enabled, write the batch to the on-disk queue (re-sent from there) instead of refusing it, so that a slow or hung destination holds no caller back.',
      },
    },
  } as const;
}

export function persistentQueueSchema(defaults: { enabled: boolean; directory: string }) {
  return {
    type: 'object',
    additionalProperties: false,
    default: {},
    description: 'The on-disk queue for batches that could not be sent (see src/exporterhelper/README.md).',
    properties: {
      enabled: {
        type: 'boolean',
        default: defaults.enabled,
        description: 'Keep batches that exhausted their retries on disk and re-send them later.',
      },
      directory: {
        type: 'string',
        minLength: 1,
        default: defaults.directory,
        description: 'Directory of the queue files, relative to the config file.',
      },
      max_bytes: {
        type: 'integer',
        minimum: 1024,
        default: 1073741824,
        description:
          'Cap on the queue size on disk; when reached, the oldest batches are dropped (counted and logged).',
      },
      replay_interval_ms: {
        type: 'integer',
        minimum: 10,
        default: 5000,
        description: 'How often queued batches are retried while the destination has not answered.',
      },
    },
  } as const;
}

/** The three standard blocks, as the last properties of a queued exporter's schema. */
export function queuedExporterBlocks(defaults: {
  readonly queue_size: number;
  /** Default false: a full queue refuses, and the refusal reaches clients as back-pressure. */
  readonly overflow_to_disk?: boolean;
  readonly retry: RetryDefaults;
  readonly persistent_queue: { enabled: boolean; directory: string };
}) {
  return {
    sending_queue: sendingQueueSchema({ queue_size: defaults.queue_size, overflow_to_disk: defaults.overflow_to_disk }),
    retry_on_failure: retryOnFailureSchema(defaults.retry),
    persistent_queue: persistentQueueSchema(defaults.persistent_queue),
  } as const;
}

/** The validated `queuedExporterBlocks` part of a config. */
export type QueuedExporterBlocksConfig = ConfigOf<{
  type: 'object';
  properties: ReturnType<typeof queuedExporterBlocks>;
}>;

/** The base address an HTTP exporter sends to. */
export function httpEndpointSchema(defaultUrl: string, description: string) {
  return {
    type: 'string',
    format: 'uri',
    pattern: '^https?://',
    default: defaultUrl,
    description,
  } as const;
}

/** A file an exporter writes, resolved relative to the config file. */
export function filePathSchema(defaultPath: string, description: string) {
  return {
    type: 'string',
    minLength: 1,
    default: defaultPath,
    description,
  } as const;
}

/** The cross-field rule of the `retry_on_failure` block. */
export function validateRetry(config: RetryDefaults): string[] {
  return config.max_backoff_ms < config.initial_backoff_ms
    ? ['retry_on_failure.max_backoff_ms: must be >= initial_backoff_ms']
    : [];
}
