import type { ExporterFactory } from 'tracepipe/plugin';
import type { LocalExporterConfig } from './config.ts';
import { configSchema } from './config.ts';
import { LocalExporter } from './exporter.ts';

export type { LocalExporterConfig } from './config.ts';

export const localExporterFactory = Object.freeze({
  kind: 'exporter',
  type: 'local',
  stability: 'alpha',
  description: 'Stores runs in a local SQLite file, queryable by project, time and trace.',
  consumes: 'runs',
  configSchema,
  create: (settings, config) => new LocalExporter(settings, config),
} satisfies ExporterFactory<LocalExporterConfig, 'runs'>);
