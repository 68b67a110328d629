// The one cron test on the wall clock: a `* * * * *` cron created through the SDK starts its run
// within 65 s, and within two seconds of the minute it was due at. (crons.test.ts moves a test
// clock instead.)

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Client } from '@langchain/langgraph-sdk';
import { eventually } from 'tracepipe/testing';
import { useTestServer } from './testing/test-server.ts';

describe('agent_api crons on the wall clock', () => {
  let client: Client;
  useTestServer((server) => {
    client = server.client;
  });

  it('a * * * * * cron fires within 65 s, on time', { timeout: 90_000 }, async () => {
    const created = Date.now();
    const cron = await client.crons.create('agent', {
      schedule: '* * * * *',
      input: { messages: [{ role: 'user', content: 'tick' }] },
      onRunCompleted: 'keep',
    });
    const due = Date.parse(cron.next_run_date!);
    assert.ok(due - created <= 60_000 && due > created, `next_run_date ${cron.next_run_date} is the next minute`);
    const threads = await eventually(
      async () => {
        const found = await client.threads.search({ metadata: { cron_id: cron.cron_id } });
        assert.equal(found.length, 1, 'one run within 65 s');
        return found;
      },
      { timeoutMs: 65_000 - (Date.now() - created), intervalMs: 250 },
    );
    const [run] = await client.runs.list(threads[0]!.thread_id);
    const lateness = Date.parse(run!.created_at) - due;
    assert.ok(lateness >= 0 && lateness < 2000, `started ${lateness} ms after it was due`);
    await client.crons.delete(cron.cron_id);
  });
});
