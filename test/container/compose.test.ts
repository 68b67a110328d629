// deploy/compose.yaml brought up with Compose (Debian's docker-compose), as it is, plus an override
// file that puts every service on the host's network (`network_mode: host`, so that all traffic
// stays on loopback; the ports are picked free and passed in the environment) and stands in for
// what cannot be pulled here: the application is a small Node.js program on the base image that
// sends OTLP/JSON GenAI spans to the sidecar on localhost, as an instrumented application would.
// The sidecar uploads them to a capture backend on loopback; the agent server answers the SDK and
// its trace explorer shows the run.
//
// The image is built by scripts/container/build.sh (.ci/run does it before the tests).

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { eventually } from '../../src/testkit/eventually.ts';
import { tempDir } from '../../src/testkit/files.ts';
import { CaptureBackend } from '../support/capture_backend.ts';
import { genAiRequest } from '../support/otlp_load.ts';
import { DockerLab, IMAGE, REPO_ROOT, containerSkipReason, freePorts } from '../support/docker.ts';

function composeSkipReason(): string | undefined {
  const reason = containerSkipReason();
  if (reason) return reason;
  const version = spawnSync('docker-compose', ['version', '--short'], { encoding: 'utf8' });
  if (version.status === 0) return undefined;
  const missing =
    'docker-compose is not installed (Debian: apt-get install docker-compose; scripts/container/engine.sh does)';
  if (process.env.CI === 'true') throw new Error(`the compose test cannot run in CI: ${missing}`);
  return missing;
}

const skip = composeSkipReason();
const API_KEY = 'compose-test-key';

/** The application: posts the OTLP body in $OTLP_BODY to the sidecar until it is acknowledged. */
const APP = `
const url = process.env.OTEL_EXPORTER_OTLP_ENDPOINT + '/v1/traces';
const send = async () => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': process.env.SERVICE_API_KEY },
    body: process.env.OTLP_BODY,
  }).catch((error) => ({ status: String(error.cause?.code ?? error) }));
  console.log('OTLP export:', response.status);
  if (response.status !== 200) setTimeout(send, 500);
};
send();
`;

describe('deploy/compose.yaml, brought up by docker-compose', { skip }, () => {
  const lab = new DockerLab();
  const backend = new CaptureBackend();
  const project = lab.prefix;
  const dir = tempDir('tracepipe-compose-');
  const ports = {
    otlp: 0,
    grpc: 0,
    langsmith: 0,
    agent: 0,
    agentOtlp: 0,
    agentGrpc: 0,
    agentLangsmith: 0,
    explorer: 0,
  };
  let runIds: readonly string[] = [];
  /** The agent server's published ports, as deploy/compose.yaml declares them. */
  let published: string[] = [];

  /** docker-compose on the effective file (or on `files`), as project `project`. */
  function compose(args: string[], timeoutMs = 150_000, files = ['-f', join(dir, 'effective.yaml')]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        'docker-compose',
        ['--project-name', project, ...files, ...args],
        { env: { ...process.env, SERVICE_API_KEY: API_KEY }, timeout: timeoutMs, encoding: 'utf8' },
        (error, stdout, stderr) =>
          error ? reject(new Error(`docker-compose ${args.join(' ')}: ${error.message}\n${stderr}`)) : resolve(stdout),
      );
    });
  }

  before(async () => {
    await backend.start();
    const keys = Object.keys(ports) as (keyof typeof ports)[];
    const free = await freePorts(keys.length);
    keys.forEach((key, i) => (ports[key] = free[i]!));
    const request = genAiRequest(20, 'json');
    runIds = request.runIds;
    const host = { network_mode: 'host' };
    const override = {
      services: {
        tracepipe: {
          ...host,
          image: IMAGE,
          environment: {
            HTTP_HOST: '127.0.0.1',
            HTTP_PORT: String(ports.otlp),
            GRPC_HOST: '127.0.0.1',
            GRPC_PORT: String(ports.grpc),
            LANGSMITH_HOST: '127.0.0.1',
            LANGSMITH_PORT: String(ports.langsmith),
            SERVICE_ENDPOINT: backend.url,
          },
        },
        app: {
          ...host,
          image: 'node:20-bookworm-slim',
          command: ['node', '-e', APP],
          environment: {
            OTEL_EXPORTER_OTLP_ENDPOINT: `http://localhost:${ports.otlp}`,
            SERVICE_API_KEY: API_KEY,
            OTLP_BODY: request.body as string,
          },
        },
        'agent-server': {
          ...host,
          image: IMAGE,
          environment: {
            AGENT_API_HOST: '127.0.0.1',
            AGENT_API_PORT: String(ports.agent),
            HTTP_HOST: '127.0.0.1',
            HTTP_PORT: String(ports.agentOtlp),
            GRPC_HOST: '127.0.0.1',
            GRPC_PORT: String(ports.agentGrpc),
            LANGSMITH_HOST: '127.0.0.1',
            LANGSMITH_PORT: String(ports.agentLangsmith),
            TRACE_EXPLORER_HOST: '127.0.0.1',
            TRACE_EXPLORER_PORT: String(ports.explorer),
          },
        },
      },
    };
    // Every value quoted: Compose reads YAML 1.1, where a plain `no` or `on` would be a boolean.
    writeFileSync(join(dir, 'override.yaml'), stringify(override, { defaultStringType: 'QUOTE_DOUBLE' }));
    // Compose merges the two files itself (`config`). Published ports cannot be combined with the
    // host's network, and Compose v1 cannot drop a list in an override, so they are taken out of
    // the merged file; the test checks first that they are bound to the host's loopback.
    const merged = parse(
      await compose(['config'], 60_000, [
        '-f',
        join(REPO_ROOT, 'deploy/compose.yaml'),
        '-f',
        join(dir, 'override.yaml'),
      ]),
    ) as { services: Record<string, { ports?: string[] }> };
    published = merged.services['agent-server']!.ports ?? [];
    for (const service of Object.values(merged.services)) delete service.ports;
    writeFileSync(join(dir, 'effective.yaml'), stringify(merged, { defaultStringType: 'QUOTE_DOUBLE' }));
    for (const service of ['tracepipe', 'app', 'agent-server']) lab.adopt(`${project}_${service}_1`);
    for (const volume of ['tracepipe-data', 'agent-data']) lab.adoptVolume(`${project}_${volume}`);
  });

  after(async () => {
    await compose(['down', '--volumes', '--timeout', '30']).catch(() => undefined);
    await lab.cleanup();
    await backend.close();
  });

  it('starts the sidecar, then the application once the sidecar is healthy; its spans reach the backend', async () => {
    // `up` returns once every container runs: the application's only after the sidecar's
    // HEALTHCHECK passed (depends_on: service_healthy).
    await compose(['up', '--detach', '--no-build'], 170_000);
    await backend.waitForAll(runIds, 60_000);
    assert.deepEqual(backend.malformed, []);
    const app = lab.adopt(`${project}_app_1`);
    assert.match(await app.logs(), /OTLP export: 200/);
    assert.equal((await lab.adopt(`${project}_tracepipe_1`).state()).Health?.Status, 'healthy');
  });

  it('publishes the agent server (8123) and its trace explorer (8124) on the host’s loopback only', () => {
    // As Compose v1 writes them: host address, host port, container port.
    assert.deepEqual(published, ['127.0.0.1:8123:8123/tcp', '127.0.0.1:8124:8124/tcp']);
  });

  it('runs the agent server from the same image: the SDK runs a graph, the trace explorer shows it', async () => {
    const agent = lab.adopt(`${project}_agent-server_1`);
    await agent.waitForLog(/Everything is ready/);
    const client = new Client({ apiUrl: `http://127.0.0.1:${ports.agent}` });
    const thread = await client.threads.create();
    const state = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'hello compose' }] },
    })) as { messages: { content: string }[] };
    assert.equal(state.messages.at(-1)!.content, 'You said: hello compose');
    await eventually(async () => {
      const response = await fetch(`http://127.0.0.1:${ports.explorer}/api/traces`);
      assert.equal(response.status, 200);
      const { traces } = (await response.json()) as { traces: unknown[] };
      assert.ok(traces.length > 0, 'no trace in the explorer yet');
    });
  });

  it('stops every service cleanly (`docker-compose stop` within stop_grace_period)', async () => {
    await compose(['stop']);
    for (const service of ['tracepipe', 'agent-server']) {
      const container = lab.adopt(`${project}_${service}_1`);
      const state = await container.state();
      assert.equal(state.ExitCode, 0, await container.logs());
      assert.match(await container.logs(), /Stopped cleanly/);
    }
  });
});
