// JSON Schemas of the cron routes' bodies and parameters (validated by Fastify: a failure is a 422
// naming the field; also the source of the routes' TypeScript types through `FromSchema`). As
// elsewhere in the API, optional fields accept null (the Python SDK sends null for unset options)
// and unknown fields are ignored (the SDKs send `checkpoint_during`, `if_not_exists`, ...).

import { STREAM_MODE_NAMES, WEBHOOK_PATTERN, sharedSchemaParts } from '../api/schemas.ts';

const { object, string, nodes, runnableConfig } = sharedSchemaParts;
const boolean = { type: ['boolean', 'null'] } as const;

export const CRON_FIELDS = [
  'cron_id',
  'assistant_id',
  'thread_id',
  'on_run_completed',
  'end_time',
  'schedule',
  'timezone',
  'created_at',
  'updated_at',
  'user_id',
  'payload',
  'next_run_date',
  'metadata',
  'enabled',
] as const;

export const CRON_SORT_FIELDS = [
  'cron_id',
  'assistant_id',
  'thread_id',
  'next_run_date',
  'end_time',
  'created_at',
  'updated_at',
] as const;

/** What each run of the cron is made of; shared by create and update. */
const runFields = {
  input: { anyOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }, { type: 'null' }] },
  metadata: object,
  config: runnableConfig,
  context: {},
  webhook: { type: ['string', 'null'], pattern: WEBHOOK_PATTERN, maxLength: 65536 },
  interrupt_before: nodes,
  interrupt_after: nodes,
  stream_mode: {
    anyOf: [
      { type: 'string', enum: STREAM_MODE_NAMES },
      { type: 'array', items: { type: 'string', enum: STREAM_MODE_NAMES } },
      { type: 'null' },
    ],
  },
  stream_subgraphs: boolean,
  stream_resumable: boolean,
  durability: { type: ['string', 'null'], enum: ['sync', 'async', 'exit', null] },
} as const;

const scheduleFields = {
  schedule: { type: 'string', minLength: 1, maxLength: 200 },
  timezone: { type: ['string', 'null'], minLength: 1, maxLength: 100 },
  end_time: { type: ['string', 'null'], format: 'date-time' },
  enabled: boolean,
  on_run_completed: { type: ['string', 'null'], enum: ['delete', 'keep', null] },
} as const;

export const cronCreate = {
  type: 'object',
  required: ['schedule', 'assistant_id'],
  properties: {
    assistant_id: { type: 'string', minLength: 1 },
    ...scheduleFields,
    ...runFields,
    multitask_strategy: { type: ['string', 'null'], enum: ['reject', 'interrupt', 'rollback', 'enqueue', null] },
  },
} as const;

export const cronPatch = {
  type: 'object',
  properties: { ...scheduleFields, ...runFields },
} as const;

export const cronSearch = {
  type: ['object', 'null'],
  properties: {
    assistant_id: string,
    thread_id: { type: ['string', 'null'], format: 'uuid' },
    enabled: boolean,
    metadata: object,
    limit: { type: ['integer', 'null'], minimum: 1, maximum: 1000 },
    offset: { type: ['integer', 'null'], minimum: 0 },
    sort_by: { type: ['string', 'null'], enum: [...CRON_SORT_FIELDS, null] },
    sort_order: { type: ['string', 'null'], enum: ['asc', 'desc', 'ASC', 'DESC', null] },
    select: { type: ['array', 'null'], items: { type: 'string', enum: CRON_FIELDS } },
  },
} as const;

export const cronCount = {
  type: ['object', 'null'],
  properties: {
    assistant_id: string,
    thread_id: { type: ['string', 'null'], format: 'uuid' },
    enabled: boolean,
    metadata: object,
  },
} as const;

export const cronIdParams = {
  type: 'object',
  required: ['cron_id'],
  properties: { cron_id: { type: 'string', format: 'uuid' } },
} as const;

export const threadCronParams = {
  type: 'object',
  required: ['thread_id'],
  properties: { thread_id: { type: 'string', format: 'uuid' } },
} as const;
