import { validateRetry } from 'tracepipe/exporterhelper';
import type { ExporterFactory } from 'tracepipe/plugin';
import type { OtlpExporterConfig } from 'tracepipe/otlp';
import { otlpExporter, otlpExporterConfigSchema } from 'tracepipe/otlp';

export type { OtlpExporterConfig } from 'tracepipe/otlp';

export const otlpExporterFactory = Object.freeze({
  kind: 'exporter',
  type: 'otlp',
  stability: 'beta',
  description:
    'Sends spans to another OTLP/HTTP collector (protobuf or JSON, gzip), with retries and an optional on-disk queue.',
  consumes: 'spans',
  configSchema: otlpExporterConfigSchema,
  validate: (config) => validateRetry(config.retry_on_failure),
  create: (settings, config) => otlpExporter(settings, config),
} satisfies ExporterFactory<OtlpExporterConfig, 'spans'>);
