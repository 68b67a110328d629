// Acceptance suite for the agent deployment server (`receivers.agent_api`), written against
// the Agent Deployment API as plugins/receivers/agent_api/README.md describes it and the reference
// server's (LangGraph.js's `langgraph-api`) wire behaviour: a real server on a
// loopback port, driven the way a user would drive it — with the official
// `@langchain/langgraph-sdk` client, and with raw HTTP where the wire itself is the contract
// (status codes, headers, SSE framing, error bodies).
//
// The README's main command, as a child process: tracepipe --config configs/local.yaml. With
// Debian's Chromium (through playwright-core), the way from a run's trace back to the studio too.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@langchain/langgraph-sdk';
import { chromium } from 'playwright-core';
import { launchChromium, noChromium } from '../../src/testkit/browser.ts';
import { eventually } from '../../src/testkit/eventually.ts';
import { collect } from '../../plugins/receivers/agent_api/testing/agent-wire.ts';
import type { TestServer } from '../../plugins/receivers/agent_api/testing/test-server.ts';
import { startTracepipe } from '../support/proxy_process.ts';
import type { TracepipeProcess } from '../support/proxy_process.ts';
import type { Json } from './support.ts';
import { hello, lastAiText, longSleep, useSharedServer } from './support.ts';

let server: TestServer;
let client: Client;
let url: string;
useSharedServer((started) => {
  server = started;
  client = started.client;
  url = started.url;
});

describe("the README's main command: tracepipe --config configs/local.yaml", () => {
  /** Starts the CLI on free ports over `dataDir` and resolves once the agent server reports its port. */
  function startCli(dataDir: string): Promise<TracepipeProcess> {
    return startTracepipe({ config: 'configs/local.yaml', env: { DATA_DIR: dataDir } });
  }

  test('serves the API example flow on the port it reports, and stops cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-acceptance-cli-'));
    const cli = await startCli(dataDir);
    try {
      const assistant = await cli.client.assistants.create({
        graphId: 'agent',
        context: { model_name: 'local-echo', system_prompt: 'Answer like a pirate.' },
      });
      const thread = await cli.client.threads.create();
      const parts = await collect(
        cli.client.runs.stream(thread.thread_id, assistant.assistant_id, { input: hello(), streamMode: 'updates' }),
      );
      assert.equal(parts[0]!.event, 'metadata');
      const state = await cli.client.threads.getState<Json>(thread.thread_id);
      assert.equal(lastAiText(state.values), '(Answer like a pirate.) You said: hello');

      // The web interface links runs to the trace explorer the config runs beside it, and the
      // run's trace (trace id = run id) is there.
      const pageConfig = (await (await fetch(`${cli.url}/ui/config.json`)).json()) as Json;
      const tracesUrl = String(pageConfig.trace_explorer_url);
      assert.match(tracesUrl, /^http:\/\/127\.0\.0\.1:\d+\/ui\/traces$/);
      const [run] = await cli.client.runs.list(thread.thread_id);
      const apiBase = tracesUrl.replace(/\/ui\/traces$/, '');
      await eventually(async () => {
        const response = await fetch(`${apiBase}/api/traces/${run!.run_id}`);
        assert.equal(response.status, 200);
      });
      assert.equal(await cli.stop('SIGTERM'), 0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("a run's trace links back to its thread in the studio", { skip: noChromium }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-acceptance-cli-'));
    const cli = await startCli(dataDir);
    const browser = await launchChromium(chromium);
    try {
      const assistant = await cli.client.assistants.create({ graphId: 'agent', name: 'Backlink' });
      const thread = await cli.client.threads.create();
      await cli.client.runs.wait(thread.thread_id, assistant.assistant_id, { input: hello('the way back') });
      const [run] = await cli.client.runs.list(thread.thread_id);

      // The agent server told the explorer of its service where its web UI is.
      const tracesUrl = String(((await (await fetch(`${cli.url}/ui/config.json`)).json()) as Json).trace_explorer_url);
      const explorer = tracesUrl.replace(/\/ui\/traces$/, '');
      const explorerConfig = (await (await fetch(`${explorer}/api/config`)).json()) as Json;
      assert.equal(explorerConfig.studio_url, `${cli.url}/ui/`);
      // The root run (trace id = run id) arrived with the run's thread and assistant.
      await eventually(async () => {
        const response = await fetch(`${explorer}/api/traces/${run!.run_id}`);
        assert.equal(response.status, 200);
        const { trace } = (await response.json()) as { trace: { metadata?: Record<string, unknown> } };
        assert.equal(trace.metadata?.thread_id, thread.thread_id);
      });

      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${explorer}/ui/traces/${run!.run_id}`);
      const link = page.getByRole('link', { name: 'Open in studio' });
      await link.waitFor();
      assert.equal(
        await link.getAttribute('href'),
        `${cli.url}/ui/#/studio/${assistant.assistant_id}/${thread.thread_id}`,
      );
      await link.click();
      // The studio, on that assistant, with that thread open and its first message shown.
      await page.getByRole('heading', { name: 'Studio' }).waitFor();
      await page.getByTestId('thread-id').filter({ hasText: thread.thread_id }).waitFor();
      await page.locator('.message[data-role="user"]').filter({ hasText: 'the way back' }).waitFor();
      await eventually(async () =>
        assert.equal(await page.locator('#studio-assistant').inputValue(), assistant.assistant_id),
      );
      assert.equal(await cli.stop('SIGTERM'), 0);
    } finally {
      await browser.close();
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a run cut off by a killed process is not left running after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-acceptance-cli-'));
    let cli = await startCli(dataDir);
    try {
      const thread = await cli.client.threads.create();
      // A long sleep, not a gate: the server runs in another process, out of reach of the test's gates.
      const run = await cli.client.runs.create(thread.thread_id, 'sleep', { input: longSleep });
      await eventually(async () => {
        const r = await cli.client.runs.get(thread.thread_id, run.run_id);
        assert.ok(r.status === 'running', `not yet: ${JSON.stringify(r)}`);
        return r;
      });
      await cli.stop('SIGKILL');

      cli = await startCli(dataDir);
      const after = await eventually(async () => {
        const r = await cli.client.runs.get(thread.thread_id, run.run_id);
        assert.ok(r.status !== 'running' && r.status !== 'pending', `not yet: ${JSON.stringify(r)}`);
        return r;
      });
      assert.equal(after.status, 'error');
      assert.notEqual((await cli.client.threads.get(thread.thread_id)).status, 'busy');
      const values = (await cli.client.runs.wait(thread.thread_id, 'sleep', { input: { delay_ms: 5 } })) as Json;
      assert.equal(lastAiText(values), 'finished after 5 ms');
      assert.equal(await cli.stop('SIGTERM'), 0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
