// The trace explorer as a component: the conformance kit (config, testdata fixtures, lifecycle,
// no leaked handles) and the studio link its pages draw. The explorer over a real pipeline (a
// receiver, genai, batch and the local exporter writing the store it reads), in Debian's Chromium,
// is tested with the distribution's components in test/trace-explorer/.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runComponentConformance } from 'tracepipe/testing';
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
