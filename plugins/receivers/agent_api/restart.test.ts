// Restarting the server on the same data directory: assistants (with versions), threads, runs and
// thread state are all still there; a run a stopped process left `running` is marked `error`, and a
// `pending` one runs.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isoNow } from './internal/api/clock.ts';
import { openSqliteStorage } from './internal/storage/sqlite.ts';
import { newGate } from './testing/gates.ts';
import { startTestServer } from './testing/test-server.ts';
import { messagesOf, runErrorOf } from './testing/types.ts';

const ask = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('agent_api restart', () => {
  it('keeps assistants, threads, runs and state across a restart', async () => {
    const first = await startTestServer();
    const assistant = await first.client.assistants.create({
      graphId: 'chat',
      name: 'kept',
      context: { system_prompt: 'Persist.' },
    });
    await first.client.assistants.update(assistant.assistant_id, { context: { system_prompt: 'Version two.' } });
    const thread = await first.client.threads.create({ metadata: { kept: true } });
    await first.client.runs.wait(thread.thread_id, assistant.assistant_id, { input: ask('remember me') });
    const [run] = await first.client.runs.list(thread.thread_id);
    const stateBefore = await first.client.threads.getState(thread.thread_id);
    await first.stop({ keepData: true });

    const second = await startTestServer({ dataDir: first.dataDir });
    try {
      const { client } = second;
      const again = await client.assistants.get(assistant.assistant_id);
      assert.equal(again.version, 2);
      assert.deepEqual(again.context, { system_prompt: 'Version two.' });
      assert.deepEqual(
        (await client.assistants.getVersions(assistant.assistant_id)).map((v) => v.version),
        [2, 1],
      );
      const threadAgain = await client.threads.get(thread.thread_id);
      assert.deepEqual(threadAgain.metadata, { kept: true, graph_id: 'chat', assistant_id: assistant.assistant_id });
      assert.equal(threadAgain.status, 'idle');
      assert.deepEqual((await client.runs.get(thread.thread_id, run.run_id)).status, 'success');
      const stateAfter = await client.threads.getState(thread.thread_id);
      assert.deepEqual(stateAfter.values, stateBefore.values);
      assert.equal(stateAfter.checkpoint.checkpoint_id, stateBefore.checkpoint.checkpoint_id);
      // The thread goes on from its saved state.
      const reply = messagesOf(
        await client.runs.wait(thread.thread_id, assistant.assistant_id, { input: ask('and now?') }),
      );
      assert.equal(reply.length, 4);
      assert.equal(reply.at(-1)?.content, '(Version two.) You said: and now?');
      // The system assistants were not duplicated.
      assert.equal((await client.assistants.search({ metadata: { created_by: 'system' }, limit: 100 })).length, 8);
    } finally {
      await second.stop();
    }
  });

  it('marks runs a stopped process left running as error, and runs the pending ones', async () => {
    const first = await startTestServer();
    const thread = await first.client.threads.create();
    const other = await first.client.threads.create();
    const cutOff = await first.client.runs.create(thread.thread_id, 'sleep', {
      input: { delay_ms: 10 },
      afterSeconds: 3600,
    });
    const waiting = await first.client.runs.create(other.thread_id, 'agent', {
      input: ask('later'),
      afterSeconds: 3600,
    });
    await first.stop({ keepData: true });

    // Simulate a crash: one run was running when the process died; the other is due now.
    const storage = openSqliteStorage(join(first.dataDir, 'agent', 'agent.sqlite'));
    const running = (await storage.runs.get(cutOff.run_id))!;
    await storage.runs.update({ ...running, status: 'running', attempt: 1 });
    const pending = (await storage.runs.get(waiting.run_id))!;
    await storage.transaction(async (tx) => {
      await tx.runs.delete(pending.run_id);
      await tx.runs.insert({ ...pending, created_at: isoNow(-1000) });
    });
    await storage.close();

    const second = await startTestServer({ dataDir: first.dataDir });
    try {
      const { client } = second;
      const recovered = await client.runs.get(thread.thread_id, cutOff.run_id);
      assert.equal(recovered.status, 'error');
      assert.equal((await client.threads.get(thread.thread_id)).status, 'error');
      const joined = runErrorOf(await client.runs.join(thread.thread_id, cutOff.run_id));
      assert.equal(joined.error, 'ServerRestart');
      assert.match(joined.message, /stopped while this run was executing/);
      const values = await client.runs.join(other.thread_id, waiting.run_id);
      assert.equal(messagesOf(values).at(-1)?.content, 'You said: later');
      assert.equal((await client.runs.get(other.thread_id, waiting.run_id)).status, 'success');
    } finally {
      await second.stop();
    }
  });

  it('stops promptly while clients wait on a run that has not started, which still runs after a restart', async () => {
    const first = await startTestServer();
    const thread = await first.client.threads.create();
    const run = await first.client.runs.create(thread.thread_id, 'agent', { input: ask('delayed'), afterSeconds: 1 });
    const joined = await fetch(`${first.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`);
    const waiting = fetch(`${first.url}/threads/${thread.thread_id}/runs/${run.run_id}/join`)
      .then((r) => r.text())
      .catch(() => 'closed');
    const body = joined.text();
    await first.stop({ keepData: true });
    assert.equal(typeof (await body), 'string');
    await waiting;

    const second = await startTestServer({ dataDir: first.dataDir });
    try {
      const values = await second.client.runs.join(thread.thread_id, run.run_id);
      assert.equal(messagesOf(values).at(-1)?.content, 'You said: delayed');
    } finally {
      await second.stop();
    }
  });

  it('a graceful stop ends runs still going at the deadline as error, with a message saying so', async () => {
    const first = await startTestServer();
    const thread = await first.client.threads.create();
    // Held at a gate that is never opened: still running at the deadline.
    const gate = newGate();
    const run = await first.client.runs.create(thread.thread_id, 'gate', { input: { gate: gate.name } });
    await gate.reached;
    await first.stop({ keepData: true, deadlineMs: 800 });

    const second = await startTestServer({ dataDir: first.dataDir });
    try {
      assert.equal((await second.client.runs.get(thread.thread_id, run.run_id)).status, 'error');
      const joined = runErrorOf(await second.client.runs.join(thread.thread_id, run.run_id));
      assert.equal(joined.error, 'ServerShutdown');
      assert.equal((await second.client.threads.get(thread.thread_id)).status, 'error');
    } finally {
      await second.stop();
    }
  });
});
