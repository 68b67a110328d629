// `tracepipe init` as a new user runs it from a clone: a project per template in a temporary folder,
// whose dependency on tracepipe is the tarball init packed into its vendor/ (tracepipe is not
// published yet), installed from npm's cache (`--offline`, with this repository's lockfile versions
// — the approach of test/package.test.ts), its own `npm test`, then `npm start` and its graph run
// through the LangGraph SDK, with the trace explorer beside it. Skipped, with the reason, when npm's
// cache cannot serve the install.

import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { eventually } from '../src/testkit/eventually.ts';
import { tempDir } from '../src/testkit/files.ts';
import { writeAppLock } from '../scripts/app-lock.mjs';
import { runGroup, spawnGroup } from '../src/testkit/processes.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin/tracepipe.js');
const work = tempDir('tracepipe-init-');
let skipReason: string | undefined;

// npm and init run in process groups of their own (src/testkit/processes.ts), awaited rather than
// run synchronously: the project's `npm test` starts node's test runner, which starts a process per
// file, and init runs `npm pack`, which builds; a timeout of the test kills all of it.
async function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env, loglevel = 'error') {
  const result = await runGroup('npm', [...args, '--no-audit', '--no-fund', `--loglevel=${loglevel}`], { cwd, env });
  return { ok: result.code === 0, output: `${result.stdout}${result.stderr}` };
}

function init(dir: string, template: string, ...options: string[]) {
  return runGroup(process.execPath, [bin, 'init', dir, '--template', template, ...options], { cwd: work });
}

/**
 * Points the project's `tracepipe` dependency at the tarball and writes the lockfile that lets
 * `npm ci --offline` install it: this repository's production entries plus the tarball's.
 */
interface Manifest {
  name: string;
  version?: string;
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
  engines?: Record<string, string>;
  allowScripts?: Record<string, boolean>;
}
interface Lockfile {
  packages: Record<string, { dependencies?: Record<string, string> } & Record<string, unknown>>;
}

function lockProject(project: string, tarball: string): void {
  const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as Manifest;
  writeAppLock(project, [tarball], manifest.name); // writes package.json too; put the project's back
  const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as Lockfile;
  manifest.dependencies.tracepipe = lock.packages['']!.dependencies!.tracepipe!;
  lock.packages[''] = {
    name: manifest.name,
    version: manifest.version,
    dependencies: manifest.dependencies,
    devDependencies: manifest.devDependencies,
    engines: manifest.engines,
  };
  writeFileSync(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(project, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
}

let tarball = '';
/** What the project's `npm ci` wrote, its warnings included. */
let installOutput = '';

before(async () => {
  const created = await init('chat-agent', 'chat');
  assert.equal(created.code, 0, created.stderr);
  const project = join(work, 'chat-agent');
  // From a clone, the project depends on a tarball of it, packed into its vendor/.
  const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as Manifest;
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest).version;
  assert.equal(manifest.dependencies.tracepipe, `file:vendor/tracepipe-${version}.tgz`);
  tarball = join(project, `vendor/tracepipe-${version}.tgz`);
  assert.ok(existsSync(tarball));
  assert.match(readFileSync(join(project, 'README.md'), 'utf8'), /not published on npm yet.*\n?.*packed it/);
  lockProject(project, tarball);
  assert.equal(
    (JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as Manifest).dependencies.tracepipe,
    manifest.dependencies.tracepipe,
  );
  // Install scripts stay off: the native addons were compiled for this machine when the repository
  // was installed, and are copied below.
  const install = await npm(['ci', '--offline', '--ignore-scripts'], project, process.env, 'warn');
  installOutput = install.output;
  if (!install.ok) {
    if (/ENOTCACHED|only-if-cached/.test(install.output)) {
      const missing = /\S*(?:ENOTCACHED|only-if-cached)[^\n]*/.exec(install.output)?.[0];
      skipReason = `npm’s cache cannot serve an offline install of the dependencies (run \`npm ci\` first): ${missing}`;
      return;
    }
    assert.fail(install.output);
  }
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }>;
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!entry.hasInstallScript || entry.dev || !existsSync(join(root, path, 'build'))) continue;
    cpSync(join(root, path, 'build'), join(project, path, 'build'), { recursive: true });
  }
  // npm trusts its record of the install (node_modules/.package-lock.json) only while it is newer
  // than every package folder; the copies above changed some, and npm would read the tree from disk
  // instead, where a tarball dependency loses the spec that allowScripts names it by.
  const now = new Date();
  utimesSync(join(project, 'node_modules/.package-lock.json'), now, now);
});

/** `npm start` in `project`; resolves with the agent API's URL from the start's log line. */
function npmStart(project: string) {
  const server = spawnGroup('npm', ['start'], {
    cwd: project,
    env: { ...process.env, AGENT_API_PORT: '0', TRACE_EXPLORER_PORT: '0', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ready = new Promise<{ url: string; explorer: string }>((resolve, reject) => {
    createInterface({ input: server.child.stdout }).on('line', (line) => {
      output += `${line}\n`;
      if (!line.includes('"msg":"Listening."')) return;
      const { endpoints } = JSON.parse(line) as { endpoints: { url: string; purpose: string }[] };
      const url = (purpose: string) => endpoints.find((endpoint) => endpoint.purpose.startsWith(purpose))?.url ?? '';
      resolve({ url: url('Agent API').replace(/\/$/, ''), explorer: url('Trace explorer') });
    });
    void server.exited.then((code) => reject(new Error(`exited with ${code} before it was ready:\n${output}`)));
  });
  // npm runs tracepipe in a child: stop() signals the whole group.
  return { ready, stop: () => server.stop(), output: () => output };
}

/** A second project of another template, sharing the first one's installed node_modules. */
async function sibling(template: string): Promise<string> {
  const created = await init(`${template}-agent`, template, '--tracepipe', `file:${tarball}`);
  assert.equal(created.code, 0, created.stderr);
  const project = join(work, `${template}-agent`);
  symlinkSync(join(work, 'chat-agent/node_modules'), join(project, 'node_modules'), 'dir');
  return project;
}

/**
 * Runs a scaffolded project's own `npm test`, then `npm start`, and hands `check` an SDK client on
 * the running server (and its address); the server is stopped afterwards.
 */
async function withProjectServer(
  project: string,
  check: (client: Client, url: string, explorer: string) => Promise<void>,
): Promise<void> {
  const tested = await npm(['test'], project, { ...process.env, NODE_TEST_CONTEXT: '' });
  assert.ok(tested.ok, tested.output);
  const server = npmStart(project);
  try {
    const { url, explorer } = await server.ready;
    await check(new Client({ apiUrl: url }), url, explorer);
  } finally {
    await server.stop();
  }
}

describe('tracepipe init', () => {
  it('refuses a folder that is not empty, naming what is there', async () => {
    const dir = join(work, 'taken');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const result = await init(dir, 'chat');
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^tracepipe: .*taken is not empty \(notes\.txt\); tracepipe init writes/);
    assert.deepEqual(readdirSync(dir), ['notes.txt']);
  });

  it('installs without a warning: no engine that Node 20 lacks, no install script left unreviewed', async (t) => {
    if (skipReason) return t.skip(skipReason);
    assert.doesNotMatch(installOutput, /npm warn/i);
    // The install ran without scripts (the addons are copied); the project's allowScripts must
    // still cover every dependency that has one, or a plain `npm install` warns of each.
    const project = join(work, 'chat-agent');
    const pending = await npm(['install-scripts', 'ls'], project);
    assert.ok(pending.ok, pending.output);
    const { allowScripts } = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as Manifest;
    assert.match(pending.output, /^No packages with unreviewed install scripts\.$/m, JSON.stringify(allowScripts));
  });

  it('chat: npm test passes, npm start serves the graph, the SDK talks to it with the assistant’s context', async (t) => {
    if (skipReason) return t.skip(skipReason);
    await withProjectServer(join(work, 'chat-agent'), async (client, url, explorer) => {
      const assistant = await client.assistants.create({ graphId: 'agent', context: { system_prompt: 'Be brief.' } });
      const thread = await client.threads.create();
      const state = (await client.runs.wait(thread.thread_id, assistant.assistant_id, {
        input: { messages: [{ role: 'user', content: 'hello' }] },
      })) as { messages: { content: string }[] };
      assert.equal(state.messages.at(-1)!.content, '(Be brief.) You said: hello');
      const ui = await fetch(`${url}/ui/`);
      assert.equal(ui.status, 200);
      // The project's trace explorer shows the run's trace.
      assert.match(explorer, /\/ui\/traces$/);
      const api = explorer.replace(/\/ui\/traces$/, '/api/traces');
      await eventually(async () => {
        const { traces } = (await (await fetch(api)).json()) as { traces: { status: string }[] };
        assert.deepEqual(
          traces.map((trace) => trace.status),
          ['success'],
        );
      });
    });
  });

  it('tools: the tool-calling template calls its tool through the server', async (t) => {
    if (skipReason) return t.skip(skipReason);
    await withProjectServer(await sibling('tools'), async (client) => {
      const thread = await client.threads.create();
      const state = (await client.runs.wait(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: 'What is 17 * 23?' }] },
      })) as { messages: { content: string; type: string }[] };
      assert.deepEqual(
        state.messages.map((message) => message.type),
        ['human', 'ai', 'tool', 'ai'],
      );
      assert.equal(state.messages.at(-1)!.content, 'The tool says: 391');
    });
  });

  it('interrupt: the human-in-the-loop template pauses and resumes through the server', async (t) => {
    if (skipReason) return t.skip(skipReason);
    await withProjectServer(await sibling('interrupt'), async (client) => {
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'hello' }] } });
      assert.equal((await client.threads.get(thread.thread_id)).status, 'interrupted');
      const state = (await client.runs.wait(thread.thread_id, 'agent', {
        command: { resume: 'approve' },
      })) as { messages: { content: string }[] };
      assert.equal(state.messages.at(-1)!.content, 'Draft answer to: hello');
    });
  });
});
