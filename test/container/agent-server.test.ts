// The same image as the agent server (`--config .../configs/local.yaml`), run by the real Docker
// engine as a user runs it (non-root, read-only root, its data on a volume, the host's network):
// `@langchain/langgraph-sdk` creates an assistant, a thread and a run of the example graphs; the
// run is traced into the local trace store; and after `docker restart` the assistant, the thread's
// state and the trace are still there (SQLite files on the volume).
//
// The image is built by scripts/container/build.sh (.ci/run does it before the tests).

import assert from 'node:assert/strict';
import { Client } from '@langchain/langgraph-sdk';
import { after, describe, it } from 'node:test';
import { eventually } from '../../src/testkit/eventually.ts';
import { DockerLab, LOCAL_CONFIG, containerSkipReason, docker, freePorts } from '../support/docker.ts';

const skip = containerSkipReason();

// A type, not an interface: the SDK's state values are records, which an interface is not.
type Messages = { messages: { type: string; content: string }[] };

describe('the image as the agent server (configs/local.yaml)', { skip }, () => {
  const lab = new DockerLab();
  after(() => lab.cleanup());

  it('serves the SDK, traces its runs, and keeps assistants, threads and traces across a restart', async () => {
    const [agentPort, otlpPort, explorerPort, grpcPort, langsmithPort] = await freePorts(5);
    const container = await lab.run('agent', {
      // Every listener on the host's loopback (the container shares the host's network).
      env: {
        AGENT_API_HOST: '127.0.0.1',
        AGENT_API_PORT: String(agentPort),
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(otlpPort),
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: String(grpcPort),
        LANGSMITH_HOST: '127.0.0.1',
        LANGSMITH_PORT: String(langsmithPort),
        TRACE_EXPLORER_PORT: String(explorerPort),
      },
      volumes: [`${await lab.volume('agent-data')}:/var/lib/tracepipe`],
      args: ['--config', LOCAL_CONFIG],
    });
    await container.waitForLog(/Everything is ready/);

    const client = new Client({ apiUrl: `http://127.0.0.1:${agentPort}` });
    const assistant = await client.assistants.create({ graphId: 'agent', name: 'container test' });
    const thread = await client.threads.create({ metadata: { test: 'container' } });
    const state = (await client.runs.wait(thread.thread_id, assistant.assistant_id, {
      input: { messages: [{ role: 'user', content: 'hello from a container' }] },
    })) as Messages;
    assert.equal(state.messages.at(-1)!.content, 'You said: hello from a container');

    // The run was traced into the trace store, which the trace explorer reads.
    const traces = async () => {
      const response = await fetch(`http://127.0.0.1:${explorerPort}/api/traces`);
      assert.equal(response.status, 200);
      return ((await response.json()) as { traces: { trace_id: string }[] }).traces;
    };
    const before = await eventually(async () => {
      const list = await traces();
      assert.ok(list.length > 0, 'no trace in the store yet');
      return list;
    });

    // SIGTERM, a clean stop, and a start of the same container on the same volume.
    await docker(['restart', '--time', '30', container.name], 120_000);
    await container.waitForLog(/Stopped cleanly/);
    await container.waitForLog(/Everything is ready/, 2);

    assert.equal((await client.assistants.get(assistant.assistant_id)).name, 'container test');
    const kept = await client.threads.get(thread.thread_id);
    assert.deepEqual(kept.metadata, { ...kept.metadata, test: 'container' });
    const values = (await client.threads.getState(thread.thread_id)).values as Messages;
    assert.deepEqual(
      values.messages.map((message) => message.content),
      ['hello from a container', 'You said: hello from a container'],
    );
    const after = await traces();
    assert.ok(
      before.every((trace) => after.some((kept) => kept.trace_id === trace.trace_id)),
      'the traces of the first run are still in the store',
    );
  });
});
