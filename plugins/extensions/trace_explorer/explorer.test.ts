// The trace explorer as a component: the conformance kit (config, testdata fixtures, lifecycle,
// no leaked handles) and the studio link its pages draw. The explorer over a real pipeline (a
// receiver, genai, batch and the local exporter writing the store it reads), in Debian's Chromium,
// is tested with the distribution's components in test/trace-explorer/.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { nopSettings, runComponentConformance, validateAgainst } from 'tracepipe/testing';
import type { TraceExplorerConfig } from './config.ts';
import type { TraceExplorer } from './extension.ts';
import { traceExplorerExtensionFactory } from './index.ts';
import { studioLink } from './internal/static/js/studio-link.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tp-explorer-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

runComponentConformance(traceExplorerExtensionFactory, {
  testdataDir: join(import.meta.dirname, 'testdata'),
  config: () => ({ port: 0, path: join(dir, 'conformance.db') }),
});

const TRACE_HEX = '5b8efff798038103d269b633813fc60c';

describe('the studio link of a trace', () => {
  const studio = 'http://127.0.0.1:8123/ui/';
  const agentRun = { thread_id: 't 1', assistant_id: 'a/1', graph_id: 'agent', run_id: 'r1' };

  it('opens the thread of an agent server run in the studio on its assistant', () => {
    assert.equal(studioLink(agentRun, studio), 'http://127.0.0.1:8123/ui/#/studio/a%2F1/t%201');
    assert.equal(studioLink(agentRun, `${studio}#/assistants`), 'http://127.0.0.1:8123/ui/#/studio/a%2F1/t%201');
  });

  it('is none for a trace without agent metadata, or without a studio', () => {
    assert.equal(studioLink({ ls_model_name: 'gpt-4o-mini', OTEL_TRACE_ID: TRACE_HEX }, studio), null);
    assert.equal(studioLink({ thread_id: 't1' }, studio), null);
    assert.equal(studioLink({ assistant_id: 'a1' }, studio), null);
    assert.equal(studioLink({ thread_id: 't1', assistant_id: 7 }, studio), null);
    assert.equal(studioLink({}, studio), null);
    assert.equal(studioLink(undefined, studio), null);
    assert.equal(studioLink(agentRun, null), null);
  });
});

describe('the explorer: a method a path does not take', () => {
  let explorer: TraceExplorer;
  let origin: string;
  before(async () => {
    const config = { port: 0, path: join(dir, 'methods.db') } as unknown as TraceExplorerConfig;
    assert.deepEqual(validateAgainst(traceExplorerExtensionFactory.configSchema, config, 'trace_explorer'), []);
    explorer = traceExplorerExtensionFactory.create(
      nopSettings('extension', 'trace_explorer'),
      config,
    ) as unknown as TraceExplorer;
    await explorer.start();
    origin = new URL(explorer.traceListUrl()!).origin;
  });
  after(() => explorer.shutdown());

  it('405 with Allow and the coded error body, on API, parametric, page and health routes', async () => {
    for (const [method, path] of [
      ['POST', '/api/traces'],
      ['DELETE', `/api/traces/${TRACE_HEX}`],
      ['PUT', `/api/traces/${TRACE_HEX}/export`],
      ['PATCH', '/api/threads/t1'],
      ['POST', '/openapi.json'],
      ['POST', '/ui/traces'],
      ['OPTIONS', '/api/traces'],
      ['POST', '/live'],
    ] as const) {
      const response = await fetch(`${origin}${path}?limit=1`, { method });
      assert.equal(response.status, 405, `${method} ${path}`);
      assert.equal(response.headers.get('allow'), 'GET, HEAD', `${method} ${path}`);
      assert.match(response.headers.get('content-type')!, /^application\/json/);
      assert.deepEqual(await response.json(), {
        statusCode: 405,
        error: 'Method Not Allowed',
        code: 'TP_ERR_API_METHOD_NOT_ALLOWED',
        message: `method ${method} is not allowed on ${path}; use GET or HEAD`,
      });
    }
    const head = await fetch(`${origin}/api/traces`, { method: 'HEAD' });
    assert.equal(head.status, 200);
  });

  it('an unknown path is still 404', async () => {
    for (const [method, path] of [
      ['GET', '/api/nowhere'],
      ['POST', '/api/traces/x/y/z'],
      ['DELETE', '/nowhere'],
    ] as const) {
      const response = await fetch(`${origin}${path}`, { method });
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal(response.headers.get('allow'), null);
      assert.deepEqual(await response.json(), {
        statusCode: 404,
        error: 'Not Found',
        message: `no route for ${method} ${path}`,
      });
    }
  });
});
