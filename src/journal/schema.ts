// The `journal` block of a receiver's config, and the receiver-level `memory_limit_bytes`: what a
// receiver that acknowledges data on behalf of the pipeline needs to keep its promise.

import type { ConfigOf } from '../config/config-of.ts';

export const DEFAULT_JOURNAL_MAX_BYTES = 1_073_741_824;
export const DEFAULT_MEMORY_LIMIT_BYTES = 33_554_432;

export function journalSchema(defaults: { directory: string }) {
  return {
    type: 'object',
    additionalProperties: false,
    default: {},
    description: 'Write-ahead journal: requests are on disk before they are acknowledged, and replayed after a crash.',
    properties: {
      enabled: {
        type: 'boolean',
        default: false,
        description:
          'Answer 2xx only once a request is written to the journal; replay what was not delivered at the next start.',
      },
      directory: {
        type: 'string',
        minLength: 1,
        default: defaults.directory,
        description: 'Directory of the journal segments, relative to the config file.',
      },
      max_bytes: {
        type: 'integer',
        minimum: 65536,
        default: DEFAULT_JOURNAL_MAX_BYTES,
        description:
          "Cap on the journal's size on disk; past it, requests get 503 with `Retry-After` (nothing acknowledged is dropped).",
      },
      segment_bytes: {
        type: 'integer',
        minimum: 4096,
        default: 16_777_216,
        description:
          'Size at which a segment is closed; a closed segment is deleted once everything in it was delivered.',
      },
      fsync_interval_ms: {
        type: 'integer',
        minimum: 0,
        default: 0,
        description:
          '0: acknowledge once written (survives `kill -9`, not power loss). N: acknowledge after the next fdatasync, run every N ms.',
      },
    },
  } as const;
}

/** The `journal` block, as receivers' configs spell it. */
export type JournalConfig = ConfigOf<ReturnType<typeof journalSchema>>;

export const memoryLimitSchema = {
  type: 'integer',
  minimum: 1,
  default: DEFAULT_MEMORY_LIMIT_BYTES,
  description:
    'Bytes of memory requests may hold from before their body is read until they are delivered, estimated: five times the decompressed size until the pipeline has taken a request (the body and its decoded spans), then the decompressed size. Past it, requests get 429 with `Retry-After` before their body is read.',
} as const;
