// Config of the `local` exporter.

import type { ConfigOf } from 'tracepipe/plugin';

import { filePathSchema } from 'tracepipe/exporterhelper';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: filePathSchema(
      './data/traces.db',
      'SQLite database file, relative to the config file (`:memory:` for a throwaway store).',
    ),
    retention: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description:
        'Limits on what the store keeps, enforced on a timer and after writes by deleting whole traces, oldest first. Unset: no limit.',
      properties: {
        max_age_ms: {
          type: 'integer',
          minimum: 1,
          description:
            'Delete traces whose last run started or ended longer ago than this, in ms (604800000 is 7 days).',
        },
        max_bytes: {
          type: 'integer',
          minimum: 65536,
          description:
            'Keep the database at or under this many bytes of used pages, deleting the oldest traces first (the newest trace is always kept).',
        },
        check_interval_ms: {
          type: 'integer',
          minimum: 100,
          default: 60000,
          description: 'How often the limits are enforced besides after writes, in ms.',
        },
      },
    },
  },
} as const;

export type LocalExporterConfig = ConfigOf<typeof configSchema>;
