// Config of the `batch` processor.

import type { ConfigOf } from 'tracepipe/plugin';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    batch_size: {
      type: 'integer',
      minimum: 1,
      default: 100,
      description:
        'Runs per upload batch: a batch is sent as soon as it holds this many (`BATCH_SIZE` in `configs/proxy.yaml`).',
    },
    flush_interval_ms: {
      type: 'integer',
      minimum: 1,
      default: 1000,
      description:
        'Every interval, open batches are sent whatever their size, waiting orphans are checked, and failed deliveries are retried (`FLUSH_INTERVAL_MS`).',
    },
    max_buffer_bytes: {
      type: 'integer',
      minimum: 1024,
      default: 10485760,
      description:
        "Upper bound on one batch's uncompressed size, the sum of its runs' JSON sizes (`MAX_BUFFER_BYTES`), counted in characters of the JSON text the batcher writes for the exporter: exact for ASCII text, short by the extra bytes of other characters (measured exactly past half the limit). A single run larger than this goes out in a batch of its own.",
    },
    max_held_runs: {
      type: 'integer',
      minimum: 1,
      default: 100000,
      description:
        'Upper bound on runs held in memory (waiting for their parent, buffered, or awaiting delivery). Beyond it, consume() refuses new data with a throttle error (the receiver answers 429/503).',
    },
    max_held_bytes: {
      type: 'integer',
      minimum: 1024,
      default: 268435456,
      description:
        'Upper bound on the JSON bytes of all runs held in memory; beyond it new data is refused like for `max_held_runs`.',
    },
    max_backlog_runs: {
      type: 'integer',
      minimum: 1,
      default: 10000,
      description:
        "Upper bound on released runs held for a downstream that is behind: one that refused their tenant's last batch, or has not taken its oldest for a whole `flush_interval_ms`. Beyond it, consume() refuses new data with a throttle error (the receiver answers 429/503); a burst that downstream takes at once never counts.",
    },
    orphan_timeout_ms: {
      type: 'integer',
      minimum: 0,
      default: 30000,
      description:
        "How long a trace's runs may wait for a parent that has not arrived before they are placed by `orphan_policy` (checked every `flush_interval_ms`).",
    },
    orphan_policy: {
      enum: ['attach_to_root', 'promote_to_root'],
      default: 'attach_to_root',
      description:
        "`attach_to_root`: an orphan becomes a child of its trace's root run (as the reference does); `promote_to_root`: it becomes the root of a trace of its own.",
    },
    dotted_order_ttl_ms: {
      type: 'integer',
      minimum: 1000,
      default: 300000,
      description:
        'How long the dotted order of a sent run is remembered, so that children arriving later still get their place.',
    },
    max_remembered_runs: {
      type: 'integer',
      minimum: 1,
      default: 500000,
      description:
        'Upper bound on remembered dotted orders (and root aliases, filtered ids); the oldest are forgotten first.',
    },
    max_remembered_bytes: {
      type: 'integer',
      minimum: 1048576,
      default: 8388608,
      description:
        'Upper bound on the memory of remembered dotted orders and root aliases together; the oldest are forgotten first.',
    },
  },
} as const;

export type BatchProcessorConfig = ConfigOf<typeof configSchema>;

/** Cross-field rules. */
export function validateConfig(config: BatchProcessorConfig): string[] {
  const errors: string[] = [];
  if (config.max_held_runs < config.batch_size) errors.push('max_held_runs: must be >= batch_size');
  if (config.max_held_bytes < config.max_buffer_bytes) errors.push('max_held_bytes: must be >= max_buffer_bytes');
  return errors;
}
