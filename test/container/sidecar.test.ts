// The image as a trace sidecar (its default command: configs/proxy.yaml), run by the real Docker
// engine as a user runs it: non-root, `--read-only` with only the data volume and a tmpfs /tmp
// writable, on the host's network, exporting to a capture backend on a loopback port. Spans in →
// every one at the backend; the HEALTHCHECK turns healthy; `docker kill -s KILL` with the backend
// down loses nothing that was acknowledged (a new container on the same volume delivers it);
// `docker stop` exits 0 after flushing, and non-zero when the shutdown had to drop something.
//
// The image is built by scripts/container/build.sh (.ci/run does it before the tests).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../../src/testkit/eventually.ts';
import { CaptureBackend, mode } from '../support/capture_backend.ts';
import { genAiRequest } from '../support/otlp_load.ts';
import { DockerLab, PROXY_CONFIG, containerSkipReason, docker, freePorts } from '../support/docker.ts';
import type { Container } from '../support/docker.ts';

const skip = containerSkipReason();
const API_KEY = 'container-test-key';

/** Sends `requests` OTLP requests of `spans` GenAI spans each; every one must be acknowledged. Returns the run ids. */
async function sendAcked(port: number, requests: number, spans: number): Promise<string[]> {
  const runIds: string[] = [];
  for (let i = 0; i < requests; i++) {
    const request = genAiRequest(spans, 'protobuf', i);
    const response = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': request.contentType, 'x-api-key': API_KEY },
      body: request.body,
    });
    assert.equal(response.status, 200, await response.text());
    runIds.push(...request.runIds);
  }
  return runIds;
}

describe('the image as a sidecar (configs/proxy.yaml)', { skip }, () => {
  const lab = new DockerLab();
  const backend = new CaptureBackend();

  before(async () => {
    await backend.start();
  });
  after(async () => {
    await lab.cleanup();
    await backend.close();
  });

  /** A sidecar on a fresh port, exporting to the capture backend, its data on `volume`. */
  async function sidecar(label: string, volume: string, env: Record<string, string> = {}, args?: string[]) {
    const [port, grpcPort, langsmithPort] = await freePorts(3);
    const container = await lab.run(label, {
      env: {
        HTTP_PORT: String(port),
        GRPC_PORT: String(grpcPort),
        LANGSMITH_PORT: String(langsmithPort),
        SERVICE_ENDPOINT: backend.url,
        SERVICE_API_KEY: API_KEY,
        SERVICE_PROJECT: 'container-test',
        ...env,
      },
      volumes: [`${volume}:/var/lib/tracepipe`],
      ...(args ? { args } : {}),
    });
    await container.waitForLog(/Everything is ready/);
    return { container, port };
  }

  it('runs as a non-root user on a read-only root, turns healthy, and delivers every span it takes', async () => {
    const { container, port } = await sidecar('main', await lab.volume('main'));

    assert.equal(await docker(['inspect', '--format', '{{.Config.User}}', container.name]), 'node');
    assert.equal(await docker(['inspect', '--format', '{{.HostConfig.ReadonlyRootfs}}', container.name]), 'true');
    assert.equal((await container.exec(['id', '-u'])).stdout.trim(), '1000');
    const rootWrite = await container.exec(['touch', '/app/written']);
    assert.notEqual(rootWrite.code, 0);
    assert.match(rootWrite.stderr, /Read-only file system/);
    assert.equal((await container.exec(['touch', '/tmp/written'])).code, 0, 'the tmpfs /tmp is writable');
    // The receiver's journal lives on the volume: tracepipe wrote there as uid 1000.
    const data = await container.exec(['ls', '/var/lib/tracepipe']);
    assert.match(data.stdout, /journal/);

    const runIds = await sendAcked(port, 4, 50);
    await backend.waitForAll(runIds, 60_000);
    assert.equal(backend.duplicatesAmong(runIds), 0, backend.summary());
    assert.deepEqual(backend.malformed, []);

    // The image's own HEALTHCHECK (interval 15 s) runs inside the container and passes.
    await eventuallyHealthy(container);
  });

  it('loses nothing acknowledged to `docker kill -s KILL` while the backend is down: a new container on the volume delivers it', async () => {
    const volume = await lab.volume('crash');
    await backend.set(mode.down());
    const first = await sidecar('crash-1', volume);
    const runIds = await sendAcked(first.port, 5, 40);
    await first.container.kill('KILL');
    const killed = await first.container.state();
    assert.equal(killed.Running, false);
    assert.equal(killed.ExitCode, 137, 'killed by SIGKILL, not stopped');
    assert.equal(backend.missing(runIds).length, runIds.length, 'nothing was delivered before the kill');

    await backend.set(mode.ok());
    const second = await sidecar('crash-2', volume);
    await backend.waitForAll(runIds, 90_000);
    assert.deepEqual(backend.malformed, []);
    await second.container.stop(30);
  });

  it('`docker stop` flushes what it holds and exits 0 within the grace period', async () => {
    const { container, port } = await sidecar('stop', await lab.volume('stop'), { FLUSH_INTERVAL_MS: '60000' });
    // A flush interval of a minute: the batches are still held when the stop begins.
    const runIds = await sendAcked(port, 3, 30);
    const state = await container.stop(30);
    const logs = await container.logs();
    assert.equal(state.ExitCode, 0, logs);
    assert.match(logs, /Stopped cleanly/);
    assert.deepEqual(backend.missing(runIds), [], backend.summary());
  });

  it('`docker stop` exits non-zero when the shutdown had to drop accepted spans', async () => {
    // The configuration that cannot keep its promise: no journal, no disk queue, a backend that
    // never answers, and a 2 s drain.
    await backend.set(mode.hung());
    const { container, port } = await sidecar(
      'lossy',
      await lab.volume('lossy'),
      { JOURNAL_ENABLED: 'false', SHUTDOWN_TIMEOUT_MS: '2000' },
      ['--config', PROXY_CONFIG, '--set', 'exporters.backend.persistent_queue.enabled=false'],
    );
    await sendAcked(port, 3, 30);
    const state = await container.stop(30);
    const logs = await container.logs();
    await backend.set(mode.ok());
    assert.notEqual(state.ExitCode, 0, logs);
    assert.notEqual(state.ExitCode, 137, `killed after the grace period instead of exiting:\n${logs}`);
    assert.doesNotMatch(logs, /Stopped cleanly/);
    assert.match(logs, /accepted data was lost/);
  });
});

async function eventuallyHealthy(container: Container): Promise<void> {
  await eventually(
    async () => {
      const state = await container.state();
      assert.equal(state.Health?.Status, 'healthy', JSON.stringify(state));
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );
}
