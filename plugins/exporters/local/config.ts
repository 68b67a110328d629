// Config of the `local` exporter.

import type { ConfigOf } from '../../../src/config/config-of.ts';

import { filePathSchema } from '../../../src/exporterhelper/schema.ts';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: filePathSchema(
      './data/traces.db',
      'SQLite database file, relative to the config file (`:memory:` for a throwaway store).',
    ),
  },
} as const;

export type LocalExporterConfig = ConfigOf<typeof configSchema>;
