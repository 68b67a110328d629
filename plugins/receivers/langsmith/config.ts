// Config of the `langsmith` receiver.

import type { ConfigOf } from 'tracepipe/plugin';
import { allowedHostsSchema, listenerSchema, tlsSchema } from 'tracepipe/confighttp';
import { journalSchema, memoryLimitSchema } from 'tracepipe/receiverhelper';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // 1984: the port of LangSmith's own local server, so an SDK pointed at it finds this one.
    ...listenerSchema(1984),
    allowed_hosts: allowedHostsSchema(),
    tls: tlsSchema(),
    max_body_bytes: {
      type: 'integer',
      minimum: 1,
      default: 104_857_600,
      description:
        'Largest request body, in bytes, both as sent and after decompression (gzip, zstd); larger requests get 413.',
    },
    max_part_bytes: {
      type: 'integer',
      minimum: 1,
      default: 26_214_400,
      description:
        'Largest multipart part, in bytes; a larger part is refused (413, naming it) and the rest of the request kept.',
    },
    batch_size_limit: {
      type: 'integer',
      minimum: 1,
      default: 100,
      description:
        'Runs per request the SDKs are told to send at most (`GET /info`, `batch_ingest_config.size_limit`).',
    },
    batch_size_limit_bytes: {
      type: 'integer',
      minimum: 1024,
      default: 20_971_520,
      description:
        'Uncompressed bytes per request the SDKs are told to send at most (`GET /info`, `batch_ingest_config.size_limit_bytes`); keep it below `max_body_bytes`.',
    },
    api_key: {
      type: 'string',
      default: '',
      description: 'Backend API key used when a request has no `X-API-Key` header; empty means none.',
    },
    project: {
      type: 'string',
      minLength: 1,
      default: 'default',
      description:
        'Project of runs that name none (`session_name`) when the request has no `Langsmith-Project` header.',
    },
    require_api_key: {
      type: 'boolean',
      default: true,
      description: 'Answer 401 to requests that have no key, neither in `X-API-Key` nor in `api_key`.',
    },
    journal: journalSchema({ directory: 'data/langsmith-journal' }),
    memory_limit_bytes: memoryLimitSchema,
  },
} as const;

export type LangSmithReceiverConfig = ConfigOf<typeof configSchema>;
