// The built-in components, listed explicitly: this list is the one place that says what a plain
// `tracepipe` can run. Third-party plugins are added from a config's `plugins:` list instead.

import type { Factory } from '../src/pipeline/component.ts';
import { Registry } from '../src/pipeline/registry.ts';
import { debugExporterFactory } from './exporters/debug/index.ts';
import { backendExporterFactory } from './exporters/backend/index.ts';
import { fileExporterFactory } from './exporters/file/index.ts';
import { localExporterFactory } from './exporters/local/index.ts';
import { otlpExporterFactory } from './exporters/otlp/index.ts';
import { otlpReceiverFactory } from './receivers/otlp/index.ts';
import { agentApiReceiverFactory } from './receivers/agent_api/index.ts';
import { batchProcessorFactory } from './processors/batch/index.ts';
import { genAiProcessorFactory } from './processors/genai/index.ts';

export const builtinFactories: readonly Factory[] = [debugExporterFactory, backendExporterFactory, fileExporterFactory, localExporterFactory, otlpExporterFactory, otlpReceiverFactory, agentApiReceiverFactory, genAiProcessorFactory, batchProcessorFactory];

export function builtinRegistry(): Registry {
  return new Registry(builtinFactories);
}
