import type { ProcessorFactory } from 'tracepipe/plugin';
import type { GenAiProcessorConfig } from './config.ts';
import { configSchema } from './config.ts';
import { GenAiProcessor } from './processor.ts';

export type { GenAiProcessorConfig } from './config.ts';

export const genAiProcessorFactory = Object.freeze({
  kind: 'processor',
  type: 'genai',
  stability: 'beta',
  description: "Translates GenAI / OpenInference spans into the tracing backend's runs.",
  consumes: 'spans',
  produces: 'runs',
  configSchema,
  create: (settings, config, next) => new GenAiProcessor(settings, config, next),
} satisfies ProcessorFactory<GenAiProcessorConfig, 'spans', 'runs'>);
