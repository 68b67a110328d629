import { validateRetry } from 'tracepipe/exporterhelper';
import type { ExporterFactory } from 'tracepipe/plugin';
import type { OtlpExporterConfig } from './config.ts';
import { configSchema } from './config.ts';
import { otlpExporter } from './exporter.ts';

export type { OtlpExporterConfig } from './config.ts';

export const otlpExporterFactory = Object.freeze({
  kind: 'exporter',
  type: 'otlp',
  stability: 'beta',
  description:
    'Sends spans to another OTLP/HTTP collector (protobuf or JSON, gzip), with retries and an optional on-disk queue.',
  consumes: 'spans',
  configSchema,
  validate: (config) => validateRetry(config.retry_on_failure),
  create: (settings, config) => otlpExporter(settings, config),
} satisfies ExporterFactory<OtlpExporterConfig, 'spans'>);
