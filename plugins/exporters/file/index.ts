import type { ExporterFactory } from 'tracepipe/plugin';
import type { FileExporterConfig } from './config.ts';
import { configSchema } from './config.ts';
import { FileExporter } from './exporter.ts';

export type { FileExporterConfig } from './config.ts';

export const fileExporterFactory = Object.freeze({
  kind: 'exporter',
  type: 'file',
  stability: 'beta',
  description: 'Appends every batch (spans or runs) as a JSON line to a file, with size-based rotation.',
  consumes: 'any',
  configSchema,
  create: (settings, config) => new FileExporter(settings, config),
} satisfies ExporterFactory<FileExporterConfig>);
