// The top-level shape of a tracepipe config file (everything except the components' own configs,
// which their factories' schemas validate).

import type { ConfigOf } from './config-of.ts';
import { LOG_LEVELS } from '../telemetry/levels.ts';

export const ID_PATTERN = '^[a-z][a-z0-9_]*(/[A-Za-z0-9_.-]+)?$';

const componentIdList = {
  type: 'array',
  items: { type: 'string', pattern: ID_PATTERN },
  uniqueItems: true,
} as const;

export const topLevelSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    plugins: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
    receivers: { type: 'object', default: {}, propertyNames: { pattern: ID_PATTERN } },
    processors: { type: 'object', default: {}, propertyNames: { pattern: ID_PATTERN } },
    exporters: { type: 'object', default: {}, propertyNames: { pattern: ID_PATTERN } },
    extensions: { type: 'object', default: {}, propertyNames: { pattern: ID_PATTERN } },
    service: {
      type: 'object',
      additionalProperties: false,
      required: ['pipelines'],
      properties: {
        extensions: {
          ...componentIdList,
          default: [],
          description:
            'The extensions to run (ids defined under `extensions`), started before the pipelines and stopped after them.',
        },
        shutdown_timeout_ms: {
          type: 'integer',
          minimum: 0,
          default: 10000,
          description: 'How long a stop (SIGTERM, SIGINT) may take to drain receivers and flush what is held, in ms.',
        },
        telemetry: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            logs: {
              type: 'object',
              additionalProperties: false,
              default: {},
              properties: {
                level: {
                  enum: [...LOG_LEVELS],
                  default: 'info',
                  description: 'Log level of the process (`--log-level` overrides it).',
                },
                format: {
                  enum: ['json', 'pretty', 'auto'],
                  default: 'auto',
                  description: '`json` lines, `pretty` text, or `auto`: pretty on a terminal.',
                },
              },
            },
            metrics: {
              type: 'object',
              additionalProperties: false,
              default: {},
              properties: {
                listen: { type: 'string', description: 'host:port of a dedicated metrics server; unset: none' },
                path: {
                  type: 'string',
                  pattern: '^/',
                  default: '/metrics',
                  description: 'URL path of the metrics on every HTTP server.',
                },
                process_metrics: {
                  type: 'boolean',
                  default: true,
                  description: 'Also export the process metrics (CPU, memory, event loop).',
                },
              },
            },
          },
        },
        pipelines: {
          type: 'object',
          minProperties: 1,
          propertyNames: { pattern: ID_PATTERN },
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            required: ['receivers', 'exporters'],
            properties: {
              receivers: componentIdList,
              processors: { ...componentIdList, default: [] },
              exporters: componentIdList,
            },
          },
        },
      },
    },
  },
  required: ['service'],
} as const;

/** A validated config file, defaults applied. */
export type RawConfig = ConfigOf<typeof topLevelSchema>;
export type ServiceSection = RawConfig['service'];
export type PipelineConfig = ServiceSection['pipelines'][string];
