// Config of the `debug` exporter.

import type { ConfigOf } from '../../../src/config/config-of.ts';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    verbosity: {
      enum: ['basic', 'detailed'],
      default: 'basic',
      description: '`basic` logs one line per batch with its counts; `detailed` also logs every item.',
    },
    path: {
      type: 'string',
      minLength: 1,
      description: 'When set, also append every batch as one JSON line to this file (relative to the config file).',
    },
  },
} as const;

export type DebugExporterConfig = ConfigOf<typeof configSchema>;
