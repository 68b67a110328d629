// `/ok`, `/info` and, only with `test_routes: true`, `/internal/truncate` (which empties the data
// for test suites, keeping the system assistants: a route no server others can reach should have).

import { createRequire } from 'node:module';
import { truncateBody } from '../api/schemas.ts';
import type { AgentApp, AgentServices } from './services.ts';

const require = createRequire(import.meta.url);
const langgraphVersion = (() => {
  try {
    return String((require('@langchain/langgraph/package.json') as { version: string }).version);
  } catch {
    return 'unknown';
  }
})();

export function registerMetaRoutes(app: AgentApp, services: AgentServices): void {
  app.get('/ok', async () => ({ ok: true }));

  app.get('/info', async () => ({
    version: '0.1.0',
    langgraph_js_version: langgraphVersion,
    context: 'js',
    flags: {
      assistants: true,
      crons: services.crons !== undefined,
      langsmith: false,
      langsmith_tracing_replicas: false,
      mcp: services.mcpEnabled === true,
      a2a: services.a2aEnabled === true,
    },
    graphs: services.graphs.ids(),
  }));

  if (!services.testRoutes) return;
  app.post('/internal/truncate', { schema: { body: truncateBody, hide: true } }, async (request) => {
    const body: NonNullable<typeof request.body> = request.body ?? {};
    await services.dataReset.truncate(body);
    return { ok: true };
  });
}
