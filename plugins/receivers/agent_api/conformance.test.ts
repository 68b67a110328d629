// The shared component conformance kit for the `agent_api` receiver.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runComponentConformance } from 'tracepipe/testing';
import { agentApiReceiverFactory } from './index.ts';
import { EXAMPLES_LANGGRAPH_JSON } from './testing/test-server.ts';

runComponentConformance(agentApiReceiverFactory, {
  testdataDir: join(import.meta.dirname, 'testdata'),
  config: () => ({
    port: 0,
    data_dir: mkdtempSync(join(tmpdir(), 'agent-api-conformance-')),
    langgraph_config: EXAMPLES_LANGGRAPH_JSON,
    workers: 2,
  }),
});
