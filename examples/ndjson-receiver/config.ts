// Config of the example `ndjson` receiver: the listener and Host guard of `tracepipe/confighttp`,
// and the journal and memory limit of `tracepipe/receiverhelper`, so its users get the same keys
// as on the built-in receivers.

import { allowedHostsSchema, listenerSchema } from 'tracepipe/confighttp';
import type { ConfigOf } from 'tracepipe/plugin';
import { journalSchema, memoryLimitSchema } from 'tracepipe/receiverhelper';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...listenerSchema(4319),
    allowed_hosts: allowedHostsSchema(),
    max_body_bytes: {
      type: 'integer',
      minimum: 1,
      default: 4_194_304,
      description:
        'Largest request body, in bytes, both as sent and after decompression (gzip, zstd); larger requests get 413.',
    },
    service_name: {
      type: 'string',
      minLength: 1,
      default: 'ndjson',
      description: '`service.name` of the spans’ resource when the request has no `X-Service-Name` header.',
    },
    project: {
      type: 'string',
      minLength: 1,
      default: 'default',
      description: 'Project of the spans when the request has no `X-Project` header.',
    },
    journal: journalSchema({ directory: 'data/ndjson-journal' }),
    memory_limit_bytes: memoryLimitSchema,
  },
} as const;

/** The config the receiver receives: derived from the schema, defaulted keys present. */
export type NdjsonReceiverConfig = ConfigOf<typeof configSchema>;
