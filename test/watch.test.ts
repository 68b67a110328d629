// `tracepipe run --watch`: editing a graph's file reloads it while the server keeps running; a
// thread created before the edit keeps its state, and its next run answers with the new code.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { tempDir } from '../src/testkit/files.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin/tracepipe.js');

/** A graph that answers `<prefix>: <last message>`, without a model. */
function graphSource(prefix: string): string {
  return `import { AIMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';

const State = new StateSchema({ messages: MessagesValue });

export const graph = new StateGraph(State)
  .addNode('answer', async (state: typeof State.State) => ({
    messages: [new AIMessage(${JSON.stringify(prefix)} + ': ' + String(state.messages.at(-1)?.content))],
  }))
  .addEdge(START, 'answer')
  .addEdge('answer', END)
  .compile();
`;
}

it('reloads an edited graph without dropping the server or a thread’s state', async () => {
  const dir = tempDir('tracepipe-watch-');
  // A project: its graph in graphs/ (the folder watched), the repository's packages beside it.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  mkdirSync(join(dir, 'graphs'));
  const graphFile = join(dir, 'graphs/graph.ts');
  writeFileSync(graphFile, graphSource('v1'));
  writeFileSync(join(dir, 'langgraph.json'), JSON.stringify({ graphs: { agent: './graphs/graph.ts:graph' } }));
  writeFileSync(
    join(dir, 'pipeline.yaml'),
    `receivers:
  agent_api: { port: 0, langgraph_config: ./langgraph.json, data_dir: ./data, tracing: { enabled: false } }
exporters:
  debug: {}
service:
  telemetry: { logs: { format: json } }
  pipelines:
    traces: { receivers: [agent_api], exporters: [debug] }
`,
  );
  const child = spawn(process.execPath, [bin, 'run', join(dir, 'pipeline.yaml'), '--watch'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    output += `${line}\n`;
    for (const waiter of waiters.splice(0)) {
      if (waiter.pattern.test(line)) waiter.resolve(line);
      else waiters.push(waiter);
    }
  });
  const nextLine = (pattern: RegExp) =>
    Promise.race([
      new Promise<string>((resolve) => waiters.push({ pattern, resolve })),
      exited.then((code) => Promise.reject(new Error(`exited with ${code}:\n${output}`))),
    ]);
  try {
    const listening = JSON.parse(await nextLine(/"msg":"Listening\."/)) as {
      endpoints: { url: string; purpose: string }[];
      details: { agent_api: Record<string, string> };
    };
    assert.equal(listening.details.agent_api['reloads on changes in'], join(dir, 'graphs'));
    const client = new Client({ apiUrl: listening.endpoints[0]!.url.replace(/\/$/, '') });
    const thread = await client.threads.create();
    const first = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'one' }] },
    })) as { messages: { content: string }[] };
    assert.equal(first.messages.at(-1)!.content, 'v1: one');

    const reloaded = nextLine(/"msg":"Graphs reloaded\."/);
    writeFileSync(graphFile, graphSource('v2'));
    await reloaded;
    const second = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'two' }] },
    })) as { messages: { content: string }[] };
    assert.deepEqual(
      second.messages.map((message) => message.content),
      ['one', 'v1: one', 'two', 'v2: two'],
    );

    // A graph that no longer loads leaves the last good one serving.
    const failed = nextLine(/Could not reload the graphs/);
    writeFileSync(graphFile, 'export const graph = 42;\n');
    await failed;
    const third = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'three' }] },
    })) as { messages: { content: string }[] };
    assert.equal(third.messages.at(-1)!.content, 'v2: three');
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, output);
});
