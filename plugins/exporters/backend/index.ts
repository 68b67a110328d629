import { validateRetry } from 'tracepipe/exporterhelper';
import type { ExporterFactory } from 'tracepipe/plugin';
import type { BackendExporterConfig } from './config.ts';
import { configSchema } from './config.ts';
import { backendExporter } from './exporter.ts';

export type { BackendExporterConfig } from './config.ts';

export const backendExporterFactory = Object.freeze({
  kind: 'exporter',
  type: 'backend',
  stability: 'beta',
  description: 'Uploads runs to the tracing backend as zstd multipart batches, with retries and an on-disk queue.',
  consumes: 'runs',
  configSchema,
  validate: (config) => validateRetry(config.retry_on_failure),
  create: (settings, config) => backendExporter(settings, config),
} satisfies ExporterFactory<BackendExporterConfig, 'runs'>);
