// Every shell command the README and docs/ show is accounted for here: the tracepipe commands are
// run (through `validate`, which checks a command line fully without listening on the fixed ports
// the examples name), and each other command names the test or the CI step that covers it. A new
// command in the docs fails this file until it is run here or its cover is named, so an example
// that stopped working (a `--set` that the config refuses, a renamed key) is found by the suite,
// not by a reader.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { spawnGroup, stopAllGroups } from '../src/testkit/processes.ts';

const ROOT = join(import.meta.dirname, '..');
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

interface Command {
  readonly document: string;
  readonly text: string;
}

/** The commands of a document's sh/bash blocks: continuations joined, comments dropped, `&&` chains split. */
function commandsOf(document: string): Command[] {
  const markdown = readFileSync(join(ROOT, document), 'utf8');
  const commands: Command[] = [];
  for (const block of markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)) {
    const lines = block[1]!.replace(/\\\n\s*/g, ' ').split('\n');
    for (const line of lines) {
      const command = line.replace(/\s+#\s.*$/, '').trim();
      if (command === '') continue;
      for (const step of command.split(/\s+&&\s+/)) commands.push({ document, text: step.trim() });
    }
  }
  return commands;
}

/** What covers a command that this file does not run; the first matching pattern wins. */
const COVERED_ELSEWHERE: readonly [RegExp, string][] = [
  [/^git clone /, 'the checkout itself: CI starts from a clean clone'],
  [/^cd /, 'a change of directory within a chain'],
  [
    /^npm (ci|install)( |$)/,
    'an install from the registry: .ci/run runs `npm ci`; test/init.test.ts installs a new project offline',
  ],
  [/^npx tracepipe init /, 'test/init.test.ts runs `init` from this checkout and installs its project'],
  [/^npm start$/, "test/init.test.ts starts the new project's server"],
  [/^npm test$/, 'the suite itself (.ci/run)'],
  [/^node scripts\/run-tests\.mjs /, 'the suite itself, on some files'],
  [/^npm run (typecheck|lint|format|build)$/, '.ci/run (typecheck, lint, format:check; the build runs in npm ci)'],
  [/^npm run api-report$/, 'test/api-report.test.ts checks that api/tracepipe.api.md is current'],
  [
    /^node --import tsx scripts\/config-docs\.ts$/,
    'test/config-docs.test.ts checks that the generated tables are current',
  ],
  [/^docker (build|run) /, 'test/container/ builds the image and runs it in each of these ways'],
  [
    /^npm install tracepipe /,
    'a plugin install from the registry: test/package.test.ts installs the packed package and the example plugin',
  ],
];

/** `npx tracepipe …` with its environment assignments, or undefined for another command. */
function tracepipeCommand(text: string): { env: Record<string, string>; args: string[] } | undefined {
  // `<key>`, `<backend key>`: a value the reader fills in.
  const match = /^((?:[A-Z_]+=\S+\s+)*)npx tracepipe\s+(.*)$/.exec(text.replace(/<[^>]*>/g, 'placeholder'));
  if (!match) return undefined;
  const env: Record<string, string> = {};
  for (const assignment of match[1]!.trim().split(/\s+/).filter(Boolean)) {
    const [name, value] = assignment.split(/=(.*)/, 2) as [string, string];
    env[name] = value;
  }
  return { env, args: shellWords(match[2]!) };
}

/** Splits words as a POSIX shell does for these examples: blanks, single and double quotes. */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === "'" || char === '"') {
      const end = text.indexOf(char, i + 1);
      assert.ok(end > i, `an unclosed quote in: ${text}`);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The same command line checked by `tracepipe validate` (a run's arguments, or a validate's own). */
function asValidate(args: readonly string[]): string[] {
  return args[0] === 'validate'
    ? [...args]
    : args[0] === 'run'
      ? ['validate', ...args.slice(1)]
      : ['validate', ...args];
}

async function runTracepipe(args: readonly string[], env: Record<string, string>) {
  const run = spawnGroup(process.execPath, [join(ROOT, 'bin/tracepipe.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  run.child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  run.child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { code: await run.exited, output };
}

describe('the commands in the README and docs', () => {
  after(() => stopAllGroups('SIGKILL'));

  const commands = DOCUMENTS.flatMap(commandsOf);

  it('finds the shell blocks (the extraction itself works)', () => {
    assert.ok(commands.some((command) => command.document === 'README.md' && /--set /.test(command.text)));
    assert.ok(commands.length >= 15, `found ${commands.length} commands`);
  });

  it('runs every tracepipe command line, and names what covers each other command', async () => {
    const unaccounted: string[] = [];
    const failed: string[] = [];
    for (const command of commands) {
      const tracepipe = tracepipeCommand(command.text);
      if (tracepipe && tracepipe.args[0] !== 'init') {
        const { code, output } = await runTracepipe(asValidate(tracepipe.args), tracepipe.env);
        if (code !== 0) failed.push(`${command.document}: ${command.text}\n${output}`);
        continue;
      }
      if (!COVERED_ELSEWHERE.some(([pattern]) => pattern.test(command.text))) {
        unaccounted.push(`${command.document}: ${command.text}`);
      }
    }
    assert.deepEqual(failed, [], 'tracepipe commands of the docs that the CLI refuses');
    assert.deepEqual(unaccounted, [], 'commands neither run here nor covered by a named test or CI step');
  });

  it('would catch the example that once failed: inline graphs without unsetting langgraph_config', async () => {
    const { code, output } = await runTracepipe(
      [
        'validate',
        '--config',
        'configs/local.yaml',
        '--set',
        'receivers.agent_api.graphs={chat: ../examples/graphs/chat.ts:graph}',
      ],
      {},
    );
    assert.notEqual(code, 0);
    assert.match(output, /graphs and langgraph_config are both set/);
  });
});
