// What the routes work with: the domain services and the run machinery of one server instance,
// and the Fastify instance they register on.

import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Logger } from 'pino';
import type { Host } from 'tracepipe/plugin';
import type { Crons } from '../crons/crons.ts';
import type { AssistantService } from '../domain/assistants.ts';
import type { DataReset } from '../domain/data-reset.ts';
import type { StoreItems } from '../domain/store-items.ts';
import type { RunService } from '../domain/runs.ts';
import type { ThreadService } from '../domain/threads.ts';
import type { GraphRegistry } from '../graphs/registry.ts';
import type { EventBroker } from '../runs/broker.ts';
import type { RunCoordinator } from '../runs/coordinator.ts';
import type { GraphRunner } from '../runs/graph-runner.ts';
import type { Access } from './access.ts';
import type { UiBundles } from './routes-genui.ts';

export interface AgentServices {
  readonly assistants: AssistantService;
  readonly threads: ThreadService;
  readonly runs: RunService;
  /** Empties the data for test suites (`POST /internal/truncate`). */
  readonly dataReset: DataReset;
  /** The store's items under the custom auth handler's filters (`/store/*`). */
  readonly storeItems: StoreItems;
  readonly graphs: GraphRegistry;
  readonly broker: EventBroker;
  readonly runner: GraphRunner;
  readonly coordinator: RunCoordinator;
  readonly logger: Logger;
  /** Authorization by the custom auth handler (a no-op without one); see `access.ts`. */
  readonly access: Access;
  /** Serve the test-only routes (`POST /internal/truncate`). */
  readonly testRoutes: boolean;
  /** Interval between SSE heartbeat comments. */
  readonly heartbeatMs: number;
  /** True once the server is stopping: long responses then close their connections as they end. */
  readonly closing: () => boolean;
  /** The process's metrics registry, served at `/metrics`. */
  readonly metrics: Host['metrics'];
  /** `max_body_bytes` and `max_json_depth`: the request body limits. */
  readonly maxBodyBytes: number;
  readonly maxJsonDepth: number;
  /** Crons (`/runs/crons`); their routes are served when present. */
  readonly crons?: Crons;
  /** Serve `/mcp` (the assistants as MCP tools). */
  readonly mcpEnabled?: boolean;
  /** Serve `/a2a/{assistant_id}` and the agent cards. */
  readonly a2aEnabled?: boolean;
  /** `auth.api_keys` is set: requests need an `X-Api-Key` (the agent cards declare it). */
  readonly apiKeysRequired?: boolean;
  /** The generative UI bundles of langgraph.json's `ui` section, served under `/ui/{name}`. */
  readonly uiBundles?: UiBundles;
}

/**
 * The API's Fastify instance with the JSON Schema type provider: a handler's `request.body`,
 * `params` and `query` have the types of its route's schemas (schemas.ts), so no cast is needed.
 */
export type AgentApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  JsonSchemaToTsProvider
>;
