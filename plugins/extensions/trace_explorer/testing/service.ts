// The explorer's tests run it as users do: inside a whole service assembled from YAML (a receiver,
// the genai and batch processors, the local exporter and the explorer over the same store file).
// This starts one from the components a test names and tells where each of them listens.

import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { parseConfigText, validateConfig, Registry, Service, silentLogger, createMetricsRegistry } from 'tracepipe';
import type { Factory } from 'tracepipe/plugin';
import { localExporterFactory } from '../../../exporters/local/index.ts';
import { batchProcessorFactory } from '../../../processors/batch/index.ts';
import { genAiProcessorFactory } from '../../../processors/genai/index.ts';
import { agentApiReceiverFactory } from '../../../receivers/agent_api/index.ts';
import { traceExplorerExtensionFactory } from '../index.ts';

const GRAPHS = fileURLToPath(new URL('../../../../examples/graphs/langgraph.json', import.meta.url));

export interface StartedService {
  readonly service: Service;
  /** The first endpoint a component describes (`otlp`, `agent_api`, `trace_explorer`, ...). */
  endpoint(id: string): string;
}

/** Validates `yaml` (paths relative to `dir`) against `factories`, then starts the service. */
export async function startService(yaml: string, dir: string, factories: readonly Factory[]): Promise<StartedService> {
  const { config, errors } = validateConfig(parseConfigText(yaml), new Registry(factories), dir);
  assert.deepEqual(errors, []);
  const service = new Service(config!, {
    logger: silentLogger(),
    metrics: createMetricsRegistry({ processMetrics: false }),
  });
  await service.start();
  const described = service.describe();
  return {
    service,
    endpoint(id) {
      const url = described.find((component) => component.id === id)?.endpoints?.[0]?.url;
      assert.ok(url, `component ${id} describes an endpoint`);
      return url;
    },
  };
}

export interface AgentServerWithExplorer {
  readonly service: Service;
  /** The agent API's base URL, for the LangGraph SDK's `Client`. */
  readonly agentUrl: string;
  /** The explorer's origin (its API under /api, its pages under /ui). */
  readonly explorerUrl: string;
}

/**
 * The example agent server (examples/graphs) with its runs traced through the genai and batch
 * processors into a local store in `dir` that the explorer shows; `explorer` adds settings of the
 * explorer (YAML flow mappings: `prices: { local-echo: { input: 1, output: 2 } }`).
 */
export async function startAgentServerWithExplorer(dir: string, explorer = ''): Promise<AgentServerWithExplorer> {
  const yaml = `
receivers:
  agent_api: { port: 0, langgraph_config: ${GRAPHS}, data_dir: ${dir}/agent, tracing: { enabled: true } }
processors: { genai: {}, batch: { flush_interval_ms: 50 } }
exporters: { local: { path: ${dir}/traces.db } }
extensions:
  trace_explorer: { port: 0, path: ${dir}/traces.db${explorer ? `, ${explorer}` : ''} }
service:
  extensions: [trace_explorer]
  pipelines: { traces: { receivers: [agent_api], processors: [genai, batch], exporters: [local] } }
`;
  const started = await startService(yaml, dir, [
    agentApiReceiverFactory,
    genAiProcessorFactory,
    batchProcessorFactory,
    localExporterFactory,
    traceExplorerExtensionFactory,
  ]);
  return {
    service: started.service,
    agentUrl: started.endpoint('agent_api').replace(/\/$/, ''),
    explorerUrl: started.endpoint('trace_explorer').replace(/\/ui\/traces$/, ''),
  };
}
