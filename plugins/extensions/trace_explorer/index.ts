import type { ExtensionFactory } from 'tracepipe/plugin';
import type { TraceExplorerConfig } from './config.ts';
import { configSchema } from './config.ts';
import { TraceExplorer } from './extension.ts';

export type { TraceExplorerConfig } from './config.ts';

export const traceExplorerExtensionFactory = Object.freeze({
  kind: 'extension',
  type: 'trace_explorer',
  stability: 'alpha',
  description: 'Serves a trace query API and web pages over the local trace store.',
  configSchema,
  listenAddresses: (config) => [`${config.host}:${config.port}`],
  create: (settings, config) => new TraceExplorer(settings, config),
} satisfies ExtensionFactory<TraceExplorerConfig>);
