// `tracepipe init [dir]`: a new agent project in an empty folder — a LangGraph.js graph in
// TypeScript that runs offline (the example graphs' deterministic local model) until an
// OpenAI-compatible key is set, its `langgraph.json`, a tracepipe config, a package.json whose
// scripts start, watch, validate and test it, a test, and a README. The graphs are copied from
// `examples/graphs/` (shipped in the package), so a template is always a graph the repository tests.

import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TEMPLATES = ['chat', 'tools', 'interrupt'] as const;
export type TemplateName = (typeof TEMPLATES)[number];

interface Template {
  /** What `--help` and the README say it is. */
  readonly title: string;
  /** Files of `examples/graphs/` copied into `src/`; the first is the graph. */
  readonly files: readonly string[];
  /** The project's test of its graph, run directly (no server). */
  readonly test: string;
  /** A README section: how to talk to the graph with the SDK. */
  readonly usage: string;
}

/** Named apart from the README's import line, which the build would read as tracepipe's own. */
const SDK_PACKAGE = '@langchain/langgraph-sdk';

const MODEL_FILES = ['models/local-chat-model.ts', 'models/choose-model.ts'];

const TEMPLATE_SPECS: Record<TemplateName, Template> = {
  chat: {
    title: 'a chat agent whose model and system prompt come from the assistant’s context',
    files: ['chat.ts', ...MODEL_FILES],
    test: `import assert from 'node:assert/strict';
import { it } from 'node:test';
import { HumanMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { graph } from '../src/chat.ts';

it('answers offline, with the system prompt from the context', async () => {
  const agent = graph.withConfig({});
  agent.checkpointer = new MemorySaver();
  const config = { configurable: { thread_id: 't1' }, context: { system_prompt: 'Be brief.' } };
  const state = await agent.invoke({ messages: [new HumanMessage('hello')] }, config);
  assert.equal(state.messages.at(-1)?.content, '(Be brief.) You said: hello');
});
`,
    usage: `const assistant = await client.assistants.create({
  graphId: 'agent',
  context: { system_prompt: 'Answer like a pirate.' }, // model_name too, once OPENAI_API_KEY is set
});
const thread = await client.threads.create();
const state = await client.runs.wait(thread.thread_id, assistant.assistant_id, {
  input: { messages: [{ role: 'user', content: 'hello' }] },
});
console.log(state); // offline: "(Answer like a pirate.) You said: hello"`,
  },
  tools: {
    title: 'a tool-calling agent: the model asks for a tool, a ToolNode runs it, the model answers',
    files: ['tools.ts', 'chat.ts', ...MODEL_FILES],
    test: `import assert from 'node:assert/strict';
import { it } from 'node:test';
import { HumanMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { graph } from '../src/tools.ts';

it('calls the tool of the question’s operator and answers from its result', async () => {
  const agent = graph.withConfig({});
  agent.checkpointer = new MemorySaver();
  const ask = async (question: string, thread: string) =>
    (await agent.invoke({ messages: [new HumanMessage(question)] }, { configurable: { thread_id: thread } }))
      .messages.at(-1)?.content;
  assert.equal(await ask('What is 2 plus 3?', 't1'), 'The tool says: 5');
  assert.equal(await ask('What is 17 * 23?', 't2'), 'The tool says: 391');
});
`,
    usage: `const thread = await client.threads.create();
const state = await client.runs.wait(thread.thread_id, 'agent', {
  input: { messages: [{ role: 'user', content: 'What is 17 * 23?' }] },
});
console.log(state); // offline: the multiply tool runs, then "The tool says: 391" (add for "2 plus 3")`,
  },
  interrupt: {
    title: 'a human-in-the-loop graph: it drafts an answer and waits for a person to approve or replace it',
    files: ['interrupt.ts', 'models/local-chat-model.ts'],
    test: `import assert from 'node:assert/strict';
import { it } from 'node:test';
import { HumanMessage } from '@langchain/core/messages';
import { Command, MemorySaver } from '@langchain/langgraph';
import { graph } from '../src/interrupt.ts';

it('pauses for review and finishes with the approved draft', async () => {
  const agent = graph.withConfig({});
  agent.checkpointer = new MemorySaver();
  const config = { configurable: { thread_id: 't1' } };
  await agent.invoke({ messages: [new HumanMessage('hello')] }, config);
  assert.deepEqual((await agent.getState(config)).next, ['review']);
  const state = await agent.invoke(new Command({ resume: 'approve' }), config);
  assert.equal(state.messages.at(-1)?.content, 'Draft answer to: hello');
});
`,
    usage: `const thread = await client.threads.create();
await client.runs.wait(thread.thread_id, 'agent', {
  input: { messages: [{ role: 'user', content: 'hello' }] },
}); // the thread is now "interrupted", waiting in the review node
const state = await client.runs.wait(thread.thread_id, 'agent', {
  command: { resume: 'approve' }, // or a replacement text
});
console.log(state); // "Draft answer to: hello"`,
  },
};

/** The fields of tracepipe's package.json that init reads. */
interface PackageManifest {
  name?: string;
  version: string;
  dependencies: Record<string, string>;
  /** Versions of transitive dependencies that support Node 20; npm applies only the project's own. */
  overrides?: Record<string, unknown>;
  /**
   * The dependencies whose install scripts npm runs (the native addons, esbuild's binary check) and
   * those it skips without asking; npm reads only the project's own.
   */
  allowScripts?: Record<string, boolean>;
}

/** The installed tracepipe package (or checkout): the directory of its package.json. */
function packageRoot(): { dir: string; manifest: PackageManifest } {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const path = join(dir, 'package.json');
    if (existsSync(path)) {
      const manifest = JSON.parse(readFileSync(path, 'utf8')) as PackageManifest;
      if (manifest.name === 'tracepipe') return { dir, manifest };
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the tracepipe package, whose example graphs the templates are');
    dir = parent;
  }
}

/** A folder name as an npm package name. */
function packageName(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|-+$/g, '');
  return name || 'my-agent';
}

export interface InitResult {
  readonly dir: string;
  readonly files: readonly string[];
}

export interface InitOptions {
  /**
   * The project's dependency on tracepipe, as package.json writes it. Default: from a checkout of
   * tracepipe (not an installed package), a tarball packed from it into the project's `vendor/`;
   * from an installed package, `^<its version>` from the registry.
   */
  readonly tracepipe?: string;
}

/** Where the project's tracepipe comes from, and what its README says about it. */
interface TracepipeSource {
  readonly dependency: string;
  /** The packed tarball, relative to the project (from a checkout), if any. */
  readonly tarball?: string;
}

/**
 * tracepipe is not published on npm yet, so a project made from a checkout cannot ask the registry
 * for it: the checkout is packed (`npm pack`, as a release would be) into the project's `vendor/`,
 * and the project depends on that file. A tarball travels with the project (another machine, a
 * container, CI) where a `file:` link to the checkout would not, and it installs tracepipe's
 * dependencies into the project once, beside the graph's, so that both use the same LangGraph.
 */
function tracepipeSource(root: string, version: string, target: string, options: InitOptions): TracepipeSource {
  if (options.tracepipe) return { dependency: options.tracepipe };
  if (root.split(sep).includes('node_modules')) return { dependency: `^${version}` };
  const vendor = join(target, 'vendor');
  mkdirSync(vendor, { recursive: true });
  const packed = spawnSync('npm', ['pack', '--pack-destination', vendor, '--silent'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'error' },
  });
  const file = packed.stdout?.trim().split('\n').at(-1);
  if (packed.status !== 0 || !file || !existsSync(join(vendor, file))) {
    throw new Error(
      `could not pack this tracepipe checkout for the project (npm pack in ${root}): ` +
        `${(packed.stderr || packed.error?.message || '').trim().split('\n').at(-1) ?? ''}`,
    );
  }
  return { dependency: `file:vendor/${file}`, tarball: `vendor/${file}` };
}

/**
 * The install scripts the project's npm runs: tracepipe's dependencies' as tracepipe lists them (npm
 * reads only the project's list). A tarball of tracepipe is keyed by its spec, as npm matches a
 * dependency that is not from a registry: its `prepare` builds dist/ in a checkout, and a packed
 * tracepipe brings dist/ built.
 */
function projectAllowScripts(manifest: PackageManifest, source: TracepipeSource): Record<string, boolean> {
  const packed = /^file:.*\.tgz$/.test(source.dependency);
  return { ...manifest.allowScripts, ...(packed ? { [source.dependency]: false } : {}) };
}

/** Writes a new project into `dir` (created if missing); refuses a folder that holds anything. */
export function initProject(dir: string, template: TemplateName = 'chat', options: InitOptions = {}): InitResult {
  const spec = TEMPLATE_SPECS[template];
  if (!spec) throw new Error(`unknown template "${template}" (known: ${TEMPLATES.join(', ')})`);
  const target = resolve(dir);
  if (existsSync(target)) {
    if (!statSync(target).isDirectory()) throw new Error(`${dir} exists and is not a folder`);
    const entries = readdirSync(target);
    if (entries.length > 0) {
      throw new Error(
        `${dir} is not empty (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}); ` +
          'tracepipe init writes a new project into an empty or new folder, e.g. `tracepipe init my-agent`',
      );
    }
  }
  const { dir: root, manifest } = packageRoot();
  const examples = join(root, 'examples/graphs');
  const written: string[] = [];
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(target, path)), { recursive: true });
    writeFileSync(join(target, path), text);
    written.push(path);
  };
  for (const file of spec.files) {
    mkdirSync(dirname(join(target, 'src', file)), { recursive: true });
    copyFileSync(join(examples, file), join(target, 'src', file));
    written.push(`src/${file}`);
  }
  const graphFile = spec.files[0]!;
  const dependencies = manifest.dependencies;
  const name = packageName(target);
  const source = tracepipeSource(root, manifest.version, target, options);
  if (source.tarball) written.push(source.tarball);
  write(
    'package.json',
    `${JSON.stringify(
      {
        name,
        version: '0.1.0',
        private: true,
        type: 'module',
        description: `An agent served by tracepipe: ${spec.title}.`,
        scripts: {
          start: 'tracepipe --config tracepipe.yaml',
          dev: 'tracepipe --config tracepipe.yaml --watch',
          validate: 'tracepipe validate tracepipe.yaml',
          test: 'node --import tsx --test test/*.test.ts',
        },
        engines: { node: '>=20.11' },
        dependencies: {
          tracepipe: source.dependency,
          '@langchain/core': dependencies['@langchain/core'],
          '@langchain/langgraph': dependencies['@langchain/langgraph'],
          '@langchain/openai': dependencies['@langchain/openai'],
          zod: dependencies.zod,
        },
        devDependencies: { tsx: dependencies.tsx },
        ...(manifest.overrides ? { overrides: manifest.overrides } : {}),
        allowScripts: projectAllowScripts(manifest, source),
      },
      null,
      2,
    )}\n`,
  );
  write(
    'langgraph.json',
    `${JSON.stringify({ node_version: '20', dependencies: ['.'], graphs: { agent: `./src/${graphFile}:graph` } }, null, 2)}\n`,
  );
  write('tracepipe.yaml', projectConfig(name));
  write(`test/${graphFile.replace(/\.ts$/, '.test.ts')}`, spec.test);
  write(
    'tsconfig.json',
    `${JSON.stringify(
      {
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          allowImportingTsExtensions: true,
          noEmit: true,
          strict: true,
          skipLibCheck: true,
        },
        include: ['src', 'test'],
      },
      null,
      2,
    )}\n`,
  );
  write('.gitignore', 'node_modules/\ndata/\n');
  write('README.md', projectReadme(name, template, spec, graphFile, source));
  const shown = relative(process.cwd(), target);
  return { dir: shown === '' ? '.' : shown.startsWith('..') ? target : shown, files: written };
}

function projectConfig(name: string): string {
  return `# The agent server for ${name}: serves the graphs of langgraph.json (the Agent Deployment API the
# LangGraph SDKs speak, and a web UI at /ui/), keeps assistants, threads and runs under DATA_DIR,
# and traces every run into a local trace store beside them, which the trace explorer shows.
#
#   npm start                    # tracepipe --config tracepipe.yaml
#   npm run dev                  # the same, reloading the graphs when their files change
#   AGENT_API_PORT=9000 npm start
receivers:
  agent_api:
    host: \${env:AGENT_API_HOST:-127.0.0.1}
    port: \${env:AGENT_API_PORT:-8123}
    langgraph_config: ./langgraph.json
    data_dir: \${env:DATA_DIR:-./data}
    # One key or a comma-separated list that clients send as X-Api-Key; empty: no key is needed,
    # which is fine while the server listens on 127.0.0.1 only.
    auth:
      api_keys: "\${env:AGENT_API_KEY:-}"
    tracing:
      enabled: true
      service_name: ${name}

processors:
  genai: {}
  batch:
    flush_interval_ms: 1000

exporters:
  local:
    path: \${env:DATA_DIR:-./data}/traces.db

extensions:
  # The trace explorer: every run's trace (a live list, each trace's waterfall, its messages), read
  # from the trace store above; the web UI's "View trace" links open it.
  trace_explorer:
    host: \${env:TRACE_EXPLORER_HOST:-127.0.0.1}
    port: \${env:TRACE_EXPLORER_PORT:-8124}
    path: \${env:DATA_DIR:-./data}/traces.db

service:
  extensions: [trace_explorer]
  telemetry:
    logs:
      level: \${env:LOG_LEVEL:-info}
  pipelines:
    traces:
      receivers: [agent_api]
      processors: [genai, batch]
      exporters: [local]
`;
}

function projectReadme(
  name: string,
  template: TemplateName,
  spec: Template,
  graphFile: string,
  source: TracepipeSource,
): string {
  const install = source.tarball
    ? `
tracepipe is not published on npm yet: \`tracepipe init\`, run from a clone of tracepipe, packed it
into \`${source.tarball}\`, and \`package.json\` depends on that file (\`"tracepipe": "${source.dependency}"\`),
so \`npm install\` needs no registry for it. Keep the file with the project (commit it). The install
compiles tracepipe's native addons (\`better-sqlite3\`, \`zstd-napi\`) from source when no prebuilt
binary can be downloaded for this platform: that takes one to four minutes, once (\`allowScripts\` in
\`package.json\` names the install scripts npm runs). Once tracepipe is published,
\`npm install tracepipe@latest\` replaces the file.
`
    : '';
  return `# ${name}

An agent served by tracepipe: ${spec.title}
(created with \`tracepipe init --template ${template}\`).

\`\`\`sh
npm install
npm start        # the agent server: API on http://127.0.0.1:8123, web UI on http://127.0.0.1:8123/ui/
npm run dev      # the same, reloading the graph when a file under src/ changes
npm test         # runs the graph directly, offline
\`\`\`
${install}
The start prints where everything is: the API (the LangGraph SDK's \`apiUrl\`), the web UI where you
manage assistants and try the graph, the API reference (\`/docs\`), the trace explorer
(http://127.0.0.1:8124/ui/traces: every run's trace, its waterfall and messages), the data
directory and the graphs.

## The graph

\`src/${graphFile}\` is the graph, named \`agent\` in \`langgraph.json\`. It runs offline on a
deterministic local model (\`src/models/local-chat-model.ts\`) so that everything works without a
key; set \`OPENAI_API_KEY\` (and optionally \`OPENAI_MODEL\`, \`OPENAI_BASE_URL\` for any
OpenAI-compatible endpoint) to talk to a real model. The model and the system prompt are read from
the assistant's \`context\` (\`model_name\`, \`system_prompt\`) where the graph uses a model.

## Talking to it

\`\`\`ts
import { Client } from ${JSON.stringify(SDK_PACKAGE)}; // npm install ${SDK_PACKAGE}

const client = new Client({ apiUrl: 'http://127.0.0.1:8123' });
${spec.usage}
\`\`\`

## Configuration

\`tracepipe.yaml\` is the server's config; its values come from environment variables with
defaults: \`AGENT_API_PORT\` (8123), \`AGENT_API_HOST\` (127.0.0.1), \`AGENT_API_KEY\` (none),
\`TRACE_EXPLORER_PORT\` (8124), \`TRACE_EXPLORER_HOST\` (127.0.0.1), \`DATA_DIR\` (./data),
\`LOG_LEVEL\` (info). \`npm run validate\` checks it without starting anything.
`;
}
