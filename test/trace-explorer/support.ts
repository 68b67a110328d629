// The explorer's end-to-end tests run it as users do: inside a whole service assembled from YAML
// (a receiver, the genai and batch processors, the local exporter and the explorer over the same
// store file), from the built-in components (test/support/service.ts).

import { fileURLToPath } from 'node:url';
import type { Service } from 'tracepipe';
import { startService } from '../support/service.ts';

const GRAPHS = fileURLToPath(new URL('../../examples/graphs/langgraph.json', import.meta.url));

/** Where the screenshots of the explorer's pages land, for a reviewer. */
export const OUTPUT = fileURLToPath(new URL('../../test-output', import.meta.url));

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
  const started = await startService(yaml, dir);
  return {
    service: started.service,
    agentUrl: started.endpoint('agent_api').replace(/\/$/, ''),
    explorerUrl: started.endpoint('trace_explorer').replace(/\/ui\/traces$/, ''),
  };
}
