// For tests: starts a real `agent_api` server on a loopback port (port 0) over a temporary data
// directory, serving the example graphs and the `gate` test graph (TEST_LANGGRAPH_JSON), and hands
// back an SDK client for it. `useTestServer` gives a whole `describe` block one such server. The
// server runs in the test's process, so a test opens the gates its runs wait at (./gates.ts).
// `database: 'postgres'` (or TEST_AGENT_DATABASE=postgres for every server a suite starts) puts
// it on a PostgreSQL database of its own, created here and dropped when it stops; `database:
// {uri}` on a given one (several servers sharing it).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { configFor, Sink, nopHost, nopSettings } from 'tracepipe/testing';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { AgentApiConfig } from '../config.ts';
import { agentApiReceiverFactory } from '../index.ts';
import { AgentApiReceiver } from '../receiver.ts';
import { freshDatabase } from './postgres.ts';
import type { TestDatabase } from './postgres.ts';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../..');

export const EXAMPLES_LANGGRAPH_JSON = join(repoRoot, 'examples/graphs/langgraph.json');
/** The example graphs under the same ids, plus `gate` (./graphs/gate.ts). */
export const TEST_LANGGRAPH_JSON = fileURLToPath(new URL('./graphs/langgraph.json', import.meta.url));
/** Graphs written as deployments for the LangGraph platform are (./graphs/compat). */
export const COMPAT_LANGGRAPH_JSON = fileURLToPath(new URL('./graphs/compat/langgraph.json', import.meta.url));

export interface TestServer {
  readonly receiver: AgentApiReceiver;
  readonly url: string;
  readonly client: Client;
  /** Where the runs' spans go: the `next` given, or a Sink of the server's own. */
  readonly sink: Sink<'spans'>;
  readonly dataDir: string;
  /** The process metrics the receiver registers its own in. */
  readonly metrics: Registry;
  /** The PostgreSQL database the server is on; undefined on SQLite. */
  readonly databaseUri?: string;
  /** Stops the server within `deadlineMs` (default 5 s); removes the data directory unless `keepData`. */
  stop(options?: { keepData?: boolean; deadlineMs?: number }): Promise<void>;
}

/** Databases of servers stopped with `keepData`, by data directory: a restart on it finds them. */
const keptDatabases = new Map<string, TestDatabase>();

/** Where a test server keeps its data: SQLite under its data directory, or PostgreSQL. */
export type TestDatabaseChoice = 'sqlite' | 'postgres' | { readonly uri: string };

export async function startTestServer(
  overrides: Partial<AgentApiConfig> & {
    dataDir?: string;
    logger?: Logger;
    database?: TestDatabaseChoice;
    sink?: Sink<'spans'>;
  } = {},
): Promise<TestServer> {
  const { dataDir: givenDir, logger, database: choice, sink: givenSink, ...configOverrides } = overrides;
  const dataDir = givenDir ?? mkdtempSync(join(tmpdir(), 'agent-api-test-'));
  const wanted = choice ?? (process.env.TEST_AGENT_DATABASE === 'postgres' ? 'postgres' : 'sqlite');
  // A database of its own is the server's to drop; a given one belongs to the test.
  const kept = keptDatabases.get(dataDir);
  keptDatabases.delete(dataDir);
  const owned = wanted === 'postgres' ? (kept ?? (await freshDatabase('agent_api_server'))) : undefined;
  const databaseUri = owned?.uri ?? (typeof wanted === 'object' ? wanted.uri : undefined);
  // Validated with the defaults filled in, as a config file would give it.
  const config = configFor<AgentApiConfig>(agentApiReceiverFactory, {
    langgraph_config: TEST_LANGGRAPH_JSON,
    data_dir: dataDir,
    port: 0,
    workers: 4,
    // Reading graph types costs seconds of CPU per server; the tests that check it turn it on.
    type_schemas: { enabled: false },
    ...(databaseUri ? { storage: { database_uri: databaseUri } } : {}),
    ...configOverrides,
  });
  const host = nopHost({ resolvePath: (path: string) => resolve(repoRoot, path) });
  const sink = givenSink ?? new Sink<'spans'>();
  const settings = nopSettings('receiver', 'agent_api', host, logger ? { logger } : {});
  const receiver = new AgentApiReceiver(settings, config, sink);
  try {
    await receiver.start();
  } catch (error) {
    await receiver.shutdown(Date.now() + 1000).catch(() => undefined);
    await owned?.drop();
    throw error;
  }
  const url = `http://127.0.0.1:${receiver.port}`;
  const client = new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } });
  return {
    receiver,
    url,
    client,
    sink,
    dataDir,
    metrics: host.metrics,
    ...(databaseUri ? { databaseUri } : {}),
    async stop(options = {}) {
      await receiver.shutdown(Date.now() + (options.deadlineMs ?? 5000));
      if (!options.keepData) {
        rmSync(dataDir, { recursive: true, force: true });
        await owned?.drop();
      } else if (owned) keptDatabases.set(dataDir, owned);
    },
  };
}

/**
 * One server for the enclosing `describe`: started before its tests (handed to `onStart`, where
 * the suite keeps it) and stopped after them.
 */
export function useTestServer(
  onStart: (server: TestServer) => void,
  overrides: Parameters<typeof startTestServer>[0] = {},
): void {
  let server: TestServer | undefined;
  before(async () => {
    server = await startTestServer(overrides);
    onStart(server);
  });
  after(async () => {
    await server?.stop();
  });
}
