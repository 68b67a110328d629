import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@langchain/langgraph-sdk';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { openEventStream, writeSSE } from './sse.ts';

// The LangGraph SDK's own SSE decoder against the server's framing: a stream quiet for longer
// than the heartbeat interval, as every run that waits on a model is.
describe('heartbeats on an event stream', () => {
  let app: FastifyInstance;
  let url: string;

  before(async () => {
    app = Fastify();
    app.post('/threads/:thread_id/runs/stream', async (_request, reply) => {
      const { raw, stopHeartbeat } = openEventStream(reply, 10);
      await writeSSE(raw, { event: 'metadata', data: { run_id: 'r1', attempt: 1 }, id: 0 });
      await sleep(100); // several heartbeats after a frame with an id
      await writeSSE(raw, { event: 'values', data: { messages: [] }, id: 1 });
      await sleep(50);
      stopHeartbeat();
      raw.end();
    });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => app.close());

  it('reach the SDK as nothing: only the frames sent come out of runs.stream', async () => {
    const client = new Client({ apiUrl: url });
    const chunks: { event: string; data: unknown }[] = [];
    for await (const chunk of client.runs.stream('t1', 'agent', { input: {} }))
      chunks.push({ event: chunk.event, data: chunk.data });
    assert.deepEqual(chunks, [
      { event: 'metadata', data: { run_id: 'r1', attempt: 1 } },
      { event: 'values', data: { messages: [] } },
    ]);
  });
});
