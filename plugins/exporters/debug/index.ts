import type { ExporterFactory } from 'tracepipe/plugin';
import type { DebugExporterConfig } from './config.ts';
import { configSchema } from './config.ts';
import { DebugExporter } from './exporter.ts';

export type { DebugExporterConfig } from './config.ts';

export const debugExporterFactory = Object.freeze({
  kind: 'exporter',
  type: 'debug',
  stability: 'beta',
  description: 'Logs every batch it receives: one line with its counts, or every item.',
  consumes: 'any',
  configSchema,
  create: (settings, config) => new DebugExporter(settings, config),
} satisfies ExporterFactory<DebugExporterConfig>);
