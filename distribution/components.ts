// The components of the `tracepipe` command this repository builds — what a plain `tracepipe` can
// run — as the OpenTelemetry Collector's builder lists a distribution's factories in
// `components.go`. The framework (src/) knows no component; third-party plugins are added from a
// config's `plugins:` list instead.
//
// Each entry is loaded only when a config uses it (see src/pipeline/catalog.ts): the proxy never
// loads the agent server and its LangGraph runtime. A test checks that every entry's kind and type
// match the factory its module exports.

import type { Catalog } from '../src/pipeline/catalog.ts';

export const components: Catalog = [
  {
    kind: 'receiver',
    type: 'otlp',
    load: async () => (await import('../plugins/receivers/otlp/index.ts')).otlpReceiverFactory,
  },
  {
    kind: 'receiver',
    type: 'langsmith',
    load: async () => (await import('../plugins/receivers/langsmith/index.ts')).langSmithReceiverFactory,
  },
  {
    kind: 'receiver',
    type: 'agent_api',
    load: async () => (await import('../plugins/receivers/agent_api/index.ts')).agentApiReceiverFactory,
    // It imports the user's graphs and auth handlers (often TypeScript) with a plain import().
    loadsUserTypeScript: true,
  },
  {
    kind: 'processor',
    type: 'genai',
    load: async () => (await import('../plugins/processors/genai/index.ts')).genAiProcessorFactory,
  },
  {
    kind: 'processor',
    type: 'memory_limiter',
    load: async () => (await import('../plugins/processors/memory_limiter/index.ts')).memoryLimiterProcessorFactory,
  },
  {
    kind: 'processor',
    type: 'batch',
    load: async () => (await import('../plugins/processors/batch/index.ts')).batchProcessorFactory,
  },
  {
    kind: 'exporter',
    type: 'backend',
    load: async () => (await import('../plugins/exporters/backend/index.ts')).backendExporterFactory,
  },
  {
    kind: 'exporter',
    type: 'otlp',
    load: async () => (await import('../plugins/exporters/otlp/index.ts')).otlpExporterFactory,
  },
  {
    kind: 'exporter',
    type: 'loadbalancing',
    load: async () => (await import('../plugins/exporters/loadbalancing/index.ts')).loadBalancingExporterFactory,
  },
  {
    kind: 'exporter',
    type: 'file',
    load: async () => (await import('../plugins/exporters/file/index.ts')).fileExporterFactory,
  },
  {
    kind: 'exporter',
    type: 'local',
    load: async () => (await import('../plugins/exporters/local/index.ts')).localExporterFactory,
  },
  {
    kind: 'exporter',
    type: 'debug',
    load: async () => (await import('../plugins/exporters/debug/index.ts')).debugExporterFactory,
  },
  {
    kind: 'extension',
    type: 'trace_explorer',
    load: async () => (await import('../plugins/extensions/trace_explorer/index.ts')).traceExplorerExtensionFactory,
  },
];
