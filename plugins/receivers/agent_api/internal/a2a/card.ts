// The agent card of an assistant, in the A2A v0.3 shape (`url` + `preferredTransport`) that the
// JSON-RPC clients in use read, with the v1.0 `supportedInterfaces` list beside it (the endpoint
// speaks both method sets). The address is `LANGGRAPH_API_URL` when set (a deployment behind a
// proxy names its public address there), else the request's scheme (`X-Forwarded-Proto`) and host.
// With API keys on, the card declares them (`securitySchemes` + `security`, v0.3 shape: an `apiKey`
// scheme in the `X-Api-Key` header), so a client knows what to send before its first call fails.
// A custom auth handler's scheme is the handler's own business and is not declared.

import type { FastifyRequest } from 'fastify';
import type { AgentCard } from '@a2a-js/sdk';
import type { Assistant, JsonObject } from '../storage/storage.ts';

const MODES = ['text/plain', 'application/json'];

export function publicBaseUrl(request: FastifyRequest): string {
  const configured = process.env.LANGGRAPH_API_URL;
  if (configured) return configured.replace(/\/+$/, '');
  const forwarded = request.headers['x-forwarded-proto'];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim() || request.protocol;
  return `${proto}://${request.host}`;
}

/** The name of the API-key scheme in `securitySchemes`. */
export const API_KEY_SCHEME = 'apiKey';

export interface CardOptions {
  /** `auth.api_keys` is set: declare the `X-Api-Key` header. */
  readonly apiKeyRequired?: boolean;
}

/** The card as served (JSON). `inputFields`: the graph's input properties. */
export function agentCard(
  assistant: Assistant,
  baseUrl: string,
  inputFields: string[],
  options: CardOptions = {},
): JsonObject {
  const url = `${baseUrl}/a2a/${assistant.assistant_id}`;
  const description = assistant.description || `${assistant.name} assistant`;
  return {
    protocolVersion: '0.3.0',
    name: assistant.name,
    description,
    url,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url, transport: 'JSONRPC' }],
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ],
    version: String(assistant.version),
    ...(options.apiKeyRequired
      ? {
          securitySchemes: {
            [API_KEY_SCHEME]: {
              type: 'apiKey',
              in: 'header',
              name: 'x-api-key',
              description: 'One of the deployment’s API keys, in the X-Api-Key header.',
            },
          },
          security: [{ [API_KEY_SCHEME]: [] }],
        }
      : {}),
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: [
      {
        id: `${assistant.assistant_id}-main`,
        name: `${assistant.name} Capabilities`,
        description,
        tags: ['assistant', 'langgraph'],
        examples: [],
        inputModes: MODES,
        outputModes: MODES,
        metadata: { graph_id: assistant.graph_id, inputFields: [...inputFields].sort() },
      },
    ],
  };
}

/** What the SDK's dispatcher asks of the card (v1.0 core shape): that it streams. */
export function coreCard(card: JsonObject): AgentCard {
  // The security declarations are in the v0.3 wire shape, not the core (v1.0) one; the dispatcher
  // does not need them.
  const { securitySchemes: _schemes, security: _security, ...rest } = card;
  // The card is JSON in the v0.3 wire shape; the SDK's AgentCard is the v1.0 type, of which the
  // dispatcher reads only `capabilities`. No type describes the one as the other.
  return {
    ...rest,
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  } as unknown as AgentCard;
}
