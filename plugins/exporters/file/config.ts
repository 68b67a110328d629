// Config of the `file` exporter.

import type { ConfigOf } from 'tracepipe/plugin';

import { filePathSchema } from 'tracepipe/exporterhelper';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: filePathSchema('./data/traces.jsonl', 'File that JSON lines are appended to, relative to the config file.'),
    rotation: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'When the file is set aside as `<path>.1` (older ones shift to `.2`, ...) and a new one begun.',
      properties: {
        max_bytes: {
          type: 'integer',
          minimum: 1024,
          default: 104857600,
          description: 'Rotate before a line would take the file past this size.',
        },
        max_files: {
          type: 'integer',
          minimum: 0,
          default: 10,
          description: 'Rotated files kept; older ones are deleted (logged). 0 keeps them all.',
        },
      },
    },
    fsync: {
      type: 'boolean',
      default: false,
      description: 'Sync the file to disk before each batch is acknowledged (slower, survives power loss).',
    },
  },
} as const;

export type FileExporterConfig = ConfigOf<typeof configSchema>;
