// The agent server's run spans across a stop, as real processes. Under a backend that never
// answers and a SIGTERM with a short shutdown deadline (the exporter without its disk queue), the
// run's spans are stuck in the exporter when the deadline passes: with the tracing journal (the
// default) the exit is clean (nothing lost) and the next start on the same data directory delivers
// the run once the backend answers; without it the exit code says spans were lost. Under kill -9
// while the batcher still holds them, the journal brings them back at the next start.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { eventually } from 'tracepipe/testing';
import { CaptureBackend, mode } from './support/capture_backend.ts';
import { REPO_ROOT, startTracepipe } from './support/proxy_process.ts';
import type { TracepipeProcess } from './support/proxy_process.ts';

interface Setup {
  readonly journal: boolean;
  /** The backend exporter's disk queue (its own way to keep batches over a stop). */
  readonly exporterQueue: boolean;
}

function configFile(dir: string, backendUrl: string, setup: Setup): string {
  const file = join(dir, 'agent-traces.yaml');
  writeFileSync(
    file,
    `receivers:
  agent_api:
    host: 127.0.0.1
    port: \${env:AGENT_API_PORT}
    langgraph_config: ${join(REPO_ROOT, 'examples/graphs/langgraph.json')}
    data_dir: \${env:DATA_DIR}
    type_schemas: { enabled: false }
    tracing:
      journal: { enabled: ${setup.journal} }
processors:
  genai: {}
  batch:
    flush_interval_ms: \${env:FLUSH_INTERVAL_MS:-50}
exporters:
  backend:
    endpoint: ${backendUrl}
    retry_on_failure: { max_retries: 1000, initial_backoff_ms: 100 }
    persistent_queue: { enabled: ${setup.exporterQueue}, directory: ${join(dir, 'queue')} }
service:
  shutdown_timeout_ms: 1500
  pipelines:
    traces:
      receivers: [agent_api]
      processors: [genai, batch]
      exporters: [backend]
`,
  );
  return file;
}

describe('agent server: run spans held at a shutdown deadline', () => {
  const backends: CaptureBackend[] = [];
  const processes: TracepipeProcess[] = [];
  const dirs: string[] = [];
  after(async () => {
    for (const process of processes) await process.stop('SIGKILL').catch(() => undefined);
    for (const backend of backends) await backend.close().catch(() => undefined);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function setUp(setup: Setup, backendMode = mode.hung()) {
    const backend = new CaptureBackend();
    backends.push(backend);
    backend.keepRuns = true;
    await backend.start(backendMode);
    const dir = mkdtempSync(join(tmpdir(), 'tp-agent-traces-'));
    dirs.push(dir);
    const config = configFile(dir, backend.url, setup);
    const start = async (env: Record<string, string> = {}) => {
      const process = await startTracepipe({
        config,
        env: { DATA_DIR: join(dir, 'data'), ...env },
        name: 'agent server',
      });
      processes.push(process);
      return process;
    };
    return { backend, start };
  }

  /** One traced run of the example `agent` graph; its id. */
  async function runOnce(server: TracepipeProcess): Promise<string> {
    const thread = await server.client.threads.create();
    const run = await server.client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'kept across a restart' }] },
    });
    await server.client.runs.join(thread.thread_id, run.run_id);
    return run.run_id;
  }

  const delivered = (backend: CaptureBackend, runId: string) =>
    [...backend.stored.values()].some((run) => JSON.stringify(run).includes(runId));

  it('journaled (the default): SIGTERM exits 0 and the restarted server delivers the run', async () => {
    const { backend, start } = await setUp({ journal: true, exporterQueue: false });
    const first = await start();
    const runId = await runOnce(first);
    // The upload is under way and hangs: the spans are past the server's own queues.
    await eventually(() => assert.ok(backend.uploads > 0, 'no upload reached the backend yet'));
    const code = await first.stop('SIGTERM', 30_000);
    assert.equal(code, 0, `exit code ${code}; output:\n${first.output().slice(-3000)}`);
    assert.equal(delivered(backend, runId), false);

    await backend.set(mode.ok());
    const second = await start();
    await eventually(() => assert.ok(delivered(backend, runId), 'the run was not delivered after the restart'), {
      timeoutMs: 30_000,
    });
    assert.equal(await second.stop('SIGTERM', 30_000), 0);
  });

  it('without the journal: the exit code reports the spans lost', async () => {
    const { backend, start } = await setUp({ journal: false, exporterQueue: false });
    const first = await start();
    await runOnce(first);
    await eventually(() => assert.ok(backend.uploads > 0, 'no upload reached the backend yet'));
    const code = await first.stop('SIGTERM', 30_000);
    assert.notEqual(code, 0, `exit code 0 although spans were dropped; output:\n${first.output().slice(-3000)}`);
  });

  it('journaled: after kill -9 while the batcher held the spans, the next start delivers the run', async () => {
    const { backend, start } = await setUp({ journal: true, exporterQueue: true }, mode.ok());
    // The batcher holds the run's spans for a minute: nothing is uploaded before the kill.
    const first = await start({ FLUSH_INTERVAL_MS: '60000' });
    const runId = await runOnce(first);
    await first.stop('SIGKILL');
    assert.equal(backend.uploads, 0);
    const second = await start();
    await eventually(() => assert.ok(delivered(backend, runId), 'the run was not delivered after the restart'), {
      timeoutMs: 30_000,
    });
    assert.equal(await second.stop('SIGTERM', 30_000), 0);
  });
});
