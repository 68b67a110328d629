// The `agent_api` receiver factory: the Agent Deployment API server for LangGraph.js graphs.

import type { NamedFile, ReceiverFactory } from 'tracepipe/plugin';
import type { AgentApiConfig } from './config.ts';
import { configSchema } from './config.ts';
import { allowListProblems } from './internal/net/address-policy.ts';
import { AgentApiReceiver } from './receiver.ts';

export type { AgentApiConfig } from './config.ts';

/** A graph or handler spec, `./file.ts:export`: its file; none for a remote graph's URL. */
function specFile(spec: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) return undefined;
  const colon = spec.lastIndexOf(':');
  return colon > 0 ? spec.slice(0, colon) : spec;
}

/** The files the config names: the graphs (inline, or the langgraph.json that names them) and the auth handler. */
function namedFiles(config: AgentApiConfig): NamedFile[] {
  const files: NamedFile[] = [];
  if (config.graphs) {
    for (const [id, spec] of Object.entries(config.graphs)) {
      const path = specFile(spec);
      if (path) files.push({ key: `graphs.${id}`, path });
    }
  } else files.push({ key: 'langgraph_config', path: config.langgraph_config });
  const auth = config.auth.path && specFile(config.auth.path);
  if (auth) files.push({ key: 'auth.path', path: auth });
  return files;
}

export const agentApiReceiverFactory = Object.freeze({
  kind: 'receiver',
  type: 'agent_api',
  stability: 'development',
  description:
    'Serves the Agent Deployment API (assistants, threads, runs, streaming) for LangGraph.js graphs and traces every run.',
  produces: 'spans',
  configSchema,
  validate: (config) => allowListProblems(config.webhooks?.allow ?? [], 'webhooks.allow'),
  listenAddresses: (config) => [`${config.host}:${config.port}`],
  namedFiles: (config) => namedFiles(config),
  create: (settings, config, next) => new AgentApiReceiver(settings, config, next),
} satisfies ReceiverFactory<AgentApiConfig, 'spans'>);
