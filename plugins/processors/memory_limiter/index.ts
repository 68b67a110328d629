import type { DataType, ProcessorFactory } from 'tracepipe/plugin';
import type { MemoryLimiterConfig } from './config.ts';
import { configSchema, validateConfig } from './config.ts';
import { MemoryLimiterProcessor } from './limiter.ts';

export type { MemoryLimiterConfig } from './config.ts';

export const memoryLimiterProcessorFactory = Object.freeze({
  kind: 'processor',
  type: 'memory_limiter',
  stability: 'beta',
  description:
    "Refuses data (429/503 with Retry-After, gRPC RESOURCE_EXHAUSTED) while the process's RSS is above a soft limit, and forces garbage collections; first in a pipeline.",
  consumes: 'any',
  produces: 'any',
  configSchema,
  validate: validateConfig,
  create: (settings, config, next) => new MemoryLimiterProcessor(settings, config, next),
} satisfies ProcessorFactory<MemoryLimiterConfig, DataType, DataType>);
