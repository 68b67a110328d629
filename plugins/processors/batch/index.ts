import type { ProcessorFactory } from 'tracepipe/plugin';
import { BatchProcessor } from './batcher.ts';
import type { BatchProcessorConfig } from './config.ts';
import { configSchema, validateConfig } from './config.ts';

export type { BatchProcessorConfig } from './config.ts';

export const batchProcessorFactory = Object.freeze({
  kind: 'processor',
  type: 'batch',
  stability: 'beta',
  description: 'Orders runs into trace trees (dotted_order) and groups them into upload batches per API key.',
  consumes: 'runs',
  produces: 'runs',
  configSchema,
  validate: validateConfig,
  create: (settings, config, next) => new BatchProcessor(settings, config, next),
} satisfies ProcessorFactory<BatchProcessorConfig, 'runs', 'runs'>);
