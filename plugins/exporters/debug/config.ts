// Config of the `debug` exporter.

import type { ConfigOf } from 'tracepipe/plugin';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  'x-removed-keys': {
    path: 'removed: the file exporter writes batches to a file',
  },
  properties: {
    verbosity: {
      enum: ['basic', 'detailed'],
      default: 'basic',
      description: '`basic` logs one line per batch with its counts; `detailed` also logs every item.',
    },
  },
} as const;

export type DebugExporterConfig = ConfigOf<typeof configSchema>;
