// JSON Schemas of the API's request bodies, query strings and path parameters. Fastify validates
// requests against them (a failure is a 422 naming the field) and they feed the OpenAPI document.
// Optional fields accept null, since the Python SDK sends null for every unset option; unknown
// fields are accepted and ignored, since the SDKs send some this server has no use for.
//
// The schemas are `as const`, so the types of what they accept follow from them (`FromSchema`):
// routes get their request parts typed through the type provider (`AgentApp` in http/services.ts), and
// the domain takes its request payload types from here (`RequestPayload`) rather than repeating
// them.

import type { FromSchema } from 'json-schema-to-ts';
import { STREAM_MODES } from './stream-modes.ts';

/** `T` after `withoutNulls`: a field that could be null may be missing instead, never null. */
export type WithoutNulls<T> = { [K in keyof T]: null extends T[K] ? Exclude<T[K], null> | undefined : T[K] };

/**
 * A request body as the domain takes it: `Body` (`FromSchema<typeof schema>`) with its top-level
 * nulls dropped (`withoutNulls`).
 */
export type RequestPayload<Body> = WithoutNulls<NonNullable<Body>>;

/** What a run is created from: the request body (`runCreate` below), nulls dropped. */
export type RunCreate = RequestPayload<FromSchema<typeof runCreate>>;

const object = { type: ['object', 'null'] } as const;
const string = { type: ['string', 'null'] } as const;
const uuid = { type: 'string', format: 'uuid' } as const;
const limit = { type: ['integer', 'null'], minimum: 1, maximum: 1000 } as const;
const offset = { type: ['integer', 'null'], minimum: 0 } as const;
const sortOrder = { type: ['string', 'null'], enum: ['asc', 'desc', null] } as const;
const nodes = { anyOf: [{ const: '*' }, { type: 'array', items: { type: 'string' } }, { type: 'null' }] } as const;
/** A run or assistant config: free-form, but the keys LangGraph reads must have their types. */
const runnableConfig = {
  type: ['object', 'null'],
  properties: {
    tags: { type: ['array', 'null'], items: { type: 'string' } },
    recursion_limit: { type: ['integer', 'null'], minimum: 1 },
    configurable: object,
  },
} as const;

/** A webhook: an absolute http(s) URL, or a path on this server (`/custom/webhook`). */
export const WEBHOOK_PATTERN = '^(https?://[^\\s]+|/(?!/)[^\\s]*)$';

/** Fragments other route schemas (the crons') share with these, so that a field reads the same everywhere. */
export const sharedSchemaParts = { object, string, nodes, runnableConfig } as const;

export const checkpoint = {
  type: ['object', 'null'],
  properties: { checkpoint_id: string, checkpoint_ns: string, checkpoint_map: object },
} as const;

/** The stream modes a run may ask for, as the run machinery serves them. */
export const STREAM_MODE_NAMES = STREAM_MODES;

export const threadIdParams = { type: 'object', required: ['thread_id'], properties: { thread_id: uuid } } as const;
export const runIdParams = {
  type: 'object',
  required: ['thread_id', 'run_id'],
  properties: { thread_id: uuid, run_id: uuid },
} as const;
export const threadlessRunParams = { type: 'object', required: ['run_id'], properties: { run_id: uuid } } as const;
export const assistantIdParams = {
  type: 'object',
  required: ['assistant_id'],
  properties: { assistant_id: { type: 'string', minLength: 1 } },
} as const;

export const assistantCreate = {
  type: 'object',
  required: ['graph_id'],
  properties: {
    graph_id: { type: 'string', minLength: 1 },
    assistant_id: { type: ['string', 'null'], format: 'uuid' },
    name: string,
    description: string,
    config: runnableConfig,
    context: {},
    metadata: object,
    if_exists: { type: ['string', 'null'], enum: ['raise', 'do_nothing', null] },
  },
} as const;

export const assistantPatch = {
  type: 'object',
  properties: {
    graph_id: string,
    name: string,
    description: string,
    config: runnableConfig,
    context: {},
    metadata: object,
  },
} as const;

export const assistantSearch = {
  type: ['object', 'null'],
  properties: {
    graph_id: string,
    name: string,
    metadata: object,
    limit,
    offset,
    sort_by: { type: ['string', 'null'], enum: ['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at', null] },
    sort_order: sortOrder,
    select: { type: ['array', 'null'], items: { type: 'string' } },
  },
} as const;

export const assistantCount = {
  type: ['object', 'null'],
  properties: { graph_id: string, name: string, metadata: object },
} as const;

export const setLatest = {
  type: 'object',
  required: ['version'],
  properties: { version: { type: 'integer', minimum: 1 } },
} as const;

export const versionsQuery = {
  type: ['object', 'null'],
  properties: { metadata: object, limit, offset },
} as const;

export const threadCreate = {
  type: ['object', 'null'],
  properties: {
    thread_id: { type: ['string', 'null'], format: 'uuid' },
    metadata: object,
    if_exists: { type: ['string', 'null'], enum: ['raise', 'do_nothing', null] },
    // Updates applied right after creation, one superstep after the other (needs `metadata.graph_id`).
    supersteps: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        required: ['updates'],
        properties: {
          updates: {
            type: 'array',
            items: {
              type: 'object',
              required: ['as_node'],
              properties: { values: {}, command: {}, as_node: { type: 'string' } },
            },
          },
        },
      },
    },
  },
} as const;

export const threadPatch = {
  type: 'object',
  required: ['metadata'],
  properties: { metadata: { type: 'object' } },
} as const;

export const threadSearch = {
  type: ['object', 'null'],
  properties: {
    ids: { type: ['array', 'null'], items: uuid },
    metadata: object,
    values: object,
    status: { type: ['string', 'null'], enum: ['idle', 'busy', 'interrupted', 'error', null] },
    limit,
    offset,
    // `state_updated_at` is in the SDK's sort keys; the thread record's `updated_at` moves with its state.
    sort_by: {
      type: ['string', 'null'],
      enum: ['thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at', null],
    },
    sort_order: sortOrder,
    select: { type: ['array', 'null'], items: { type: 'string' } },
  },
} as const;

export const threadCount = {
  type: ['object', 'null'],
  properties: {
    metadata: object,
    values: object,
    status: { type: ['string', 'null'], enum: ['idle', 'busy', 'interrupted', 'error', null] },
  },
} as const;

export const stateQuery = {
  type: 'object',
  properties: { subgraphs: { type: 'boolean' } },
} as const;

export const stateAtCheckpoint = {
  type: 'object',
  properties: { checkpoint, subgraphs: { anyOf: [{ type: 'boolean' }, { type: 'string' }, { type: 'null' }] } },
} as const;

export const stateUpdate = {
  type: 'object',
  properties: {
    values: {},
    as_node: string,
    checkpoint_id: string,
    checkpoint,
  },
} as const;

export const historyBody = {
  type: ['object', 'null'],
  properties: {
    limit,
    before: { anyOf: [{ type: 'string' }, { type: 'object' }, { type: 'null' }] },
    metadata: object,
    checkpoint,
  },
} as const;

export const historyQuery = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: 1000 }, before: { type: 'string' } },
} as const;

export const runCreate = {
  type: 'object',
  required: ['assistant_id'],
  properties: {
    assistant_id: { type: 'string', minLength: 1 },
    input: {},
    command: {
      type: ['object', 'null'],
      properties: { resume: {}, update: {}, goto: {} },
    },
    checkpoint_id: string,
    checkpoint,
    metadata: object,
    context: {},
    config: runnableConfig,
    // Absolute http(s) URLs, or a path of this server (its `http.app` routes); where a URL may
    // point is checked when the run is created (`webhookUrlProblem`,
    // internal/net/address-policy.ts) and again when sent.
    webhook: { type: ['string', 'null'], pattern: WEBHOOK_PATTERN },
    interrupt_before: nodes,
    interrupt_after: nodes,
    on_disconnect: { type: ['string', 'null'], enum: ['cancel', 'continue', null] },
    multitask_strategy: { type: ['string', 'null'], enum: ['reject', 'interrupt', 'rollback', 'enqueue', null] },
    stream_mode: {
      anyOf: [
        { type: 'string', enum: STREAM_MODE_NAMES },
        { type: 'array', items: { type: 'string', enum: STREAM_MODE_NAMES } },
        { type: 'null' },
      ],
    },
    stream_subgraphs: { type: ['boolean', 'null'] },
    stream_resumable: { type: ['boolean', 'null'] },
    after_seconds: { type: ['number', 'null'], minimum: 0 },
    if_not_exists: { type: ['string', 'null'], enum: ['reject', 'create', null] },
    on_completion: { type: ['string', 'null'], enum: ['delete', 'keep', null] },
    feedback_keys: { type: ['array', 'null'], items: { type: 'string' } },
    langsmith_tracer: object,
  },
} as const;

export const runBatch = { type: 'array', minItems: 1, items: runCreate } as const;

export const runListQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
    offset: { type: 'integer', minimum: 0, default: 0 },
    status: { type: 'string', enum: ['pending', 'running', 'success', 'error', 'timeout', 'interrupted'] },
  },
} as const;

export const cancelQuery = {
  type: 'object',
  properties: {
    // `wait=0`/`false` means do not wait (the SDK always sends 0 or 1).
    wait: { type: 'string', enum: ['0', '1', 'true', 'false'] },
    action: { type: 'string', enum: ['interrupt', 'rollback'], default: 'interrupt' },
  },
} as const;

export const joinStreamQuery = {
  type: 'object',
  properties: {
    cancel_on_disconnect: { type: 'string', enum: ['0', '1', 'true', 'false'] },
  },
} as const;

export const truncateBody = {
  type: ['object', 'null'],
  properties: {
    runs: { type: 'boolean' },
    threads: { type: 'boolean' },
    assistants: { type: 'boolean' },
    checkpointer: { type: 'boolean' },
    store: { type: 'boolean' },
  },
} as const;

const namespace = { type: 'array', items: { type: 'string' } } as const;

export const storePut = {
  type: 'object',
  required: ['namespace', 'key', 'value'],
  properties: { namespace, key: { type: 'string', minLength: 1 }, value: { type: 'object' } },
} as const;

export const storeGetQuery = {
  type: 'object',
  required: ['key'],
  properties: { namespace: { type: 'string' }, key: { type: 'string', minLength: 1 } },
} as const;

export const storeDelete = {
  type: 'object',
  required: ['key'],
  properties: {
    namespace: { type: ['array', 'null'], items: { type: 'string' } },
    key: { type: 'string', minLength: 1 },
  },
} as const;

export const storeSearch = {
  type: ['object', 'null'],
  properties: {
    namespace_prefix: { type: ['array', 'null'], items: { type: 'string' } },
    filter: object,
    limit,
    offset,
    query: string,
  },
} as const;

export const storeNamespaces = {
  type: ['object', 'null'],
  properties: {
    prefix: { type: ['array', 'null'], items: { type: 'string' } },
    suffix: { type: ['array', 'null'], items: { type: 'string' } },
    max_depth: { type: ['integer', 'null'], minimum: 1 },
    limit: { type: ['integer', 'null'], minimum: 1, maximum: 1000 },
    offset,
  },
} as const;
