// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// the Agent Deployment API as plugins/receivers/agent_api/README.md describes it and the reference
// server's (LangGraph.js's `langgraph-api`) wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).
//
// A server with API keys and a run time limit, restarted on its data directory.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { Client as SdkClient } from '@langchain/langgraph-sdk';
import type { Client } from '@langchain/langgraph-sdk';
import { eventually } from '../../src/testkit/eventually.ts';
import { collect, failureOf, request } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import { startTestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import { assertMatches } from '../support/match-object.ts';
import type { Json } from './support.ts';
import { hello, lastAiText, longSleep, useSharedServer, UUID } from './support.ts';

let server: TestServer;
let client: Client;
let url: string;
useSharedServer((started) => {
  server = started;
  client = started.client;
  url = started.url;
});

describe('a server with API keys and a run time limit, restarted on its data', () => {
  let secured: TestServer;
  before(async () => {
    secured = await startTestServer({ auth: { api_keys: ['test-key'] }, run_timeout_ms: 400 } as Parameters<
      typeof startTestServer
    >[0]);
  });
  after(async () => {
    await secured.stop();
  });

  test('X-Api-Key: required with the SDK and raw HTTP (401 with a message); /ok stays open', async () => {
    const withKey = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key' });
    const thread = await withKey.threads.create();
    assert.match(thread.thread_id, UUID);
    const wrongKey = new SdkClient({ apiUrl: secured.url, apiKey: 'wrong', callerOptions: { maxRetries: 0 } });
    assert.match(await failureOf(() => wrongKey.threads.create()), /^HTTP 401: .*[Kk]ey/);
    const none = await request(secured.url, 'POST', '/threads', { body: {} });
    assert.equal(none.status, 401);
    assert.match(none.text, /X-Api-Key/i);
    assert.equal((await request(secured.url, 'GET', '/ok')).status, 200);
  });

  test('a run over its time limit ends `timeout` and says so in its stream; the thread is `error`', async () => {
    const sdk = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key' });
    const thread = await sdk.threads.create();
    // A long sleep, not a gate: the server's own time limit is what stops the run here.
    const parts = await collect(sdk.runs.stream(thread.thread_id, 'sleep', { input: longSleep, streamMode: 'values' }));
    const last = parts[parts.length - 1]!;
    assert.equal(last.event, 'error');
    assert.match(JSON.stringify(last.data), /time/i);
    const [run] = await sdk.runs.list(thread.thread_id);
    assert.equal(run!.status, 'timeout');
    assert.equal((await sdk.threads.get(thread.thread_id)).status, 'error');
    assert.match(await failureOf(() => sdk.runs.wait(thread.thread_id, 'sleep', { input: longSleep })), /time/i);
  });

  test('a restart on the same data directory keeps assistants, versions, threads, runs and state', async () => {
    const sdk = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key' });
    const assistant = await sdk.assistants.create({ graphId: 'chat', context: { system_prompt: 'Be kept.' } });
    await sdk.assistants.update(assistant.assistant_id, { context: { system_prompt: 'Be kept, v2.' } });
    const thread = await sdk.threads.create({ metadata: { kept: true } });
    const run = await sdk.runs.create(thread.thread_id, assistant.assistant_id, { input: hello() });
    await sdk.runs.join(thread.thread_id, run.run_id);
    const stateBefore = await sdk.threads.getState(thread.thread_id);

    const dataDir = secured.dataDir;
    await secured.stop({ keepData: true });
    secured = await startTestServer({ dataDir, auth: { api_keys: ['test-key'] } } as Parameters<
      typeof startTestServer
    >[0]);
    const again = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key' });
    assert.deepEqual(
      (await again.assistants.getVersions(assistant.assistant_id)).map((v) => v.version),
      [2, 1],
    );
    assert.deepEqual((await again.assistants.get(assistant.assistant_id)).context, { system_prompt: 'Be kept, v2.' });
    assertMatches((await again.threads.get(thread.thread_id)).metadata, {
      kept: true,
      graph_id: 'chat',
      assistant_id: assistant.assistant_id,
    });
    assert.equal((await again.runs.get(thread.thread_id, run.run_id)).status, 'success');
    assert.deepEqual(await again.threads.getState(thread.thread_id), stateBefore);
    const values = (await again.runs.wait(thread.thread_id, assistant.assistant_id, { input: hello('again') })) as Json;
    assert.equal(lastAiText(values), '(Be kept, v2.) You said: again');
  });

  test('a graceful stop ends live streams with an error event and answers waits with an error; nothing is lost', async () => {
    const sdk = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key', callerOptions: { maxRetries: 0 } });
    const thread = await sdk.threads.create();
    let firstRunId = '';
    // A long sleep, not a gate: the server's shutdown is what stops the run here.
    const streaming = collect(
      sdk.runs.stream(thread.thread_id, 'sleep', {
        input: longSleep,
        streamMode: 'custom',
        onRunCreated: (meta) => (firstRunId = meta.run_id),
      }),
    );
    await eventually(async () => {
      const id = await firstRunId;
      assert.ok(id !== '', `not yet: ${JSON.stringify(id)}`);
      return id;
    });
    await eventually(async () => {
      const run = await sdk.runs.get(thread.thread_id, firstRunId);
      assert.ok(run.status === 'running', `not yet: ${JSON.stringify(run)}`);
      return run;
    });
    const waiting = failureOf(() =>
      sdk.runs.wait(thread.thread_id, 'sleep', { input: { delay_ms: 5 }, multitaskStrategy: 'enqueue' }),
    );
    await eventually(async () => {
      const runs = await sdk.runs.list(thread.thread_id);
      assert.ok(runs.length === 2, `not yet: ${JSON.stringify(runs)}`);
      return runs;
    });

    const dataDir = secured.dataDir;
    await secured.stop({ keepData: true, deadlineMs: 2000 });
    const parts = await streaming;
    assert.equal(parts[parts.length - 1]!.event, 'error', 'the live stream says the run did not finish');
    assert.match(await waiting, /still pending/);

    secured = await startTestServer({ dataDir, auth: { api_keys: ['test-key'] } } as Parameters<
      typeof startTestServer
    >[0]);
    const again = new SdkClient({ apiUrl: secured.url, apiKey: 'test-key' });
    assert.equal((await again.runs.get(thread.thread_id, firstRunId)).status, 'error');
    const second = (await again.runs.list(thread.thread_id)).find((run) => run.run_id !== firstRunId)!;
    await again.runs.join(thread.thread_id, second.run_id);
    assert.equal(
      (await again.runs.get(thread.thread_id, second.run_id)).status,
      'success',
      'the pending run ran after the restart',
    );
  });
});
