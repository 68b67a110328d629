// Config of the `agent_api` receiver: where it listens, which graphs it serves, where it keeps its
// data, and how many runs execute at once.

import type { ConfigOf } from 'tracepipe/plugin';

import { allowedHostsSchema, corsSchema, listenerSchema, tlsSchema } from 'tracepipe/confighttp';
import { journalSchema, memoryLimitSchema } from 'tracepipe/receiverhelper';

/**
 * The run spans' journal: the receivers' `journal` block, on by default (a run's spans have no
 * client to send them again) and kept under `data_dir`.
 */
const baseJournal = journalSchema({ directory: 'agent/tracing-journal' });
const tracingJournalSchema = {
  ...baseJournal,
  description:
    "Write-ahead journal of the runs' spans: each batch is on disk before the pipeline takes it, and what was not delivered (a crash, a shutdown deadline) is sent at the next start.",
  properties: {
    ...baseJournal.properties,
    enabled: {
      ...baseJournal.properties.enabled,
      default: true,
      description: "Journal the runs' spans; false: they are held in memory only until exported.",
    },
    directory: {
      ...baseJournal.properties.directory,
      description: 'Directory of the journal segments, relative to `data_dir`.',
    },
    max_bytes: {
      ...baseJournal.properties.max_bytes,
      description:
        "Cap on the journal's size on disk; past it, a run's spans are refused, counted and logged (the run is unaffected).",
    },
  },
} as const;

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  // Checked before defaults apply, so that the default `langgraph_config` never counts as given.
  not: {
    required: ['graphs', 'langgraph_config'],
    description:
      'graphs and langgraph_config are both set; set one: inline graphs, or the langgraph.json that names them',
  },
  properties: {
    ...listenerSchema(8123),
    tls: tlsSchema(),
    graphs: {
      type: 'object',
      additionalProperties: { type: 'string', minLength: 1 },
      description:
        'Graphs to serve, by graph id: `"./path/to/file.ts:export"` (relative to the config file). Excludes `langgraph_config`.',
    },
    langgraph_config: {
      type: 'string',
      minLength: 1,
      default: './langgraph.json',
      description:
        'Path to a `langgraph.json` naming the graphs (`{graphs: {id: "./file.ts:export"}}`), as `langgraph dev` reads it. Excludes `graphs`; read only when `graphs` is not set.',
    },
    data_dir: {
      type: 'string',
      minLength: 1,
      default: './data',
      description:
        "Directory of the agent server's files, under `<data_dir>/agent/`: the embedded database (SQLite, unless `storage.database_uri` is set), the run spans' journal and the graph type schemas read. One per server process.",
    },
    storage: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Where the agent server keeps assistants, threads, runs, crons, checkpoints and the store.',
      properties: {
        database_uri: {
          type: 'string',
          default: '',
          pattern: '^$|^postgres(ql)?://',
          description:
            'A PostgreSQL database (`postgres://user:password@host:5432/db`) holding everything; several servers may share it. Empty (the default): embedded SQLite under `data_dir`. The database must exist; its tables are created at start.',
        },
        pool_size: {
          type: 'integer',
          minimum: 2,
          maximum: 1000,
          default: 10,
          description:
            'PostgreSQL connections the server opens at most (runs, requests and the store share them); one more is used now and then to answer `/ready`.',
        },
        statement_timeout_ms: {
          type: 'integer',
          minimum: 0,
          default: 30_000,
          description:
            'PostgreSQL cancels a statement running longer than this (`statement_timeout`); the request gets 503. 0: no limit.',
        },
        connect_timeout_ms: {
          type: 'integer',
          minimum: 0,
          default: 5000,
          description:
            'Giving up on opening a PostgreSQL connection after this long (the request gets 503); 0: no limit.',
        },
      },
    },
    workers: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 10,
      description: 'Runs executing at the same time; further runs wait as `pending`.',
    },
    runs: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'How the instances serving one database share out runs.',
      properties: {
        lease_ms: {
          type: 'integer',
          minimum: 1000,
          maximum: 3_600_000,
          default: 30_000,
          description:
            'A worker holds a lease on each run it executes, renewed every third of this; a `running` run whose lease expired (its process died) is settled as `error` by an instance (each looks every half of this), so such a run is settled within about one and a half leases.',
        },
      },
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
    max_json_depth: {
      type: 'integer',
      minimum: 8,
      maximum: 1000,
      default: 100,
      description: 'Deepest nesting of objects and arrays accepted in a JSON body (422 above it).',
    },
    stream_buffer_events: {
      type: 'integer',
      minimum: 1,
      default: 10_000,
      description:
        'Stream events kept per run for joining and replay after `Last-Event-ID`; older ones are dropped (counted).',
    },
    broker: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description:
        'Where the stream events of running runs, cancels and worker wake-ups go: this process only, or Redis, which every instance serving one database reaches.',
      properties: {
        redis_uri: {
          type: 'string',
          default: '',
          description:
            'Redis (6.2 or later) shared by the instances, `redis://[:password@]host:6379[/db]` (`rediss://` for TLS). Empty: in this process, for a single instance.',
        },
        key_prefix: {
          type: 'string',
          default: 'tracepipe:agent_api:',
          description: 'Prefix of the Redis keys and channels; deployments sharing one Redis need different prefixes.',
        },
      },
    },
    webhooks: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Where run webhooks may be delivered, and how hard to try.',
      properties: {
        allow: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          default: [],
          description:
            'Non-public destinations webhooks may reach, as address classes (`loopback`, `private`, `link_local`, `cgnat`, `unspecified`, `multicast`, `broadcast`, `reserved`) or CIDR ranges (`10.1.2.0/24`, `fd00::/8`). Public addresses are always allowed; empty allows no other.',
        },
        timeout_ms: {
          type: 'integer',
          minimum: 100,
          maximum: 60_000,
          default: 10_000,
          description: 'Time limit of one delivery attempt (connection, request, response headers).',
        },
        max_attempts: {
          type: 'integer',
          minimum: 1,
          maximum: 5,
          default: 3,
          description:
            'Attempts per webhook; connection failures, timeouts, 429 and 5xx are retried after 1 s, 2 s, ...',
        },
      },
    },
    cors: corsSchema({ maxAge: 600, description: 'Cross-origin access for browser clients.' }),
    allowed_hosts: allowedHostsSchema(),
    type_schemas: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description:
        'Schemas of graphs built without a runtime schema (`Annotation` state), read from their TypeScript types in a worker thread at start.',
      properties: {
        enabled: {
          type: 'boolean',
          default: true,
          description:
            'Read the types. `false`: such graphs list their state channels without types (and the TypeScript compiler is never loaded).',
        },
        timeout_ms: {
          type: 'integer',
          minimum: 100,
          default: 120000,
          description:
            'Time the worker gets for all graphs; graphs not read by then fall back to their channel list, with a warning.',
        },
      },
    },
    test_routes: {
      type: 'boolean',
      default: false,
      description:
        'Serve `POST /internal/truncate`, which empties the database, for test suites. Never on a server others can reach.',
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Request authentication.',
      properties: {
        api_keys: {
          type: ['array', 'string'],
          items: { type: 'string', minLength: 1 },
          default: [],
          description:
            'Accepted `X-Api-Key` values (what the SDK sends for `apiKey`): a list, or one comma-separated string (as an environment variable gives it). Empty: no key needed.',
        },
        path: {
          type: 'string',
          minLength: 1,
          description:
            'Custom auth handler, `./auth.ts:auth` (relative to the config file): a module exporting an `Auth` from `@langchain/langgraph-sdk/auth`. Default: the `auth.path` of the `langgraph_config` file, if any.',
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
        journal: tracingJournalSchema,
        memory_limit_bytes: {
          ...memoryLimitSchema,
          description:
            "Bytes of run spans held in memory from a run's end until they are delivered (estimated as for the `otlp` receiver); past it, a run's spans are refused, counted and logged.",
        },
      },
    },
    mcp: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'The assistants as MCP tools at `/mcp` (Streamable HTTP).',
      properties: {
        enabled: {
          type: 'boolean',
          default: true,
          description:
            'Serve `/mcp`: one MCP tool per assistant, behind the same authentication as the API (false: the route does not exist). A langgraph.json with `http.disable_mcp: true` turns it off too, whatever this says.',
        },
      },
    },
    a2a: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'The assistants as Agent2Agent (A2A) agents at `/a2a/{assistant_id}`.',
      properties: {
        enabled: {
          type: 'boolean',
          default: true,
          description:
            'Serve `/a2a/{assistant_id}` (JSON-RPC) and the agent cards at `/.well-known/agent-card.json?assistant_id=…`, behind the same authentication as the API (false: the routes do not exist). A langgraph.json with `http.disable_a2a: true` turns them off too, whatever this says.',
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
          description:
            'URL path of the web interface (not `/`); `GET /` redirects there unless another route answers it.',
        },
        trace_explorer_url: {
          type: 'string',
          default: '',
          description:
            "Where the studio links each run's trace: the trace list of a trace explorer, e.g. `http://127.0.0.1:4319/ui/traces` (a bare origin gets `/ui/traces`); the link is `<url>/<trace_id>?run=<run_id>`. Empty: the `trace_explorer` extension's, when the service runs one; else no links.",
        },
      },
    },
  },
} as const;

export type AgentApiConfig = ConfigOf<typeof configSchema>;
