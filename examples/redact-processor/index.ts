// An example third-party plugin: a processor that redacts attribute values. A package of its own
// that uses tracepipe only through its public exports (`tracepipe/plugin`, `tracepipe/testing`),
// loaded from a config's `plugins:` list by path or by package name; see README.md.

import type { ProcessorFactory } from 'tracepipe/plugin';
import type { RedactConfig } from './config.ts';
import { configSchema, validateRedactConfig } from './config.ts';
import { RedactProcessor } from './processor.ts';

export type { RedactConfig } from './config.ts';

const redactProcessorFactory = Object.freeze({
  kind: 'processor',
  type: 'redact',
  stability: 'alpha',
  description: 'Replaces span attribute values that match configured patterns or keys.',
  consumes: 'spans',
  produces: 'spans',
  configSchema,
  validate: validateRedactConfig,
  create: (settings, config, next) => new RedactProcessor(settings, config, next),
} satisfies ProcessorFactory<RedactConfig, 'spans', 'spans'>);

export default redactProcessorFactory;
