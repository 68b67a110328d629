// A deployment's own HTTP app (langgraph.json `http.app`), as LangGraph.js deployments write
// them: routes of its own beside the API, and middleware around every request.

import { Client } from '@langchain/langgraph-sdk';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { streamText } from 'hono/streaming';

const webhookPayloads: unknown[] = [];
const lockstepWaiters: (() => void)[] = [];

export const app = new Hono()
  .use(async (c, next) => {
    // Answers instead of the API.
    if (c.req.query('maintenance') !== undefined) return c.json({ status: 'maintenance' }, 503);
    await next();
    c.header('x-deployment-app', 'seen');
  })
  .use(async (c, next) => {
    // Reads the body of thread creations first; the API still gets it.
    if (c.req.method === 'POST' && c.req.path === '/threads') {
      const body = (await c.req.json()) as { metadata?: Record<string, unknown> };
      if (body.metadata?.owner === 'mallory') return c.json({ refused: 'mallory' }, 403);
    }
    await next();
  })
  .get('/custom/hello', (c) => c.json({ hello: c.req.header('x-name') ?? 'anonymous' }))
  .get('/custom/refused', () => {
    throw new HTTPException(400, { message: 'refused by the app' });
  })
  .get('/custom/count', (c) =>
    streamText(c, async (stream) => {
      for (let i = 0; i < 3; i++) {
        await stream.writeln(`line ${i}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }),
  )
  // Writes a line, then waits for `/custom/next` before the next one: a client that reads each
  // line on its own proves the server sends every write as it comes, with no clock involved.
  .get('/custom/lockstep', (c) =>
    streamText(c, async (stream) => {
      for (let i = 0; i < 4; i++) {
        await stream.writeln(`step ${i}`);
        await new Promise<void>((resolve) => lockstepWaiters.push(resolve));
      }
    }),
  )
  .get('/custom/next', (c) => {
    for (const release of lockstepWaiters.splice(0)) release();
    return c.json({ released: true });
  })
  .get('/custom/assistants', async (c) => {
    // No apiUrl: the SDK talks to the server that serves this route.
    const found = await new Client({ apiKey: c.req.header('x-api-key') ?? null }).assistants.search({
      graphId: 'chat',
    });
    return c.json({ graphs: found.map((assistant) => assistant.graph_id) });
  })
  .post('/custom/webhook', async (c) => {
    webhookPayloads.push(await c.req.json());
    return c.json({ received: true });
  })
  .get('/custom/webhook', (c) => c.json(webhookPayloads));
