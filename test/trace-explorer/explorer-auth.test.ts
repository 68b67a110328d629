// The trace explorer behind the agent server's authentication (the explorer's internal/access.ts,
// and the agent server's internal/http/explorer-access.ts): with API keys the explorer's API takes the same
// X-Api-Key and its pages ask for it (Chromium: the prompt, the key kept in sessionStorage, the
// traces shown); with a custom auth handler only identities granted `traces:read` read traces;
// and an explorer reachable from other machines that nothing protects does not start.

import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client } from '@langchain/langgraph-sdk';
import type { Service } from 'tracepipe';
import { chromium } from 'playwright-core';
import { launchChromium, noChromium } from 'tracepipe/testing';
import { eventually, tempDir } from 'tracepipe/testing';
import { endpointOf, serviceFromYaml } from '../support/service.ts';

const GRAPHS = fileURLToPath(new URL('../../examples/graphs/langgraph.json', import.meta.url));
const OWNER_AUTH = fileURLToPath(
  new URL('../../plugins/receivers/agent_api/testdata/auth/langgraph-owner.json', import.meta.url),
);
const KEY = 'explorer-test-key';

/** A service with an agent server (`agent`: its YAML options) whose runs the explorer shows. */
function serviceOf(
  dir: string,
  options: { agent?: string; explorer?: string; withAgent?: boolean; graphs?: string } = {},
): Promise<Service> {
  const agent = `agent_api: { port: 0, langgraph_config: ${options.graphs ?? GRAPHS}, data_dir: ${dir}/agent, tracing: { enabled: true }${options.agent ?? ''} }`;
  const yaml = `
receivers:
  ${options.withAgent === false ? 'otlp: { port: 0 }' : agent}
processors: { genai: {}, batch: { flush_interval_ms: 50 } }
exporters: { local: { path: ${dir}/traces.db } }
extensions: { trace_explorer: { port: 0, path: ${dir}/traces.db${options.explorer ?? ''} } }
service:
  extensions: [trace_explorer]
  pipelines: { traces: { receivers: [${options.withAgent === false ? 'otlp' : 'agent_api'}], processors: [genai, batch], exporters: [local] } }
`;
  return serviceFromYaml(yaml, dir);
}

function endpoints(service: Service): { agent: string; explorer: string } {
  return {
    agent: endpointOf(service, 'agent_api').replace(/\/$/, ''),
    explorer: endpointOf(service, 'trace_explorer').replace(/\/ui\/traces$/, ''),
  };
}

describe('trace explorer behind the agent server’s API keys', () => {
  const dir = tempDir('tracepipe-explorer-keys-');
  let service: Service;
  let explorer: string;
  let runId: string;

  before(async () => {
    service = await serviceOf(dir, { agent: `, auth: { api_keys: [${KEY}] }` });
    await service.start();
    const urls = endpoints(service);
    explorer = urls.explorer;
    const client = new Client({ apiUrl: urls.agent, apiKey: KEY, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'a secret of user a' }] },
    });
    await client.runs.join(thread.thread_id, run.run_id);
    runId = run.run_id;
    await eventually(async () => {
      const body = (await (
        await fetch(`${explorer}/api/traces?q=secret`, { headers: { 'x-api-key': KEY } })
      ).json()) as { traces: { trace_id: string }[] };
      assert.ok(body.traces.some((trace) => trace.trace_id === runId));
    });
  });
  after(() => service?.shutdown());

  it('answers 401 without the key on every data route, 200 with it; the pages load without it', async () => {
    for (const path of [
      '/api/traces?q=secret',
      `/api/traces/${runId}`,
      `/api/traces/${runId}/export`,
      '/api/export',
      '/api/projects',
      '/api/config',
      '/api/stats',
      '/api/threads',
    ]) {
      const refused = await fetch(`${explorer}${path}`);
      assert.equal(refused.status, 401, path);
      const body = (await refused.json()) as { code: string; message: string };
      assert.equal(body.code, 'TP_ERR_API_UNAUTHORIZED', path);
      assert.equal((await fetch(`${explorer}${path}`, { headers: { 'x-api-key': 'wrong' } })).status, 401, path);
      const allowed = await fetch(`${explorer}${path}`, { headers: { 'x-api-key': KEY } });
      assert.ok(allowed.status < 400, `${path}: ${allowed.status}`);
      await allowed.arrayBuffer();
    }
    const secret = await (await fetch(`${explorer}/api/traces?q=secret`)).text();
    assert.doesNotMatch(secret, /secret of user a/);
    assert.equal((await fetch(`${explorer}/ui/traces`)).status, 200);
  });

  it('asks for the key in the browser, keeps it for the tab and shows the traces', { skip: noChromium }, async () => {
    const browser = await launchChromium(chromium);
    try {
      const page = await browser.newPage();
      const prompts: string[] = [];
      page.on('dialog', (dialog) => {
        prompts.push(dialog.message());
        void dialog.accept(KEY);
      });
      await page.goto(`${explorer}/ui/traces`);
      await page
        .getByRole('link', { name: /agent|LangGraph/ })
        .first()
        .waitFor();
      assert.equal(prompts.length, 1);
      assert.match(prompts[0]!, /API key/);
      assert.equal(await page.evaluate('sessionStorage.getItem("tracepipe.explorer.key")'), KEY);
      await page.reload();
      await page
        .getByRole('link', { name: /agent|LangGraph/ })
        .first()
        .waitFor();
      assert.equal(prompts.length, 1, 'no second prompt once the key is kept');
    } finally {
      await browser.close();
    }
  });
});

describe('trace explorer behind the agent server’s custom auth handler', () => {
  const dir = tempDir('tracepipe-explorer-custom-');
  let service: Service;
  let explorer: string;
  before(async () => {
    service = await serviceOf(dir, { graphs: OWNER_AUTH });
    await service.start();
    explorer = endpoints(service).explorer;
  });
  after(() => service?.shutdown());

  it('lets in only identities with traces:read: 401 without a token, 403 for the users, 200 for the operator', async () => {
    const as = (user?: string) =>
      fetch(`${explorer}/api/traces`, user ? { headers: { authorization: `Bearer ${user}` } } : {});
    assert.equal((await as()).status, 401);
    for (const user of ['user-a', 'user-b']) {
      const refused = await as(user);
      assert.equal(refused.status, 403);
      assert.match(((await refused.json()) as { message: string }).message, /traces:read/);
    }
    assert.equal((await as('operator')).status, 200);
  });
});

describe('trace explorer reachable from other machines', () => {
  it('does not start unprotected unless insecure: true', async () => {
    const dir = tempDir('tracepipe-explorer-exposed-');
    const alone = await serviceOf(dir, { withAgent: false, explorer: ', host: 0.0.0.0' });
    await assert.rejects(alone.start(), /without authentication .*insecure: true/);
    await alone.shutdown();
    const open = await serviceOf(dir, { withAgent: false, explorer: ', host: 0.0.0.0, insecure: true' });
    await open.start();
    await open.shutdown();
  });

  it('does not start beside an agent server without auth, and does beside one with keys', async () => {
    const dir = tempDir('tracepipe-explorer-exposed-agent-');
    const unprotected = await serviceOf(dir, { explorer: ', host: 0.0.0.0' });
    await assert.rejects(unprotected.start(), /agent_api has no authentication to protect it/);
    await unprotected.shutdown();
    const keyed = await serviceOf(dir, { explorer: ', host: 0.0.0.0', agent: `, auth: { api_keys: [${KEY}] }` });
    await keyed.start();
    const { explorer } = endpoints(keyed);
    assert.equal((await fetch(`${explorer}/api/traces`)).status, 401);
    await keyed.shutdown();
  });
});
