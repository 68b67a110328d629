// Config of the `agent_api` receiver: where it listens, which graphs it serves, where it keeps its
// data, and how many runs execute at once.

import { listenerSchema } from '../../../src/http/server.ts';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...listenerSchema(8123),
    graphs: {
      type: 'object',
      additionalProperties: { type: 'string', minLength: 1 },
      description: 'Graphs to serve, by graph id: `"./path/to/file.ts:export"` (relative to the config file).',
    },
    langgraph_config: {
      type: 'string',
      minLength: 1,
      default: './langgraph.json',
      description: 'Path to a `langgraph.json` naming the graphs (`{graphs: {id: "./file.ts:export"}}`), as `langgraph dev` reads it; used only when `graphs` is absent.',
    },
    data_dir: {
      type: 'string',
      minLength: 1,
      default: './data',
      description: 'Directory of the embedded database; SQLite files live under `<data_dir>/agent/`.',
    },
    workers: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 10,
      description: 'Runs executing at the same time; further runs wait as `pending`.',
    },
    run_timeout_ms: {
      type: 'integer',
      minimum: 0,
      default: 600_000,
      description: 'A run still executing after this long is stopped with status `timeout`; 0 disables the limit.',
    },
    max_body_bytes: {
      type: 'integer',
      minimum: 1024,
      default: 10_485_760,
      description: 'Largest request body accepted (413 above it).',
    },
    stream_buffer_events: {
      type: 'integer',
      minimum: 1,
      default: 10_000,
      description: 'Stream events kept per run for joining and replay after `Last-Event-ID`; older ones are dropped (counted).',
    },
    cors: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Cross-origin access for browser clients.',
      properties: {
        enabled: { type: 'boolean', default: true, description: 'Answer CORS requests.' },
        allow_origins: {
          type: 'array',
          items: { type: 'string' },
          default: ['*'],
          description: 'Allowed origins; `*` allows any.',
        },
      },
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Request authentication.',
      properties: {
        api_keys: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          default: [],
          description: 'Accepted `X-Api-Key` values; empty means no authentication (local development).',
        },
      },
    },
    tracing: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Spans for every run, sent into the pipeline.',
      properties: {
        enabled: { type: 'boolean', default: true, description: 'Record each run as spans.' },
        service_name: {
          type: 'string',
          minLength: 1,
          default: 'agent-server',
          description: 'The `service.name` resource attribute of the spans.',
        },
        project: {
          type: 'string',
          minLength: 1,
          default: 'default',
          description: 'Backend project of the spans, unless a request names one in `X-Project`.',
        },
        api_key: {
          type: 'string',
          minLength: 1,
          description: 'Backend API key carried with the spans (the request context); none by default.',
        },
      },
    },
    ui: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'The web interface: assistants management and a studio for trying assistants.',
      properties: {
        enabled: { type: 'boolean', default: true, description: 'Serve the web interface.' },
        path: {
          type: 'string',
          pattern: '^(/[A-Za-z0-9._~-]+)+/?$',
          default: '/ui',
          description: 'URL path of the web interface (not `/`); `GET /` redirects there unless another route answers it.',
        },
      },
    },
  },
} as const;

export interface AgentApiConfig {
  readonly host: string;
  readonly port: number;
  readonly graphs?: Readonly<Record<string, string>>;
  readonly langgraph_config: string;
  readonly data_dir: string;
  readonly workers: number;
  readonly run_timeout_ms: number;
  readonly max_body_bytes: number;
  readonly stream_buffer_events: number;
  readonly cors: { readonly enabled: boolean; readonly allow_origins: readonly string[] };
  readonly auth: { readonly api_keys: readonly string[] };
  readonly tracing: {
    readonly enabled: boolean;
    readonly service_name: string;
    readonly project: string;
    readonly api_key?: string;
  };
  readonly ui: { readonly enabled: boolean; readonly path: string };
}
