import type { ExporterFactory } from 'tracepipe/plugin';
import type { LoadBalancingExporterConfig } from './config.ts';
import { configSchema, validateConfig } from './config.ts';
import { LoadBalancingExporter } from './exporter.ts';

export type { LoadBalancingExporterConfig } from './config.ts';

export const loadBalancingExporterFactory = Object.freeze({
  kind: 'exporter',
  type: 'loadbalancing',
  stability: 'beta',
  description:
    'Routes spans by trace id on a consistent-hash ring to OTLP/HTTP endpoints (static or DNS), one queue, retry and on-disk queue per endpoint.',
  consumes: 'spans',
  configSchema,
  validate: validateConfig,
  create: (settings, config) => new LoadBalancingExporter(settings, config),
} satisfies ExporterFactory<LoadBalancingExporterConfig, 'spans'>);
