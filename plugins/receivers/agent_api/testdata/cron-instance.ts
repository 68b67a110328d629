// A second agent server in its own process, for the test of several instances sharing one SQLite
// file (crons.test.ts): started on the data directory given as argv[2], it moves its cron clock
// and ticks when the parent process says so, and answers with the runs it started.

import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configFor, Sink, nopHost, nopSettings } from 'tracepipe/testing';
import type { AgentApiConfig } from '../config.ts';
import { agentApiReceiverFactory } from '../index.ts';
import { AgentApiReceiver } from '../receiver.ts';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../..');
const clock = { t: Number(process.argv[3]), now: () => clock.t };
const host = nopHost({ resolvePath: (path: string) => resolve(repoRoot, path) });
// Validated with the defaults filled in, as a config file would give it.
const config = configFor<AgentApiConfig>(agentApiReceiverFactory, {
  langgraph_config: resolve(repoRoot, 'examples/graphs/langgraph.json'),
  data_dir: process.argv[2],
  port: 0,
  workers: 2,
  ui: { enabled: false },
  // The database is shared; the run spans' journal is one process's (the journal locks its
  // directory), as for any second instance on the same data directory.
  tracing: { journal: { directory: `agent/tracing-journal-${process.pid}` } },
});
const receiver = new AgentApiReceiver(
  nopSettings('receiver', 'agent_api', host),
  config,
  new Sink<'spans'>(),
  { clock },
);
await receiver.start();
process.on('message', (message: { type: string; t?: number }) => {
  if (message.type === 'tick') {
    clock.t = message.t!;
    void receiver.crons.tick().then((runs) => process.send!({ type: 'ticked', runs: runs.map((run) => run.run_id) }));
  } else if (message.type === 'stop') {
    void receiver.shutdown(Date.now() + 5000).then(() => process.exit(0));
  }
});
process.send!({ type: 'ready', port: receiver.port });
