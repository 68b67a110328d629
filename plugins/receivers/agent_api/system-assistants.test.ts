// Deleting a graph's system assistant, as the reference server (langgraphjs libs/langgraph-api)
// does it: allowed like any delete (200 with its id, its versions and runs gone), after which the
// graph id names no assistant (404 for runs by graph id) until the next start re-creates it with
// its defaults — the deployment's default assistants come back with the deployment.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestServer } from './testing/test-server.ts';

const ask = { messages: [{ role: 'user', content: 'hi' }] };

describe('agent_api: deleting a system assistant', () => {
  it('deletes it, answers 404 for runs by graph id, and re-creates it at the next start', async () => {
    const first = await startTestServer();
    const { dataDir } = first;
    let second: Awaited<ReturnType<typeof startTestServer>> | undefined;
    try {
      const system = await first.client.assistants.get('agent');
      assert.equal(system.metadata?.created_by, 'system');
      await first.client.assistants.update('agent', { config: { configurable: { changed: true } } });
      const deleted = await fetch(`${first.url}/assistants/agent`, { method: 'DELETE' });
      assert.equal(deleted.status, 200);
      assert.deepEqual(await deleted.json(), [system.assistant_id]);
      await assert.rejects(first.client.assistants.get('agent'), /HTTP 404/);
      await assert.rejects(
        first.client.runs.wait(null, 'agent', { input: ask }),
        /HTTP 404: .*No assistant found for 'agent'/,
      );
      await first.stop({ keepData: true });

      second = await startTestServer({ dataDir });
      const restored = await second.client.assistants.get('agent');
      assert.equal(restored.assistant_id, system.assistant_id);
      assert.equal(restored.version, 1);
      assert.deepEqual(restored.config, {});
      assert.equal(restored.metadata?.created_by, 'system');
      assert.ok(await second.client.runs.wait(null, 'agent', { input: ask }));
    } finally {
      await (second ?? first).stop();
    }
  });
});
