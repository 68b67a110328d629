// The `agent_api` receiver factory: the Agent Deployment API server for LangGraph.js graphs.

import type { ReceiverFactory } from '../../../src/pipeline/component.ts';
import type { AgentApiConfig } from './config.ts';
import { configSchema } from './config.ts';
import { allowListProblems } from './internal/net/address-policy.ts';
import { AgentApiReceiver } from './receiver.ts';

export type { AgentApiConfig } from './config.ts';

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
  create: (settings, config, next) => new AgentApiReceiver(settings, config, next),
} satisfies ReceiverFactory<AgentApiConfig, 'spans'>);
