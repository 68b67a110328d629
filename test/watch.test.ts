// `tracepipe run --watch`: editing a graph's file reloads it while the server keeps running; a
// thread created before the edit keeps its state, and its next run answers with the new code. A
// run in flight during a reload finishes on the code it started with, and editing a local module
// the graph imports (not named in langgraph.json) reloads it too.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { tempDir } from '../src/testkit/files.ts';
import { spawnGroup } from '../src/testkit/processes.ts';

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

/**
 * A graph that answers `<version>/<PREFIX of ./prompts.ts>: <last message>`. A message `hold:<file>`
 * first writes `<file>.reached`, then waits (polling, at most 20 s) until the test creates `<file>`:
 * the test holds a run in flight from outside the server's process.
 */
function heldGraphSource(version: string): string {
  return `import { existsSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { AIMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { PREFIX } from './prompts.ts';

const State = new StateSchema({ messages: MessagesValue });

export const graph = new StateGraph(State)
  .addNode('answer', async (state: typeof State.State) => {
    const text = String(state.messages.at(-1)?.content);
    if (text.startsWith('hold:')) {
      const file = text.slice('hold:'.length);
      writeFileSync(file + '.reached', '');
      for (let i = 0; i < 800 && !existsSync(file); i++) await sleep(25);
    }
    return { messages: [new AIMessage(${JSON.stringify(version)} + '/' + PREFIX + ': ' + text)] };
  })
  .addEdge(START, 'answer')
  .addEdge('answer', END)
  .compile();
`;
}

/** A project in a temporary folder: its graph in graphs/ (the folder watched), the repository's packages beside it. */
function project(files: Record<string, string>): string {
  const dir = tempDir('tracepipe-watch-');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  mkdirSync(join(dir, 'graphs'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
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
  return dir;
}

/** Runs `tracepipe run --watch` on the project; `use` gets its SDK client and its log lines. */
async function withWatchingServer(
  dir: string,
  use: (client: Client, nextLine: (pattern: RegExp) => Promise<string>) => Promise<void>,
): Promise<void> {
  const { child } = spawnGroup(process.execPath, [bin, 'run', join(dir, 'pipeline.yaml'), '--watch'], {
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
    await use(new Client({ apiUrl: listening.endpoints[0]!.url.replace(/\/$/, '') }), nextLine);
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, output);
}

type Answer = { messages: { content: string }[] };

it('reloads an edited graph without dropping the server or a thread’s state', async () => {
  const dir = project({ 'graphs/graph.ts': graphSource('v1') });
  const graphFile = join(dir, 'graphs/graph.ts');
  await withWatchingServer(dir, async (client, nextLine) => {
    const thread = await client.threads.create();
    const first = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'one' }] },
    })) as Answer;
    assert.equal(first.messages.at(-1)!.content, 'v1: one');

    const reloaded = nextLine(/"msg":"Graphs reloaded\."/);
    writeFileSync(graphFile, graphSource('v2'));
    await reloaded;
    const second = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'two' }] },
    })) as Answer;
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
    })) as Answer;
    assert.equal(third.messages.at(-1)!.content, 'v2: three');
  });
});

it('reloads every save that replaces the file (sed -i, editors that write a copy and rename it), not only the first', async () => {
  const dir = project({ 'graphs/graph.ts': graphSource('v1') });
  const graphFile = join(dir, 'graphs/graph.ts');
  await withWatchingServer(dir, async (client, nextLine) => {
    const thread = await client.threads.create();
    for (const version of ['v2', 'v3', 'v4']) {
      const reloaded = nextLine(/"msg":"Graphs reloaded\."/);
      // As `sed -i` saves: a new file beside the old one, renamed over it (a new inode).
      writeFileSync(`${graphFile}.tmp`, graphSource(version));
      renameSync(`${graphFile}.tmp`, graphFile);
      await reloaded;
      const answer = (await client.runs.wait(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: version }] },
      })) as Answer;
      assert.equal(answer.messages.at(-1)!.content, `${version}: ${version}`);
    }
  });
});

it('finishes a run in flight on the old code, and reloads a local module the graph imports', async () => {
  const dir = project({
    'graphs/graph.ts': heldGraphSource('g1'),
    'graphs/prompts.ts': "export const PREFIX = 'p1';\n",
  });
  const ask = (content: string) => ({ input: { messages: [{ role: 'user', content }] } });
  await withWatchingServer(dir, async (client, nextLine) => {
    const thread = await client.threads.create();
    const first = (await client.runs.wait(thread.thread_id, 'agent', ask('one'))) as Answer;
    assert.equal(first.messages.at(-1)!.content, 'g1/p1: one');

    // A run held in its node (on g1) while the graph file changes to g2 and reloads.
    const release = join(dir, 'release');
    const held = await client.threads.create();
    const run = await client.runs.create(held.thread_id, 'agent', ask(`hold:${release}`));
    for (let i = 0; i < 400 && !existsSync(`${release}.reached`); i++) await sleep(25);
    assert.ok(existsSync(`${release}.reached`), 'the held run reached its node');
    const reloaded = nextLine(/"msg":"Graphs reloaded\."/);
    writeFileSync(join(dir, 'graphs/graph.ts'), heldGraphSource('g2'));
    await reloaded;
    assert.equal((await client.runs.get(held.thread_id, run.run_id)).status, 'running');
    writeFileSync(release, '');
    const finished = (await client.runs.join(held.thread_id, run.run_id)) as unknown as Answer;
    assert.equal(finished.messages.at(-1)!.content, `g1/p1: hold:${release}`);
    assert.equal((await client.runs.get(held.thread_id, run.run_id)).status, 'success');
    const second = (await client.runs.wait(thread.thread_id, 'agent', ask('two'))) as Answer;
    assert.equal(second.messages.at(-1)!.content, 'g2/p1: two');

    // Editing only the module the graph imports (not named in langgraph.json) reloads it too.
    const again = nextLine(/"msg":"Graphs reloaded\."/);
    writeFileSync(join(dir, 'graphs/prompts.ts'), "export const PREFIX = 'p2';\n");
    await again;
    const third = (await client.runs.wait(thread.thread_id, 'agent', ask('three'))) as Answer;
    assert.equal(third.messages.at(-1)!.content, 'g2/p2: three');
  });
});
